"""WORKDIR, COPY and ADD destinations expand ENV/ARG values as the builder does (modelled on
autogen's python/packages/autogen-studio/Dockerfile, where AG212 once named
`/code/$HOME/app/$HOME/app`)."""

from __future__ import annotations

from agentguard.inspect.project.dockerfile_facts import build_facts

AUTOGEN_STUDIO = """FROM python:3.10-slim
WORKDIR /code

RUN pip install -U gunicorn autogenstudio

RUN useradd -m -u 1000 user
USER user
ENV HOME=/home/user \\
    PATH=/home/user/.local/bin:$PATH \\
    AUTOGENSTUDIO_APPDIR=/home/user/app

WORKDIR $HOME/app

COPY --chown=user . $HOME/app
"""


def test_env_values_are_expanded_in_workdir_and_copy() -> None:
    (stage,) = build_facts("Dockerfile", AUTOGEN_STUDIO).stages
    assert stage.workdir == "/home/user/app"
    (copy,) = stage.copies
    assert copy.destination == "$HOME/app"
    assert copy.destination_abs == "/home/user/app"


def test_defaults_args_and_unknown_variables() -> None:
    text = """FROM python:3.12-slim
ARG APP=/srv/agent
WORKDIR ${APP}
COPY a.py ${SUB:-code}/
WORKDIR ${UNSET_ROOT}/data
COPY b.py .
"""
    (stage,) = build_facts("Dockerfile", text).stages
    first, second = stage.copies
    assert first.destination_abs == "/srv/agent/code"
    # an unknown variable is not joined to the working directory: it may hold any path
    assert stage.workdir == "${UNSET_ROOT}/data"
    assert second.destination_abs == "${UNSET_ROOT}/data"

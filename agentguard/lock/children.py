"""The resolvers this process started and has not finished with (`uv pip compile`, `uv lock`
on a copy). A run that ends early (Ctrl-C, SIGTERM, a crash) stops them before the process
exits: no resolver left running, no scratch folder left behind. See agentguard.__main__.

And the environment they run in: a scratch folder or a copy of the project, never the
folder agentguard was started in. A path the user gave in the environment relative to that
folder would name a place inside the scratch folder (a relative ``UV_CACHE_DIR`` put uv's
cache in the copy: cold on every run, and deleted with it, file by file), so such paths are
made absolute against the folder agentguard was started in before a resolver runs elsewhere.
"""

from __future__ import annotations

import contextlib
import os
from typing import Protocol

# The variables that name a path, of uv and of pip (the pip-tools backend).
PATH_VARIABLES = ("UV_CACHE_DIR", "UV_CONFIG_FILE", "PIP_CACHE_DIR")

# `python -m NAME` puts the folder it starts in first on the import path: started in a
# checkout, a `NAME/` folder there (`piptools/__main__.py`) would run instead of the
# installed module, with the runner's tokens. This opens with the path's first entry gone
# (``sys`` is built in: nothing is imported from the folder before it), then runs the
# module as ``-m`` would (``sys.argv[0]`` its file, the rest its arguments).
_RUN_MODULE = (
    "import sys; del sys.path[0]; sys.argv[:] = sys.argv[1:]; import runpy; "
    "runpy.run_module(sys.argv[0], run_name='__main__', alter_sys=True)"
)


def own_module(python: str, module: str, *args: str) -> list[str]:
    """The command that runs an installed ``module`` under ``python``, as ``python -m
    module args`` does, but never a module of the folder the command is started in."""
    return [python, "-c", _RUN_MODULE, module, *args]


def resolver_env(environ: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of the environment (``os.environ`` by default) for a resolver run elsewhere."""
    env = dict(os.environ if environ is None else environ)
    started_in: str | None = None
    for name in PATH_VARIABLES:
        value = env.get(name)
        if value and not os.path.isabs(value):
            started_in = started_in or os.getcwd()
            env[name] = os.path.join(started_in, value)
    return env


class Stoppable(Protocol):
    def cancel(self) -> None: ...


_live: set[Stoppable] = set()


def started(run: Stoppable) -> None:
    _live.add(run)


def finished(run: Stoppable) -> None:
    _live.discard(run)


def stop_all() -> None:
    """Stop every resolver still running (kill it, remove its scratch folder)."""
    for run in list(_live):
        with contextlib.suppress(Exception):
            run.cancel()

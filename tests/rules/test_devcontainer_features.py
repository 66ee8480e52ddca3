"""Devcontainer features and lifecycle commands (modelled on microsoft/autogen's
.devcontainer): the commands, in every form, and the scripts they run are read like a
Dockerfile's RUN; a socket reached twice is one finding."""

from __future__ import annotations

from pathlib import Path

from agentguard.engine.project import scan_container_files
from agentguard.inspect.facts import ProjectFile
from tests.inspect.containers.support import FIXTURES, scan

DIND = FIXTURES / "AG403/fail/devcontainer-docker-in-docker"
BOTH = FIXTURES / "AG203/fail/devcontainer-feature-and-compose"


def _rows(case: Path) -> list[tuple[str, str, str | None, int | None]]:
    findings, _ = scan(case)
    return sorted(
        (f.rule_id, f.severity.value, f.locations[0].path, f.locations[0].line) for f in findings
    )


def test_an_array_lifecycle_command_is_read_like_a_run_line() -> None:
    rows = _rows(DIND)
    assert ("AG120", "medium", ".devcontainer/devcontainer.json", 9) in rows  # pip install -e .
    assert ("AG130", "medium", ".devcontainer/devcontainer.json", 9) in rows  # npm i -g claude-code


def test_one_socket_through_a_feature_and_its_compose_file_is_one_finding() -> None:
    findings, sources = scan(BOTH)
    sockets = [f for f in findings if f.rule_id == "AG203"]
    assert [[(loc.path, loc.line) for loc in f.locations] for f in sockets] == [
        [
            (".devcontainer/docker-compose.yml", 7),
            (".devcontainer/devcontainer.json", 9),
            (".devcontainer/startup.sh", 5),  # the script postCreateCommand runs
        ]
    ]
    assert ".devcontainer/startup.sh" in [s.name for s in sources]


def test_a_chmod_of_the_socket_alone_is_reported() -> None:
    files = [
        ProjectFile(
            ".devcontainer/devcontainer.json",
            b'{"image": "python:3.12", "postStartCommand": {"sock": "sudo chmod a+rw '
            b'/var/run/docker.sock", "deps": "uv sync --locked"}}',
        )
    ]
    findings, _, _ = scan_container_files(files)
    (sock,) = [f for f in findings if f.rule_id == "AG203"]
    assert sock.message == (
        "devcontainer .devcontainer/devcontainer.json opens the Docker socket to every user in "
        "the container: `chmod a+rw /var/run/docker.sock` (postStartCommand); whoever reaches "
        "the socket is root on the host."
    )

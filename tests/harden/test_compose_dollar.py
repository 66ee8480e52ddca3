"""Compose's `$$` is a literal `$`: `command: sh -c "echo $$TASK"` runs `echo $TASK` in the
container's shell. docker-run.sh carries that `$` quoted, so the host's shell neither reads
`$$` as its PID nor expands `$TASK` itself; --verify reads the script the same way. On the
real engine: the container prints its own TASK, never the host's, never a PID."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.harden.run_script import RunParseError, parse_run_script
from tests.harden.agents import build_shell_image, run_script, verification
from tests.harden.support import harden_cli, json_report
from tests.inspect.engine_support import Made

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def _project(root: Path, image: str) -> Path:
    root.mkdir()
    (root / "compose.yml").write_text(
        "services:\n  agent:\n"
        f"    image: {image}\n"
        '    command: sh -c "echo task=$$TASK cost=$$$$ && echo done"\n'
        "    environment:\n      TASK: build-the-docs\n"
    )
    return root / "compose.yml"


def test_compose_dollar_reaches_the_container_as_one_literal_dollar(
    made: Made, tmp_path_factory: pytest.TempPathFactory, tmp_path: Path
) -> None:
    image = build_shell_image(made, tmp_path_factory)
    out = tmp_path / "out"
    host = {"TASK": "the-host-value"}
    result = harden_cli(
        _project(tmp_path / "proj", image), "--out", out, "--verify", "--format", "json", env=host
    )
    assert result.exit_code == 0, result.stdout
    script = (out / "docker-run.sh").read_text()
    assert script.endswith("  sh \\\n  -c \\\n  'echo task=$TASK cost=$$ && echo done'\n")
    # the verifier runs what the script runs: the single-quoted `$` unexpanded
    assert parse_run_script(script).command == ["sh", "-c", "echo task=$TASK cost=$$ && echo done"]
    out_lines = verification(json_report(result), "agent-start")["output"]
    assert out_lines[0].startswith("task=build-the-docs cost=") and out_lines[1:] == ["done"]
    # the container's shell expanded $TASK (its own value) and $$ (its own PID, 1 as sh -c)
    run = run_script(out / "docker-run.sh", **host)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["task=build-the-docs cost=1", "done"]
    # the compose override keeps compose's own spelling
    compose_text = (out / "docker-compose.hardened.yml").read_text()
    assert "$$TASK" in compose_text


def test_the_script_reader_keeps_literal_dollars_and_expands_nothing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TASK", "the-host-value")
    script = "#!/bin/sh\nexec docker run --rm \\\n  img:1 \\\n  sh -c 'echo $TASK' \\$TASK\n"
    args = parse_run_script(script)
    assert args.command == ["sh", "-c", "echo $TASK", "$TASK"]
    # what the shell would fill in from the caller's environment is never filled in here
    with pytest.raises(RunParseError, match="is expanded by the shell"):
        parse_run_script(script.replace("\\$TASK", '"it\'s $TASK"'))

"""The text report's fix lines: a fix with no command prints no empty line under it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agentguard.cli import app


def test_a_fix_without_a_command_has_no_empty_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (CI, agentguard's own gate: AG210's fix for a `claude` command line has no snippet, and
    # an indented empty line stood under it)
    (tmp_path / "p" / "scripts").mkdir(parents=True)
    (tmp_path / "p" / "scripts" / "nightly.sh").write_text("#!/bin/sh\nclaude -p 'triage'\n")
    (tmp_path / "p" / "CLAUDE.md").write_text("internal notes\n")
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["check", "p", "--format", "text"], env={"NO_COLOR": "1"})
    assert result.exit_code == 1, result.stdout
    lines = result.stdout.splitlines()
    workdir_fix = [
        i for i, line in enumerate(lines) if line.startswith("  fix: Give the agent a dedicated")
    ]
    assert len(workdir_fix) == 1
    after = lines[workdir_fix[0] + 1]
    assert after.startswith("  fix: "), after
    assert not [line for line in lines if line and not line.strip()]

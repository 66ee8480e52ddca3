"""agentguard's own failure (a bug, or an input no reader expected) is never a usage error
and never a missing report: `inspect`, `check` and `lock` write the report they were asked
for, with one failed source `internal-error`, and exit 3 (also under --allow-incomplete).

The failure is provoked by making one internal function raise: the last line of defence is
what is under test, and no real input is known to reach it (each one found was fixed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

import agentguard.engine as engine
import agentguard.lock_command as lock_command
from agentguard.cli import app


def _bug(*_args: object, **_kwargs: object) -> object:
    raise ValueError("a value no reader expected")


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["claude-agent-sdk>=0.1"]\n'
    )
    (root / "bot.py").write_text(
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        'ClaudeAgentOptions(allowed_tools=["Bash"])\n'
    )
    return root


def _failed_sources(report_path: Path) -> list[dict[str, object]]:
    data = json.loads(report_path.read_text())
    assert data["complete"] is False
    assert data["findings"] == []  # nothing is reported as found from a run that broke
    return [s for s in data["sources"] if s["status"] == "failed"]


def test_a_bug_in_inspect_is_a_report_with_a_failed_source_and_exit_3(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p")
    monkeypatch.setattr(engine, "run_agent_rules", _bug)
    out = tmp_path / "report.json"
    result = CliRunner().invoke(
        app, ["inspect", str(project), "--format", "json", "--output", str(out)]
    )

    assert result.exit_code == 3, result.output  # was 2 (a ValueError read as a bad flag)
    failed = _failed_sources(out)
    assert [(s["name"], s["error_code"]) for s in failed] == [(str(project), "internal-error")]
    assert "ValueError: a value no reader expected" in str(failed[0]["reason"])
    assert "internal error" in result.output


def test_a_bug_in_one_check_step_fails_that_step_and_keeps_the_others(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p")
    monkeypatch.setattr(engine, "run_agent_rules", _bug)
    out, sarif = tmp_path / "report.json", tmp_path / "report.sarif"
    result = CliRunner().invoke(
        app,
        [
            *("check", str(project), "--format", "json", "--output", str(out)),
            *("--sarif-output", str(sarif), "--no-smoke"),
        ],
    )

    assert result.exit_code == 3, result.output
    data = json.loads(out.read_text())
    assert data["complete"] is False
    failed = [s for s in data["sources"] if s["status"] == "failed"]
    assert [s["name"] for s in failed] == [str(project)]
    assert "ValueError: a value no reader expected" in str(failed[0]["reason"])
    assert [f["rule_id"] for f in data["findings"]] == ["AG103"]  # the lock step still ran
    run = json.loads(sarif.read_text())["runs"][0]
    assert run["invocations"][0]["executionSuccessful"] is False


def test_a_bug_in_the_lock_run_is_a_report_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p")
    monkeypatch.setattr(lock_command, "run_lock", _bug)
    out = tmp_path / "lock.json"
    result = CliRunner().invoke(
        app, ["lock", str(project), "--check", "--format", "json", "--output", str(out)]
    )

    assert result.exit_code == 3, result.output
    failed = _failed_sources(out)
    assert [s["error_code"] for s in failed] == ["internal-error"]


def test_a_bad_fail_on_is_still_a_usage_error(tmp_path: Path) -> None:
    project = _project(tmp_path / "p")
    for command in ("inspect", "check", "lock"):
        result = CliRunner().invoke(app, [command, str(project), "--fail-on", "severe"])
        assert result.exit_code == 2, (command, result.output)
        assert "unknown severity 'severe'" in result.output


def test_a_bug_in_the_map_run_is_a_map_with_a_failed_source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = _project(tmp_path / "p")
    monkeypatch.setattr(engine, "run_agent_rules", _bug)
    out = tmp_path / "map.json"
    result = CliRunner().invoke(
        app, ["map", str(project), "--format", "json", "--output", str(out)]
    )

    assert result.exit_code == 3, result.output  # was 2: a ValueError read as a bad flag
    assert "ValueError: a value no reader expected" in out.read_text()
    assert "internal-error" in out.read_text()

"""`agentguard inspect PROJECT_DIR` end to end: findings, sources and the exit code."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from typer.testing import CliRunner

from agentguard.cli import app
from tests.inspect.project.support import FIXTURES

PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def _run(target: Path, *extra: str) -> tuple[int, dict]:  # type: ignore[type-arg]
    result = CliRunner().invoke(app, ["inspect", str(target), "--format", "json", *extra])
    return result.exit_code, json.loads(result.stdout)


def test_a_project_with_findings_exits_1_and_names_each_location() -> None:
    code, report = _run(FIXTURES / "AG305" / "fail" / "script-skip-permissions")
    assert code == 1
    assert report["complete"] is True
    assert sorted(
        (f["rule_id"], f["locations"][0]["path"], f["locations"][0]["line"])
        for f in report["findings"]
    ) == [
        ("AG210", "scripts/nightly.sh", 4),
        ("AG211", "scripts/nightly.sh", 4),
        ("AG302", "scripts/nightly.sh", 4),
        ("AG305", "scripts/nightly.sh", 4),
    ]  # --tools "Read Edit": no shell or web tools; the file tools it keeps are reported
    assert report["facts"]["project"]["agent_configs"][0]["options"] == {
        "permission_mode": "bypassPermissions",
        "tools": ["Read", "Edit"],
    }


def test_a_broken_agent_file_makes_the_report_incomplete(tmp_path: Path) -> None:
    shutil.copytree(FIXTURES / "AG210" / "pass" / "py-dedicated-workdir", tmp_path / "p")
    (tmp_path / "p" / "broken.py").write_text("from claude_agent_sdk import query\ndef (:\n")
    code, report = _run(tmp_path / "p", "--fail-on", "critical")
    assert code == 3
    assert report["complete"] is False
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert failed == [
        {
            "kind": "file",
            "name": "broken.py",
            "status": "failed",
            "reason": "Python syntax error at line 2: invalid syntax",
            "error_code": "parse-error",
            "retryable": False,
            "remedy": f"Fix the file (or exclude it); it was parsed as Python {PY}, so syntax "
            "of a newer Python needs agentguard run on that Python.",
        }
    ]

"""`agentguard lock` on a project whose only MCP launches are in TS code and a workflow's
here-document (modelled on anthropics/claude-code-action): the launches are found, the
image launched by tag is AG143 (nothing is pulled), and mcp.lock.json is written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.lock.helpers import run_json, strip_volatile

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "AG310" / "fail"
IMAGE = "ghcr.io/github/github-mcp-server:sha-23fa0dd"


def _finding(path: str, line: int) -> dict[str, object]:
    return {
        "rule_id": "AG143",
        "title": "MCP server image launched by tag",
        "severity": "medium",
        "confidence": "high",
        "message": f"MCP server 'github' launches the image `{IMAGE}` by the tag `sha-23fa0dd`: "
        "a tag can be moved, and the lock records images by digest only.",
        "locations": [{"path": path, "line": line, "note": "MCP server 'github'"}],
        "evidence": {"server": "github", "image": IMAGE},
        "fix": {
            "description": f"Launch it by digest: `{IMAGE}@sha256:<digest>` (`docker buildx "
            "imagetools inspect` prints it); then `agentguard lock` records it.",
            "safe": False,
        },
        "ambiguous": False,
        "suppressed": None,
    }


def test_launches_in_code_and_in_a_heredoc_are_locked_by_reference(tmp_path: Path) -> None:
    project = tmp_path / "action"
    shutil.copytree(FIXTURES / "ts-mcp-servers-assigned", project, ignore=_expected)
    shutil.copytree(FIXTURES / "workflow-heredoc", project, dirs_exist_ok=True, ignore=_expected)
    code, report, _ = run_json("lock", str(project))
    assert code in (0, 1), report
    got = [strip_volatile(f) for f in report["findings"] if f["rule_id"].startswith("AG14")]
    assert sorted(got, key=str) == sorted(
        [
            _finding(".github/workflows/issue-triage.yml", 17),
            _finding("src/mcp/install-mcp-server.ts", 22),
        ],
        key=str,
    )
    lock = json.loads((project / "mcp.lock.json").read_text())
    assert lock["servers"] == []  # a tag is not a digest: recorded by nobody, reported


def _expected(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if n == "expected.json"]

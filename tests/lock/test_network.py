"""The real index: the incident as it is today. CI runs these (marker `network`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lock.helpers import findings, run_json, write_project

pytestmark = pytest.mark.network


def _mcp_edges(report: dict[str, object], parent: str) -> list[dict[str, object]]:
    return [
        f
        for f in findings(report, "AG101")  # type: ignore[arg-type]
        if f["evidence"]["child"] == "mcp" and f["evidence"]["parent"] == parent
    ]


def test_claude_agent_sdk_0_2_95_admits_two_mcp_majors(tmp_path: Path) -> None:
    project = write_project(
        tmp_path / "bot", ["claude-agent-sdk==0.2.95"], requires_python=">=3.11"
    )
    code, report, _ = run_json("lock", str(project))
    assert code == 1
    [edge] = _mcp_edges(report, "claude-agent-sdk")
    assert edge["severity"] == "high"
    # The SDK's own metadata says mcp>=1.23.0: majors 1 and 2 (0.9 is below the floor).
    assert edge["evidence"]["specifier"] == ">=1.23.0"
    assert edge["evidence"]["majors_admitted"][:2] == ["1", "2"]
    assert edge["evidence"]["unbounded_above"] is True
    assert edge["locations"][0]["dependency_path"] == ["project", "claude-agent-sdk==0.2.95", "mcp"]
    # Later releases of the SDK declare mcp<2.0.0: that cap is offered first, and cited.
    assert edge["fix"]["snippet"] == "mcp>=1.23.0,<2.0.0"
    bound = edge["evidence"]["upstream_bound"]
    assert bound["specifier"] == "<2.0.0"
    assert bound["parent_versions"][0] == "0.2.100"
    assert "the upstream's own word that mcp 2 broke it" in edge["fix"]["description"]
    assert report["complete"] is True


def test_openai_agents_0_24_0_admits_mcp_1_and_2(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["openai-agents==0.24.0"], requires_python=">=3.11")
    code, report, _ = run_json("lock", str(project))
    [edge] = _mcp_edges(report, "openai-agents")
    assert edge["severity"] == "high"
    assert edge["evidence"]["specifier"] == "<3,>=1.19.0"
    assert edge["evidence"]["majors_admitted"] == ["1", "2"]
    assert edge["evidence"]["unbounded_above"] is False
    assert code == 1

"""The real index: the incident as it is today. CI runs these (marker `network`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lock.helpers import findings, lock_complete, run_json, write_project

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
    code, report, _ = lock_complete(str(project))
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
    code, report, _ = lock_complete(str(project))
    [edge] = _mcp_edges(report, "openai-agents")
    assert edge["severity"] == "high"
    assert edge["evidence"]["specifier"] == "<3,>=1.19.0"
    assert edge["evidence"]["majors_admitted"] == ["1", "2"]
    assert edge["evidence"]["unbounded_above"] is False
    assert code == 1


# Two of the field's agent stacks (both fork under Python-version markers on the real index).
FORKED_STACKS = [
    ["smolagents[mcp,docker]"],
    ["autogen-agentchat", "autogen-ext[mcp]"],
]


@pytest.mark.parametrize("deps", FORKED_STACKS, ids=lambda d: " ".join(d))
def test_a_forked_stack_locked_twice_and_upgraded_crosses_no_major(
    tmp_path: Path, deps: list[str]
) -> None:
    project = write_project(tmp_path / "stack", deps)
    first, _, _ = lock_complete(str(project))
    text = (project / "requirements.lock").read_text()
    assert " ; python_full_version" in text  # the lock forks
    files = {n: (project / n).read_bytes() for n in ("requirements.lock", "pylock.toml")}
    for extra in ((), ("--upgrade",)):
        code, again, _ = run_json("lock", str(project), *extra)
        assert code == first
        assert findings(again, "AG102") == []
        assert {n: (project / n).read_bytes() for n in files} == files


def _apply_snippets_and_install(project: Path, deps: list[str]) -> None:
    import subprocess
    import sys

    _, report, _ = run_json("lock", str(project))
    offered = findings(report, "AG101")
    # every first fix is offered, and all of them were resolved as one set before that
    assert offered and {f["evidence"]["fix_set"] for f in offered} == {"resolves"}
    snippets = sorted({f["fix"]["snippet"] for f in offered})
    write_project(project, [*deps, *snippets], requires_python=_requires_python(project))
    lock_complete(str(project))
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--dry-run", "--ignore-installed", "--isolated",
         "--require-hashes", "-r", str(project / "requirements.lock")],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]


def _requires_python(project: Path) -> str:
    text = (project / "pyproject.toml").read_text()
    return text.split('requires-python = "', 1)[1].split('"', 1)[0]


def test_every_fix_snippet_of_the_example_applied_still_installs(tmp_path: Path) -> None:
    deps = ["claude-agent-sdk==0.2.95", "httpx>=0.27"]  # examples/kontext-bot
    project = write_project(tmp_path / "bot", deps, requires_python=">=3.11")
    _apply_snippets_and_install(project, deps)


def test_every_fix_snippet_of_a_forked_stack_applied_still_installs(tmp_path: Path) -> None:
    deps = FORKED_STACKS[0]
    project = write_project(tmp_path / "stack", deps)
    _apply_snippets_and_install(project, deps)

"""`agentguard lock --write-launch` end to end on a Codex `config.toml`, a run-gemini-cli
workflow and Python agent code (the real CLI, an npm registry on 127.0.0.1 serving real
tarballs): every launch pinned in place, `lock --check` then passes offline, and fails
(AG142) once a launch is edited back to unpinned."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json, strip_volatile, write_project
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"
CODEX = (
    "# Codex settings\r\n"
    "[mcp_servers.tracker]\r\n"
    'command = "npx"\r\n'
    "args = ['-y', '@acme/tracker-mcp']  # pin me\r\n"
)
WORKFLOW = """\
on: issues
jobs:
  triage:
    runs-on: ubuntu-latest
    steps:
      - uses: google-github-actions/run-gemini-cli@v0
        with:
          settings: |
            {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}
"""
AGENT = """\
from mcp import StdioServerParameters

TRACKER = StdioServerParameters(command="npx", args=["-y", "@acme/tracker-mcp"])
"""
FILES = {".codex/config.toml": CODEX, ".github/workflows/triage.yml": WORKFLOW, "agent.py": AGENT}
PINNED = {
    ".codex/config.toml": CODEX.replace("'@acme/tracker-mcp'", "'@acme/tracker-mcp@1.4.2'"),
    ".github/workflows/triage.yml": WORKFLOW.replace(
        '"@acme/tracker-mcp"', '"@acme/tracker-mcp@1.4.2"'
    ),
    "agent.py": AGENT.replace('"@acme/tracker-mcp"', '"@acme/tracker-mcp@1.4.2"'),
}
LINES = {".codex/config.toml": 2, ".github/workflows/triage.yml": 9, "agent.py": 3}


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    with serve(NpmRegistry({NAME: ["1.3.0", "1.4.2"]})) as reg:
        yield reg


def _ag142(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [strip_volatile(f) for f in report["findings"] if f["rule_id"] == "AG142"]


def test_toml_yaml_and_code_launches_are_pinned_then_held(
    tmp_path: Path, agent_index: dict[str, Any], registry: NpmRegistry
) -> None:
    project = write_project(tmp_path / "bot", ["typing-x>=1,<2"])
    for name, text in FILES.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_bytes(text.encode("utf-8"))
    code, report, _ = run_json(
        "lock", str(project), "--index-url", agent_index["url"],
        "--npm-registry", registry.url, "--write-launch",
    )  # fmt: skip
    for name, text in PINNED.items():
        assert (project / name).read_bytes() == text.encode("utf-8"), name
    server = {".codex/config.toml": "tracker", ".github/workflows/triage.yml": "tracker"}
    for name, line in LINES.items():
        note = f"{name}:{line}: MCP server {server.get(name, '(unnamed)')!r} now launches {NAME}@1.4.2."
        assert note in report["notes"], report["notes"]
    assert not [s for s in report["sources"] if s["status"] == "failed"]

    code, report, _ = run_json("lock", "--check", str(project))
    assert _ag142(report) == []
    assert code == 0, report["findings"]

    (project / "agent.py").write_text(AGENT, encoding="utf-8")  # edited back to unpinned
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1
    assert [(f["locations"], f["message"]) for f in _ag142(report)] == [
        (
            [{"path": "agent.py", "line": 3, "note": "MCP server '(unnamed)'"}],
            f"MCP server '(unnamed)' launches `{NAME}`, which is not pinned to the locked {NAME} 1.4.2.",
        )
    ]


def test_a_registry_version_with_a_last_newline_is_never_written(tmp_path: Path) -> None:
    # the registry (hostile too) lists "1.9.2\n": a `$`-ended pattern took it for a
    # version, and the launch and the lock were written with the newline
    project = tmp_path / "bot"
    project.mkdir()
    launch = (
        '{"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp@^1"]}}}\n'
    )
    (project / ".mcp.json").write_text(launch, encoding="utf-8")
    with serve(NpmRegistry({NAME: ["1.0.0", "1.9.2\n"]})) as reg:
        code, report, _ = run_json(
            "lock", str(project), "--npm-registry", reg.url, "--write-launch"
        )
    assert (project / ".mcp.json").read_text(encoding="utf-8") == launch.replace("@^1", "@1.0.0")
    assert (
        ".mcp.json:1: MCP server 'tracker' now launches @acme/tracker-mcp@1.0.0."
        in (report["notes"])
    )
    locked = json.loads((project / "mcp.lock.json").read_text(encoding="utf-8"))
    assert [e["version"] for e in locked["servers"]] == ["1.0.0"]
    assert code == 0

"""The incident from the real index (CI runs these: marker `network`): claude-agent-sdk
0.2.95 with mcp 2.3.0 raises the real AttributeError in create_sdk_mcp_server; with mcp
capped below 2 the SDK's server starts and lists its tool, and an npx server whose package
no registry holds is reported as exactly that."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lock.helpers import findings, lock_complete, run_json, write_project

pytestmark = pytest.mark.network

BOT = """\
from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, tool


@tool("team_tasks", "List the open tasks of a team", {"team": str})
async def team_tasks(args):
    return {"content": []}


def make_options(model):
    tasks = create_sdk_mcp_server(name="tasks", version="1.0.0", tools=[team_tasks])
    return ClaudeAgentOptions(model=model, mcp_servers={"tasks": tasks})
"""


def _bot(root: Path, deps: list[str]) -> Path:
    write_project(root, deps, requires_python=">=3.11")
    (root / "bot.py").write_text(BOT, encoding="utf-8")
    return root


def test_mcp_2_crashes_the_sdk_server_and_the_cap_starts_it(tmp_path: Path) -> None:
    broken = _bot(tmp_path / "broken", ["claude-agent-sdk==0.2.95", "mcp==2.3.0"])
    code, report, _ = lock_complete("--smoke", str(broken))
    assert code == 1
    [crash] = findings(report, "AG603")
    assert crash["message"].startswith(
        "In the locked environment, `create_sdk_mcp_server()` of claude-agent-sdk 0.2.95 raises "
        "AttributeError: 'Server' object has no attribute 'list_tools' at "
        "claude_agent_sdk/__init__.py:"
    )
    assert (
        "mcp 2.3.0 removed `Server.list_tools`, which claude-agent-sdk 0.2.95 calls."
        in crash["message"]
    )
    assert crash["fix"]["snippet"] == "mcp>=1.23.0,<2.0.0"
    assert "mcp>=2.0,<3" not in crash["fix"]["description"]  # never the major that crashed
    assert findings(report, "AG602") == []  # it imports; it is the server that fails

    fixed = _bot(tmp_path / "fixed", ["claude-agent-sdk==0.2.95", "mcp>=1.23.0,<2.0.0"])
    (fixed / ".mcp.json").write_text(
        json.dumps(
            {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}
        ),
        encoding="utf-8",
    )
    code, report, _ = run_json("lock", "--smoke", str(fixed))
    probes = {(p["kind"], p["subject"]): p for p in report["facts"]["smoke"]["probes"]}
    server = probes[("sdk-server", "claude_agent_sdk")]
    assert (server["status"], server["tools"]) == ("ok", ["agentguard_probe"])
    assert findings(report, "AG603") == []
    [missing] = findings(report, "AG605")
    assert missing["message"].startswith(
        "MCP server 'tracker': no registry holds its package @acme/tracker-mcp;"
    )

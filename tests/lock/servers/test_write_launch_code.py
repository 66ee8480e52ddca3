"""`lock --write-launch` on Python agent code: a string literal that is exactly the launch's
argument is rewritten in its own quotes (the shape of modelcontextprotocol/python-sdk's
README: `StdioServerParameters(command=..., args=[...])`, and an `mcp_servers={...}`
mapping); a concatenation or a variable stays a note with the reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.facts.mcp_pins import LockedDependency, ServerLock, ServerPin
from agentguard.findings import SourceStatus
from agentguard.harden.launches import write_launches
from agentguard.inspect.project.servers import project_servers
from agentguard.lock.servers.resolve import ServerResult

AGENT = '''\
"""Agent with two MCP servers (do not launch "@acme/tracker-mcp" unpinned)."""
from mcp import StdioServerParameters
from mcp.client.stdio import stdio_client

TRACKER = StdioServerParameters(command="npx", args=["-y", '@acme/tracker-mcp'])  # "@acme/tracker-mcp"

OPTIONS = dict(
    mcp_servers={
        "fetch": {"command": "uvx", "args": [r"mcp-server-fetch"], "env": {}},
    },
)
'''
AGENT_WANT = AGENT.replace("'@acme/tracker-mcp'])", "'@acme/tracker-mcp@2.0.1'])").replace(
    '[r"mcp-server-fetch"]', '[r"--from", r"mcp-server-fetch==2025.4.7", r"mcp-server-fetch"]'
)

REFUSED = """\
from mcp import StdioServerParameters

PKG = "@acme/tracker-mcp"
NAME = "tracker-mcp"
A = StdioServerParameters(command="npx", args=["-y", f"@acme/{NAME}"])
B = StdioServerParameters(command="npx", args=["-y", "@acme/" + "tracker-mcp"])
C = StdioServerParameters(command="npx", args=["-y", PKG])
D = StdioServerParameters(command="npx", args=["-y", "@acme/" "tracker-mcp"])
"""


def _result(root: Path) -> tuple[tuple[str, ...], list[tuple[str, SourceStatus]], dict[int, str]]:
    servers, _ = project_servers(root)
    dep = LockedDependency("mcp-server-fetch", "2025.4.7", None, ("sha256:" + "0" * 64,))
    pins = tuple(
        ServerPin("npm", "@acme/tracker-mcp", "2.0.1", s.name, s.path, s.line)
        if s.command == "npx"
        else ServerPin(
            "pypi", "mcp-server-fetch", "2025.4.7", s.name, s.path, s.line, environment=(dep,)
        )
        for s in servers
    )
    result = ServerResult(written=True, lock=ServerLock("mcp.lock.json", pins, ""))
    notes, sources = write_launches(root, servers, result)
    return notes, [(s.name, s.status) for s in sources], {s.line: s.name for s in servers}


@pytest.mark.parametrize("eol", ["\n", "\r\n"])
def test_string_literals_are_rewritten_in_their_own_quotes(tmp_path: Path, eol: str) -> None:
    # a line separator (U+2028) in the docstring is no line end to Python, nor to the rewrite
    text = AGENT.replace("\n", eol).replace('"""Agent', '"""\u2028Agent')
    (tmp_path / "agent.py").write_bytes(text.encode("utf-8"))
    notes, sources, _ = _result(tmp_path)
    want = AGENT_WANT.replace("\n", eol).replace('"""Agent', '"""\u2028Agent')
    assert (tmp_path / "agent.py").read_bytes() == want.encode("utf-8")
    assert sources == [("agent.py", SourceStatus.OK)]
    assert notes == (
        "agent.py:5: MCP server '(unnamed)' now launches @acme/tracker-mcp@2.0.1.",
        "agent.py:9: MCP server 'fetch' now launches mcp-server-fetch==2025.4.7.",
    )
    assert _result(tmp_path)[:2] == ((), [])


def test_computed_arguments_stay_notes_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "agent.py").write_text(REFUSED, encoding="utf-8")
    notes, sources, _ = _result(tmp_path)
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == REFUSED
    assert sources == []
    pinned = "`npx -y @acme/tracker-mcp@2.0.1` there by hand."
    # line 5's f-string is a launch the lock cannot check (AG142), never a pin to write
    assert notes == (
        f"agent.py:6: not rewritten (the argument is a concatenation); launch {pinned}",
        f"agent.py:7: not rewritten (the argument is a variable); launch {pinned}",
        f"agent.py:8: not rewritten (the argument is a concatenation of literals); launch {pinned}",
    )


# the `query()` options shape of @anthropic-ai/claude-agent-sdk (server entries written as
# claude-code-action's base-action/test/parse-sdk-options.test.ts writes them)
QUERY = """\
import { query } from "@anthropic-ai/claude-agent-sdk";

const PKG = "@acme/tracker-mcp";
for await (const message of query({
  prompt: "Triage the issue",
  options: {
    mcpServers: {
      tracker: { command: "npx", args: ["-y", '@acme/tracker-mcp'] }, // "@acme/tracker-mcp"
      fetch: { command: "uvx", args: [`mcp-server-fetch`] },
      other: { command: "npx", args: ["-y", PKG] },
    },
  },
})) {
  console.log(message);
}
"""
QUERY_WANT = QUERY.replace("'@acme/tracker-mcp'] }", "'@acme/tracker-mcp@2.0.1'] }")


def test_typescript_literal_rewritten_template_and_variable_left(tmp_path: Path) -> None:
    (tmp_path / "agent.ts").write_text(QUERY, encoding="utf-8")
    notes, sources, _ = _result(tmp_path)
    assert (tmp_path / "agent.ts").read_text(encoding="utf-8") == QUERY_WANT
    assert sources == [("agent.ts", SourceStatus.OK)]
    assert notes == (
        "agent.ts:4: not rewritten (the argument is a template literal); launch "
        "`uvx --from 'mcp-server-fetch==2025.4.7' mcp-server-fetch` there by hand.",
        "agent.ts:4: not rewritten (the argument is a variable); launch "
        "`npx -y @acme/tracker-mcp@2.0.1` there by hand.",
        "agent.ts:4: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1.",
    )

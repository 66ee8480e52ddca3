"""`lock --write-launch` on JSONC: exactly the launch argument changes; comments (including
ones that look like the launch), layout and key order stay byte for byte."""

from __future__ import annotations

from pathlib import Path

from agentguard.facts.mcp_pins import LockedDependency, ServerLock, ServerPin
from agentguard.findings import SourceStatus
from agentguard.harden.launches import write_launches
from agentguard.inspect.project.servers import project_servers
from agentguard.lock.servers.resolve import ServerResult

VSCODE = """\
// Team MCP servers. Do not launch "@acme/tracker-mcp" without review!
{
  /* "args": ["-y", "@acme/tracker-mcp"] -- an old launch, kept as a note */
  "servers": {
    "tracker": {
      "command": "npx",
      "args": ["-y",   "@acme/tracker-mcp"],   // the tracker
      "env": {"URL": "https://tracker.example.invalid/api//v1"}
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": [
        "mcp-server-fetch" /* newest */,
      ],
    },
  },
}
"""

WANT = """\
// Team MCP servers. Do not launch "@acme/tracker-mcp" without review!
{
  /* "args": ["-y", "@acme/tracker-mcp"] -- an old launch, kept as a note */
  "servers": {
    "tracker": {
      "command": "npx",
      "args": ["-y",   "@acme/tracker-mcp@2.0.1"],   // the tracker
      "env": {"URL": "https://tracker.example.invalid/api//v1"}
    },
    "fetch": {
      "type": "stdio",
      "command": "uvx",
      "args": [
        "--from", "mcp-server-fetch==2025.4.7", "mcp-server-fetch" /* newest */,
      ],
    },
  },
}
"""


def _pins(tracker_line: int, fetch_line: int) -> ServerResult:
    dep = LockedDependency("mcp-server-fetch", "2025.4.7", None, ("sha256:" + "0" * 64,))
    pins = (
        ServerPin("npm", "@acme/tracker-mcp", "2.0.1", "tracker", ".vscode/mcp.json", tracker_line),
        ServerPin(
            "pypi",
            "mcp-server-fetch",
            "2025.4.7",
            "fetch",
            ".vscode/mcp.json",
            fetch_line,
            environment=(dep,),
        ),
    )
    return ServerResult(written=True, lock=ServerLock("mcp.lock.json", pins, ""))


def _project(tmp_path: Path, text: str) -> Path:
    (tmp_path / ".vscode").mkdir()
    (tmp_path / ".vscode" / "mcp.json").write_text(text, encoding="utf-8")
    return tmp_path


def test_only_the_launch_argument_changes(tmp_path: Path) -> None:
    root = _project(tmp_path, VSCODE)
    servers, _ = project_servers(root)
    lines = {s.name: s.line for s in servers}
    notes, sources = write_launches(root, servers, _pins(lines["tracker"], lines["fetch"]))
    assert (root / ".vscode" / "mcp.json").read_text(encoding="utf-8") == WANT
    assert [(s.name, s.status) for s in sources] == [(".vscode/mcp.json", SourceStatus.OK)]
    assert notes == (
        f".vscode/mcp.json:{lines['tracker']}: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1.",
        f".vscode/mcp.json:{lines['fetch']}: MCP server 'fetch' now launches mcp-server-fetch==2025.4.7.",
    )
    # once pinned, a second run changes nothing
    again, _ = project_servers(root)
    assert write_launches(root, again, _pins(lines["tracker"], lines["fetch"])) == ((), ())
    assert (root / ".vscode" / "mcp.json").read_text(encoding="utf-8") == WANT


def test_two_entries_of_the_same_server_are_left_alone(tmp_path: Path) -> None:
    text = (
        '{"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}},\n'
        ' "projects": {"a": {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}}}\n'
    )
    (tmp_path / ".mcp.json").write_text(text, encoding="utf-8")
    servers, _ = project_servers(tmp_path)
    assert servers, "the reader sees the server"
    pins = tuple(
        ServerPin("npm", "@acme/tracker-mcp", "2.0.1", "tracker", ".mcp.json", s.line)
        for s in servers
    )
    notes, sources = write_launches(
        tmp_path, servers, ServerResult(lock=ServerLock("mcp.lock.json", pins, ""))
    )
    assert (tmp_path / ".mcp.json").read_text(encoding="utf-8") == text
    assert sources == ()
    assert notes and all("not rewritten" in n for n in notes), notes


def test_a_link_swapped_in_after_the_read_is_never_written_through(tmp_path: Path) -> None:
    text = '{"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}\n'
    outside = tmp_path / "outside.json"
    outside.write_text(text, encoding="utf-8")
    root = tmp_path / "p"
    root.mkdir()
    (root / ".mcp.json").write_text(text, encoding="utf-8")
    servers, _ = project_servers(root)
    (root / ".mcp.json").unlink()
    (root / ".mcp.json").symlink_to(outside)  # swapped in between the read and the write
    pins = tuple(
        ServerPin("npm", "@acme/tracker-mcp", "2.0.1", s.name, s.path, s.line) for s in servers
    )
    notes, sources = write_launches(
        root, servers, ServerResult(lock=ServerLock("mcp.lock.json", pins, ""))
    )
    assert outside.read_text(encoding="utf-8") == text
    assert (root / ".mcp.json").is_symlink()
    assert [(s.name, s.status, s.error_code) for s in sources] == [
        (".mcp.json", SourceStatus.FAILED, "rewrite-unreadable")
    ]
    assert notes == ()


def test_no_lock_written_no_rewrite(tmp_path: Path) -> None:
    root = _project(tmp_path, VSCODE)
    servers, _ = project_servers(root)
    notes, sources = write_launches(root, servers, ServerResult())
    assert (root / ".vscode" / "mcp.json").read_text(encoding="utf-8") == VSCODE
    assert (notes, sources) == (
        ("MCP server launches not rewritten: the MCP server lock was not written.",),
        (),
    )

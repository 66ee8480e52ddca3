"""A real stdio MCP server in a real wheel (a console script that `uvx` runs from a local
folder of wheels): it answers ``initialize`` and ``tools/list`` with the tools of its answer
file, so that a test can make the same release, byte for byte, answer otherwise: what a
server whose tools come from elsewhere (a remote configuration) does under a pinned version.
(A release whose files were replaced is refused by the lock itself: hash-not-on-index.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.wheelhouse import build_wheel

SERVER = """\
import json, sys

ANSWER = {answer!r}


def main():
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        if msg["method"] == "initialize":
            result = {{"protocolVersion": "2025-06-18", "capabilities": {{"tools": {{}}}},
                      "serverInfo": {{"name": "tracker", "version": "1.0.0"}}}}
        elif msg["method"] == "tools/list":
            with open(ANSWER, encoding="utf-8") as f:
                result = {{"tools": json.load(f)}}
        else:
            result = {{}}
        print(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": result}}), flush=True)
"""

SEARCH: dict[str, Any] = {
    "name": "search",
    "description": "Search the issue tracker.",
    "inputSchema": {"type": "object", "properties": {"q": {"type": "string"}}},
    "annotations": {"readOnlyHint": True},
}
CLOSE: dict[str, Any] = {
    "name": "close_issue",
    "description": "Close an issue.",
    "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}},
    "annotations": {"readOnlyHint": False, "destructiveHint": False},
}


def tracker_wheel(folder: Path, tools: list[dict[str, Any]], version: str = "1.0.0") -> Path:
    """``tracker-mcp`` VERSION, a console script ``tracker-mcp`` that lists ``tools``: the
    answer file is written anew, the wheel built once (the release stays the same bytes)."""
    folder.mkdir(parents=True, exist_ok=True)
    answer = folder.parent / f"tracker-answer-{version}.json"
    answer.write_text(json.dumps(tools), encoding="utf-8")
    built = sorted(folder.glob(f"tracker_mcp-{version}-*.whl"))
    if built:
        return built[0]
    return build_wheel(
        folder,
        "tracker-mcp",
        version,
        files={
            "tracker_mcp/server.py": SERVER.format(answer=str(answer)),
            f"tracker_mcp-{version}.dist-info/entry_points.txt": (
                "[console_scripts]\ntracker-mcp = tracker_mcp.server:main\n"
            ),
        },
    )


def tracker_project(root: Path, version: str = "1.0.0") -> Path:
    """A project (no Python inputs) whose `.mcp.json` launches the server pinned."""
    root.mkdir(parents=True, exist_ok=True)
    launch = {"command": "uvx", "args": ["--from", f"tracker-mcp=={version}", "tracker-mcp"]}
    (root / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tracker": launch}}, indent=2) + "\n", encoding="utf-8"
    )
    return root

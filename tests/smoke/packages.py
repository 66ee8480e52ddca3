"""Small real wheels for the smoke run's offline tests: an SDK shaped like the Claude Agent
SDK (its ``tool``, ``create_sdk_mcp_server`` and the MCP router of its ``Query``), four
releases of an ``mcp`` that break it at import, at construction and at ``tools/list``,
and stdio MCP servers that answer, hang, exit, or want a key."""

from __future__ import annotations

import hashlib
from pathlib import Path

from tests.wheelhouse import build_wheel

_TYPES = """\
class ListToolsRequest:
    def __init__(self, method):
        self.method = method


class Tool:
    def __init__(self, name, description=None, inputSchema=None):
        self.name, self.description, self.inputSchema = name, description, inputSchema
        self.annotations = None
        self.meta = None


class _Tools:
    def __init__(self, tools):
        self.tools = tools


class ServerResult:
    def __init__(self, tools):
        {root}
"""

_SERVER = """\
from mcp import types


class Server:
    def __init__(self, name, version=None):
        self.name, self.version, self.request_handlers = name, version, {{}}
{list_tools}
"""
_LIST_TOOLS = """
    def list_tools(self):
        def decorate(fn):
            async def handler(request):
                return types.ServerResult(await fn())

            self.request_handlers[types.ListToolsRequest] = handler
            return fn

        return decorate
"""

_SDK = """\
from mcp import McpError  # (every release of this SDK needs it)
from mcp import types
from mcp.server.lowlevel import Server


class SdkMcpTool:
    def __init__(self, name, description, schema, handler):
        self.name, self.description, self.schema, self.handler = name, description, schema, handler


def tool(name, description, schema):
    def decorate(fn):
        return SdkMcpTool(name, description, schema, fn)

    return decorate


def create_sdk_mcp_server(name, version="1.0.0", tools=None):
    server = Server(name, version=version)

    @server.list_tools()
    async def list_tools():
        return [types.Tool(t.name, t.description, {{}}) for t in tools or []]

    return {{"type": "sdk", "name": name, "instance": server}}
"""

_QUERY = """\
from mcp.types import ListToolsRequest


class Query:
    def __init__(self, transport, is_streaming_mode, sdk_mcp_servers=None):
        self.sdk_mcp_servers = sdk_mcp_servers or {}

    async def _handle_sdk_mcp_request(self, server_name, message):
        server = self.sdk_mcp_servers[server_name]
        handler = server.request_handlers.get(ListToolsRequest)
        result = await handler(ListToolsRequest(method=message["method"]))
        tools = [{"name": t.name} for t in result.root.tools]
        return {"jsonrpc": "2.0", "id": message.get("id"), "result": {"tools": tools}}
"""

GOOD_SERVER = """\
import json, sys

for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                  "serverInfo": {"name": "good", "version": "1.0.0"}}
    elif msg["method"] == "tools/list":
        result = {"tools": [{"name": "lookup", "inputSchema": {"type": "object"}},
                            {"name": "search", "inputSchema": {"type": "object"}}]}
    else:
        result = {}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""
HANG_SERVER = "import time\nwhile True:\n    time.sleep(1)\n"
EXIT_SERVER = (
    "import sys\nsys.stderr.write('ModuleNotFoundError: no module named fancy\\n')\nsys.exit(3)\n"
)
CREDS_SERVER = (
    "import sys\nsys.stderr.write('error: TRACKER_TOKEN is not set (the cached one, ghp_"
    + "a1B2" * 9
    + ", expired)\\n')\nsys.exit(1)\n"
)


def mcp_wheel(out: Path, version: str) -> Path:
    """1.0.0 works; 2.0.0 has no Server.list_tools; 3.0.0's result has no .root; 4.0.0
    has no McpError."""
    root = "self.root = _Tools(tools)" if version != "3.0.0" else "self.tools = tools"
    init = "class McpError(Exception):\n    pass\n" if version != "4.0.0" else "\n"
    return build_wheel(
        out,
        "mcp",
        version,
        files={
            "mcp/__init__.py": init,
            "mcp/types.py": _TYPES.format(root=root),
            "mcp/server/__init__.py": "from mcp.server.lowlevel import Server\n",
            "mcp/server/lowlevel/__init__.py": "from mcp.server.lowlevel.server import Server\n",
            "mcp/server/lowlevel/server.py": _SERVER.format(
                list_tools=_LIST_TOOLS if version != "2.0.0" else ""
            ),
        },
    )


def build_all(out: Path) -> dict[str, Path]:
    wheels = {f"mcp=={v}": mcp_wheel(out, v) for v in ("1.0.0", "2.0.0", "3.0.0", "4.0.0")}
    # 5.0.0 hangs at import; startup-killer ends every interpreter at start (a .pth file)
    wheels["mcp==5.0.0"] = build_wheel(
        out,
        "mcp",
        "5.0.0",
        files={"mcp/__init__.py": "import time\nwhile True:\n    time.sleep(1)\n"},
    )
    wheels["startup-killer==1.0.0"] = build_wheel(
        out, "startup-killer", "1.0.0", files={"startup_killer.pth": "import os; os._exit(7)\n"}
    )
    wheels["claude-agent-sdk==1.0.0"] = build_wheel(
        out,
        "claude-agent-sdk",
        "1.0.0",
        ["mcp>=1.0"],
        files={
            "claude_agent_sdk/__init__.py": _SDK.format(),
            "claude_agent_sdk/_internal/__init__.py": "",
            "claude_agent_sdk/_internal/query.py": _QUERY,
        },
    )
    wheels["probe-servers==1.0.0"] = build_wheel(
        out,
        "probe-servers",
        "1.0.0",
        files={
            "good_server/__init__.py": "",
            "good_server/__main__.py": GOOD_SERVER,
            "hang_server/__init__.py": "",
            "hang_server/__main__.py": HANG_SERVER,
            "exit_server/__init__.py": "",
            "exit_server/__main__.py": EXIT_SERVER,
            "creds_server/__init__.py": "",
            "creds_server/__main__.py": CREDS_SERVER,
        },
    )
    return wheels


def requirements_lock(wheels: dict[str, Path], pins: list[str]) -> str:
    lines = []
    for pin in pins:
        digest = hashlib.sha256(wheels[pin].read_bytes()).hexdigest()
        lines.append(f"{pin} \\\n    --hash=sha256:{digest}")
    return "\n".join(lines) + "\n"

"""MCP server definitions in Python code (a file's mappings and stdio calls)."""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.python_eval import Evaluator, plain
from agentguard.inspect.project.python_scope import ModuleIndex, short

if TYPE_CHECKING:
    from agentguard.facts.agents import McpServer

_STDIO_CALLEES = ("stdio", "mcp")


def mcp_servers(path: str, index: ModuleIndex, ev: Evaluator) -> list[McpServer]:
    """MCP servers defined in code: a mapping with `command` and `args`/`type`/`env`, or a
    stdio/MCP call with `command=` and `args=` (the mapping reader reads what they set)."""
    out: list[McpServer] = []
    names: dict[int, str] = {}
    for node, _scope in index.dicts:
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(v, ast.Dict) and isinstance(k, ast.Constant) and isinstance(k.value, str):
                names[id(v)] = k.value
    for node, scope in index.dicts:
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        if "command" not in keys or not ({"args", "type", "env"} & keys):
            continue
        spec = plain(ev.eval(node, scope))
        if not isinstance(spec, dict):
            continue
        out.append(
            mcp_server_from_mapping(
                names.get(id(node), "(unnamed)"),
                spec,
                path=path,
                line=node.lineno,
                declared_in="mapping in code",
            )
        )
    for call, scope in index.calls:
        kws = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        if "command" not in kws or "args" not in kws:
            continue
        q = ev.qualname(call.func, scope) or short(call.func, 60)
        if not any(s in q.lower() for s in _STDIO_CALLEES):
            continue
        spec = {
            "command": plain(ev.eval(kws["command"], scope)),
            "args": plain(ev.eval(kws["args"], scope)),
        }
        out.append(
            mcp_server_from_mapping(
                "(unnamed)",
                spec,
                path=path,
                line=call.lineno,
                declared_in=f"{q.split('.')[-1]}(...)",
            )
        )
    return out

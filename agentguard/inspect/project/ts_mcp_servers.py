"""TypeScript/JavaScript: MCP server definitions in any code, not only the SDK's options.

claude-code-action builds the configuration it hands to Claude Code in its own code::

    baseMcpConfig.mcpServers.github = {
      command: "docker",
      args: ["run", "-i", "--rm", ..., "ghcr.io/github/github-mcp-server:sha-23fa0dd"],
    };

Read here, with the tree-sitter readers of :mod:`.ts_agents`: an object with
``command``/``args``/``url``/``type`` assigned to ``X.mcpServers.NAME`` (or
``X.mcpServers["NAME"]``), each entry of an object assigned to ``X.mcpServers``, and each
entry of an ``mcpServers: { NAME: {...} }`` property. Values are read as
:meth:`.ts_eval.TSModule.eval` reads them (a ``const`` in an enclosing block; anything else
unknown); ``args`` computed by a function of the same file whose one ``return`` is an
array literal are read from that array (its parameters stay unknown). An entry that is not
an object literal (a call, a parameter) is a server whose launch is unknown. Every
definition is kept: two of the same name are two candidates."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts

from agentguard.inspect.project.model import McpServer, Unknown
from agentguard.inspect.project.python_agents import mcp_server_from_mapping
from agentguard.inspect.project.ts_agents import _language
from agentguard.inspect.project.ts_eval import TSModule, _descendants, _short, _string, _text

NEEDLE = b"mcpServers"
_TABLE = "mcpServers"
_LAUNCH_KEYS = frozenset({"command", "args", "url", "httpUrl", "type", "transport", "**"})
_FUNCTIONS = ("function_declaration", "function_expression", "arrow_function", "function")


@dataclass
class TSServers:
    mcp_servers: list[McpServer] = field(default_factory=list)
    parse_error_line: int | None = None  # where an `mcpServers` could not be parsed
    read: set[int] = field(default_factory=set)  # start bytes of the tables read


def analyse_ts_servers(path: str, data: bytes) -> TSServers:
    """Every MCP server definition of one TS/JS file (see the module's docstring)."""
    tree = ts.Parser(_language(path)).parse(data)
    mod = TSModule(path, tree.root_node)
    out = TSServers()
    if tree.root_node.has_error:
        out.parse_error_line = _unread_table(tree.root_node, data)
    for node in _descendants(tree.root_node):
        if node.type == "pair":
            key = node.child_by_field_name("key")
            value = node.child_by_field_name("value")
            if key is not None and value is not None and _key(key) == _TABLE:
                _table(mod, out, value, "mcpServers object in code")
        elif node.type == "assignment_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            chain = _chain(left) if left is not None else None
            if right is None or chain is None or left is None:
                continue
            said = f"{_short(left, 60)} = ..."
            if len(chain) >= 2 and chain[-2] == _TABLE and chain[-1] is not None:
                _server(mod, out, chain[-1], right, node.start_point[0] + 1, said)
            elif chain[-1] == _TABLE:
                _table(mod, out, right, said)
    return out


def _unread_table(root: ts.Node, data: bytes) -> int | None:
    """The line of the first statement holding ``mcpServers`` that the grammar could not
    wholly parse (a definition there may be missed or misread), or None: the errors are
    in other statements (gemini-cli's tests hold ``importOriginal<typeof import("x")>()``,
    beyond the grammar, far from any server table)."""
    at = data.find(NEEDLE)
    while at >= 0:
        node: ts.Node | None = root.descendant_for_byte_range(at, at + len(NEEDLE))
        while node is not None and not _statement(node):
            node = node.parent
        if node is None or node.has_error:
            return (node or root).start_point[0] + 1
        at = data.find(NEEDLE, at + len(NEEDLE))
    return None


def _statement(node: ts.Node) -> bool:
    return node.type.endswith(("statement", "declaration")) or node.type in ("program", "ERROR")


def _key(node: ts.Node) -> str | None:
    if node.type in ("property_identifier", "identifier"):
        return _text(node)
    if node.type in ("string", "template_string"):
        return _string(node)
    return None  # computed: `[name]: ...`


def _chain(node: ts.Node) -> list[str | None] | None:
    """``a.b["c"]`` as ``["a", "b", "c"]`` (a key not written out: None); None when the
    node is not a chain of names."""
    if node.type == "identifier":
        return [_text(node)]
    if node.type == "member_expression":
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        head = _chain(obj) if obj is not None else None
        return None if head is None or prop is None else [*head, _text(prop)]
    if node.type == "subscript_expression":
        obj = node.child_by_field_name("object")
        index = node.child_by_field_name("index")
        head = _chain(obj) if obj is not None else None
        if head is None or index is None:
            return None
        return [*head, _string(index) if index.type in ("string", "template_string") else None]
    return None


def _table(mod: TSModule, out: TSServers, node: ts.Node, declared_in: str) -> None:
    """The servers of an ``mcpServers`` object: each entry at its own line. A name bound
    to an object literal of this file is that literal, read once however often it is used
    (gemini-cli's tests pass one `localMcpServers` to six settings)."""
    if node.type == "identifier":
        bound = mod._resolve(node, _text(node))
        if isinstance(bound, ts.Node) and bound.type == "object":
            node = bound
    if node.type == "object":
        if node.start_byte in out.read:
            return
        out.read.add(node.start_byte)
    else:
        value = mod.eval(node)
        if isinstance(value, dict):  # built otherwise (spreads of consts): at this line
            for name, spec in value.items():
                if name != "**":
                    _add(out, mod.path, name, spec, node.start_point[0] + 1, declared_in)
        return
    for pair in node.named_children:
        if pair.type != "pair":
            continue  # a spread of another table: read where that table is written
        key = pair.child_by_field_name("key")
        value = pair.child_by_field_name("value")
        name = _key(key) if key is not None else None
        if name is not None and value is not None:
            _server(mod, out, name, value, pair.start_point[0] + 1, declared_in)


def _server(
    mod: TSModule, out: TSServers, name: str, node: ts.Node, line: int, declared_in: str
) -> None:
    spec = mod.eval(node)
    if isinstance(spec, dict) and isinstance(spec.get("args"), Unknown) and node.type == "object":
        args_node = _property(node, "args")
        found = _returned_array(mod, args_node) if args_node is not None else None
        if found is not None:
            spec = {**spec, "args": found[1]}
            declared_in += f"; args returned by {found[0]}()"
    _add(out, mod.path, name, spec, line, declared_in)


def _add(out: TSServers, path: str, name: str, spec: Any, line: int, declared_in: str) -> None:
    if isinstance(spec, dict):
        if not (_LAUNCH_KEYS & spec.keys()):
            return  # `{ trust: true }`: settings of a server defined elsewhere
        spread = spec.get("**")
        if isinstance(spread, Unknown):  # `{...base, command: "npx"}`: what base sets is unknown
            spec = {"command": spread, "args": spread, **spec}
        out.mcp_servers.append(
            mcp_server_from_mapping(name, spec, path=path, line=line, declared_in=declared_in)
        )
    elif isinstance(spec, Unknown):
        out.mcp_servers.append(McpServer(name, path, line, declared_in, "unknown", spec))


def _property(obj: ts.Node, key: str) -> ts.Node | None:
    for pair in obj.named_children:
        k = pair.child_by_field_name("key") if pair.type == "pair" else None
        if k is not None and _key(k) == key:
            return pair.child_by_field_name("value")
    return None


def _returned_array(mod: TSModule, call: ts.Node) -> tuple[str, tuple[Any, ...]] | None:
    """(the function's name, the array it returns) for ``f(...)`` where ``f`` is one
    function of this file whose only ``return`` gives an array literal; else None."""
    fn = call.child_by_field_name("function") if call.type == "call_expression" else None
    if fn is None or fn.type != "identifier":
        return None
    name = _text(fn)
    bodies = [b for b in (_body_of(n, name) for n in _descendants(mod.root)) if b is not None]
    if len(bodies) != 1:
        return None  # none, or two candidates: not picked
    body = bodies[0]
    if body.type == "array":
        returned = [body]
    else:
        returns = _own_returns(body)  # (a bare `return` returns undefined: not one array)
        returned = [r for r in returns if r is not None]
        if len(returns) != 1 or len(returned) != 1 or returned[0].type != "array":
            return None
    value = mod.eval(returned[0])
    return (name, value) if isinstance(value, tuple) else None


def _body_of(node: ts.Node, name: str) -> ts.Node | None:
    """The body of ``function name(...)`` or ``const name = (...) => ...``."""
    if node.type == "function_declaration":
        n = node.child_by_field_name("name")
        return node.child_by_field_name("body") if n is not None and _text(n) == name else None
    if node.type == "variable_declarator":
        n = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if n is None or _text(n) != name or value is None or value.type not in _FUNCTIONS:
            return None
        return value.child_by_field_name("body")
    return None


def _own_returns(body: ts.Node) -> list[ts.Node | None]:
    """The returned expression of each ``return`` of ``body`` (not of nested functions)."""
    out: list[ts.Node | None] = []
    stack = list(body.named_children)
    while stack:
        n = stack.pop()
        if n.type in (*_FUNCTIONS, "method_definition", "class_declaration"):
            continue
        if n.type == "return_statement":
            out.append(n.named_children[0] if n.named_children else None)
            continue
        stack.extend(n.named_children)
    return out

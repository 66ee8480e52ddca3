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
definition is kept: two of the same name are two candidates.

Keys and names are read as node reads them: escapes decoded (``mcp\\u0053ervers``,
``"evil\\x2dpkg"``), ``["mcpServers"]``, numeric keys; ``??=``/``||=``/``&&=`` assign too;
``(x as T)``, ``x!`` and ``this`` on the left; ``Object.assign(x.mcpServers, {...})``; a
shorthand entry is its binding, a spread of a table of the file is that table, any other
spread or a getter is a server known only when the code runs; ``x.mcpServers[name]`` is
named by ``name``'s value when it is a known string, else by its text."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts

from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import McpServer, Unknown
from agentguard.inspect.project.servers_needle import spelled_bytes
from agentguard.inspect.project.ts_agents import _language
from agentguard.inspect.project.ts_eval import (
    TSModule,
    _key_name,
    _name,
    _short,
    _text,
    typed_descendants,
)

_TABLE = "mcpServers"
_LAUNCH_KEYS = frozenset({"command", "args", "url", "httpUrl", "type", "transport", "**"})
# `x.a ??= {...}` assigns as `=` does when x.a is unset; `||=` when falsy; `&&=` when set
_ASSIGNS = frozenset({"=", "??=", "||=", "&&="})
# `(x as T)`, `x!`, `(x)`, `x satisfies T`: the same object
_WRAPPERS = frozenset(
    {"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"}
)
_WRITTEN_LAUNCH_KEYS = _LAUNCH_KEYS - {"**"}
# the nodes the reader reads (its loop below), in the order of a walk of the tree
_READ = ("pair", "assignment_expression", "augmented_assignment_expression", "call_expression")
_FUNCTIONS = ("function_declaration", "function_expression", "arrow_function", "function")


@dataclass
class TSServers:
    mcp_servers: list[McpServer] = field(default_factory=list)
    parse_error_line: int | None = None  # where an `mcpServers` could not be parsed
    read: set[int] = field(default_factory=set)  # start bytes of the tables read
    # name -> the bodies of the functions of that name, gathered once for the file
    functions: dict[str, list[ts.Node]] | None = None


def analyse_ts_servers(path: str, data: bytes) -> TSServers:
    """Every MCP server definition of one TS/JS file (see the module's docstring)."""
    language = _language(path)
    tree = ts.Parser(language).parse(data)
    mod = TSModule(path, tree.root_node)
    out = TSServers()
    if tree.root_node.has_error:
        out.parse_error_line = _unread_table(tree.root_node, data)
    for node in typed_descendants(tree.root_node, language, _READ):
        if node.type == "pair":
            key = node.child_by_field_name("key")
            value = node.child_by_field_name("value")
            if key is not None and value is not None and _key_name(key) == _TABLE:
                _table(mod, out, value, "mcpServers object in code")
        elif node.type in ("assignment_expression", "augmented_assignment_expression"):
            op = node.child_by_field_name("operator")
            if node.type == "augmented_assignment_expression" and (
                op is None or _text(op) not in _ASSIGNS
            ):
                continue
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            chain = _chain(mod, left) if left is not None else None
            if right is None or chain is None or left is None:
                continue
            said = f"{_short(left, 60)} {_text(op) if op is not None else '='} ..."
            if len(chain) >= 2 and chain[-2] == _TABLE:
                name = chain[-1]
                if name is None:  # `x.mcpServers[key] = ...`: kept when it writes a launch
                    spec = mod.eval(right)
                    if not (isinstance(spec, dict) and _WRITTEN_LAUNCH_KEYS & spec.keys()):
                        continue  # (`{...server, extension}`: a copy of servers read elsewhere)
                    name = f"[{_short(_index(left), 40)}]"
                _server(mod, out, name, right, node.start_point[0] + 1, said)
            elif chain[-1] == _TABLE:
                _table(mod, out, right, said)
        elif node.type == "call_expression":
            _assigned(mod, out, node)
    return out


def _unread_table(root: ts.Node, data: bytes) -> int | None:
    """The line of the first statement holding ``mcpServers`` that the grammar could not
    wholly parse (a definition there may be missed or misread), or None: the errors are
    in other statements (gemini-cli's tests hold ``importOriginal<typeof import("x")>()``,
    beyond the grammar, far from any server table)."""
    for m in spelled_bytes().finditer(data):
        node: ts.Node | None = root.descendant_for_byte_range(m.start(), m.end())
        while node is not None and not _statement(node):
            node = node.parent
        if node is None or node.has_error:
            return (node or root).start_point[0] + 1
    return None


def _statement(node: ts.Node) -> bool:
    return node.type.endswith(("statement", "declaration")) or node.type in ("program", "ERROR")


def _chain(mod: TSModule, node: ts.Node) -> list[str | None] | None:
    """``a.b["c"]`` as ``["a", "b", "c"]``; None when the node is not a chain of names. A
    key not written out (``a.b[name]``) is its value when it is a known string, else None."""
    node = _unwrapped(node)
    if node.type in ("identifier", "this"):
        return [_name(node)]
    if node.type == "member_expression":
        obj = node.child_by_field_name("object")
        prop = node.child_by_field_name("property")
        head = _chain(mod, obj) if obj is not None else None
        return None if head is None or prop is None else [*head, _name(prop)]
    if node.type == "subscript_expression":
        obj = node.child_by_field_name("object")
        index = node.child_by_field_name("index")
        head = _chain(mod, obj) if obj is not None else None
        if head is None or index is None:
            return None
        key = mod.eval(index)
        return [*head, key if isinstance(key, str) else None]
    return None


def _unwrapped(node: ts.Node) -> ts.Node:
    while node.type in _WRAPPERS and node.named_children:
        node = node.named_children[0]
    return node


def _index(node: ts.Node) -> ts.Node:
    """The key of ``a[key]`` (the node itself when it has none)."""
    return _unwrapped(node).child_by_field_name("index") or node


def _assigned(mod: TSModule, out: TSServers, call: ts.Node) -> None:
    """``Object.assign(x.mcpServers, {...}, ...)``: each object after the first is a table."""
    fn = call.child_by_field_name("function")
    args = call.child_by_field_name("arguments")
    if fn is None or args is None or " ".join(_text(fn).split()) != "Object.assign":
        return
    values = [a for a in args.named_children if a.type != "comment"]
    chain = _chain(mod, values[0]) if values else None
    if chain is not None and chain[-1] == _TABLE:
        for value in values[1:]:
            _table(mod, out, value, f"Object.assign({_short(values[0], 40)}, ...)")


def _table(mod: TSModule, out: TSServers, node: ts.Node, declared_in: str) -> None:
    """The servers of an ``mcpServers`` object: each entry at its own line. A name bound
    to an object literal of this file is that literal, read once however often it is used
    (gemini-cli's tests pass one `localMcpServers` to six settings)."""
    while node.type in _WRAPPERS and node.named_children:  # `{...} as Record<...>`
        node = node.named_children[0]
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
    for entry in node.named_children:
        line = entry.start_point[0] + 1
        if entry.type == "pair":
            key = entry.child_by_field_name("key")
            value = entry.child_by_field_name("value")
            if key is None or value is None:
                continue
            name = _key_name(key)
            shown = name if name is not None else f"[{_short(key, 40)}]"
            _server(mod, out, shown, value, line, declared_in)
        elif entry.type == "shorthand_property_identifier":  # `{ github }`
            bound = mod._resolve(entry, _text(entry))
            if isinstance(bound, ts.Node):
                _server(mod, out, _name(entry), bound, line, declared_in)
            else:
                _add(out, mod.path, _name(entry), bound, line, declared_in)
        elif entry.type == "spread_element" and entry.named_children:
            _spread(mod, out, entry, declared_in)
        elif entry.type == "method_definition":  # `get github() {...}`: built when it runs
            name_node = entry.child_by_field_name("name")
            name = _name(name_node) if name_node is not None else _short(entry, 40)
            _add(out, mod.path, name, Unknown(_short(entry), "a function"), line, declared_in)


def _spread(mod: TSModule, out: TSServers, entry: ts.Node, declared_in: str) -> None:
    """``...other`` in a table: the servers of ``other`` when it is a table of this file
    (read where it is written, once), else servers known only when the code runs."""
    inner = entry.named_children[0]
    bound = mod._resolve(inner, _text(inner)) if inner.type == "identifier" else inner
    if isinstance(bound, ts.Node) and bound.type in ("object", *_WRAPPERS):
        _table(mod, out, bound, declared_in)
        return
    value = mod.eval(inner)
    line = entry.start_point[0] + 1
    if isinstance(value, dict):
        for name, spec in value.items():
            _add(
                out, mod.path, name if name != "**" else _short(entry, 40), spec, line, declared_in
            )
    else:
        _add(out, mod.path, _short(entry, 40), Unknown(_short(entry), "spread"), line, declared_in)


def _server(
    mod: TSModule, out: TSServers, name: str, node: ts.Node, line: int, declared_in: str
) -> None:
    spec = mod.eval(node)
    if isinstance(spec, dict) and isinstance(spec.get("args"), Unknown) and node.type == "object":
        args_node = _property(node, "args")
        found = _returned_array(mod, out, args_node) if args_node is not None else None
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
        if k is not None and _key_name(k) == key:
            return pair.child_by_field_name("value")
    return None


def _returned_array(
    mod: TSModule, out: TSServers, call: ts.Node
) -> tuple[str, tuple[Any, ...]] | None:
    """(the function's name, the array it returns) for ``f(...)`` where ``f`` is one
    function of this file whose only ``return`` gives an array literal; else None. (The
    file's functions are gathered once: a table of 20,000 `args: f()` is one walk.)"""
    fn = call.child_by_field_name("function") if call.type == "call_expression" else None
    if fn is None or fn.type != "identifier":
        return None
    name = _text(fn)
    if out.functions is None:
        out.functions = {}
        for n in typed_descendants(mod.root, _language(mod.path), _NAMED_BODIES):
            named = _named_body(n)
            if named is not None:
                out.functions.setdefault(named[0], []).append(named[1])
    bodies = out.functions.get(name, [])
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


_NAMED_BODIES = ("function_declaration", "variable_declarator")  # (what _named_body reads)


def _named_body(node: ts.Node) -> tuple[str, ts.Node] | None:
    """(name, body) of ``function name(...)`` or ``const name = (...) => ...``."""
    if node.type == "function_declaration":
        n = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        return (_text(n), body) if n is not None and body is not None else None
    if node.type == "variable_declarator":
        n = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if n is None or value is None or value.type not in _FUNCTIONS:
            return None
        body = value.child_by_field_name("body")
        return (_text(n), body) if body is not None else None
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

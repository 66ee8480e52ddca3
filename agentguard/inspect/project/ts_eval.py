"""TypeScript/JavaScript module model for the SDK reader: imports, scope-aware constant
resolution (``const`` in enclosing blocks, parameters are unknown), literal evaluation."""

from __future__ import annotations

import re
from typing import Any

import tree_sitter as ts

from agentguard.inspect.project.js_strings import cooked
from agentguard.inspect.project.model import OneOf, PathSym, Unknown
from agentguard.inspect.project.python_eval import join_path, parent_path

SDK_PACKAGES = {
    "@anthropic-ai/claude-agent-sdk": "claude-agent-sdk (TypeScript)",
    "@anthropic-ai/claude-code": "claude-code SDK (TypeScript)",
}
MAX_DEPTH = 24


def _text(node: ts.Node) -> str:
    return (node.text or b"").decode("utf-8", "replace")


def _short(node: ts.Node, limit: int = 80) -> str:
    text = " ".join(_text(node).split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _string(node: ts.Node) -> str | None:
    """A string literal's or a plain template's value, its escapes decoded as the engine
    decodes them (None: not one, or an escape with no certain value)."""
    if node.type == "string":
        return cooked(_text(node)[1:-1])
    if node.type == "template_string" and not any(
        c.type == "template_substitution" for c in node.named_children
    ):
        return cooked(_text(node)[1:-1], template=True)
    return None


def _key_name(key: ts.Node) -> str | None:
    """A property key as node reads it: a name, a string, a number, or a computed key that
    is a string literal (``["mcpServers"]``); None for a key known only when it runs."""
    if key.type in ("property_identifier", "identifier", "private_property_identifier"):
        return _name(key)
    if key.type == "number":
        try:
            return str(int(_text(key), 0))
        except ValueError:
            return None
    if key.type == "computed_property_name" and len(key.named_children) == 1:
        key = key.named_children[0]
    return _string(key)


def _name(node: ts.Node) -> str:
    """An identifier's name: ``mcp\\u0053ervers`` is ``mcpServers``."""
    text = _text(node)
    if "\\" not in text:
        return text
    return _IDENT_ESCAPE.sub(lambda m: cooked(m.group(0)) or m.group(0), text)


_IDENT_ESCAPE = re.compile(r"\\u(?:[0-9a-fA-F]{4}|\{[0-9a-fA-F]{1,8}\})")


class TSModule:
    def __init__(self, path: str, root: ts.Node) -> None:
        self.path = path
        self.root = root
        self.imports: dict[str, str] = {}  # local name -> "pkg:export" or "pkg:*"
        self.engine: str | None = None
        self.resolved: set[int] = set()  # start bytes of initialisers read through a name
        self._scopes: dict[tuple[int, int, str], dict[str, ts.Node | Unknown]] = {}
        self._collect_imports(root)

    def _collect_imports(self, root: ts.Node) -> None:
        for node in root.named_children:
            if node.type == "import_statement":
                src = node.child_by_field_name("source")
                pkg = _string(src) if src is not None else None
                if pkg not in SDK_PACKAGES:
                    continue
                self.engine = SDK_PACKAGES[pkg]
                for sub in _descendants(node):
                    if sub.type == "import_specifier":
                        name = sub.child_by_field_name("name")
                        alias = sub.child_by_field_name("alias")
                        if name is not None:
                            local = _text(alias if alias is not None else name)
                            self.imports[local] = f"{pkg}:{_text(name)}"
                    elif sub.type == "namespace_import":
                        ids = [c for c in sub.named_children if c.type == "identifier"]
                        if ids:
                            self.imports[_text(ids[0])] = f"{pkg}:*"
            elif node.type in ("lexical_declaration", "variable_declaration"):
                for decl in node.named_children:
                    value = decl.child_by_field_name("value")
                    name = decl.child_by_field_name("name")
                    if value is None or name is None or value.type != "call_expression":
                        continue
                    fn = value.child_by_field_name("function")
                    args = value.child_by_field_name("arguments")
                    if fn is None or _text(fn) != "require" or args is None:
                        continue
                    strs = [_string(a) for a in args.named_children]
                    pkg = strs[0] if strs else None
                    if pkg not in SDK_PACKAGES:
                        continue
                    self.engine = SDK_PACKAGES[pkg]
                    if name.type == "identifier":
                        self.imports[_text(name)] = f"{pkg}:*"
                    for sub in _descendants(name):
                        if sub.type == "shorthand_property_identifier_pattern":
                            self.imports[_text(sub)] = f"{pkg}:{_text(sub)}"

    def callee(self, fn: ts.Node) -> str | None:
        if fn.type == "identifier":
            ref = self.imports.get(_text(fn))
            return ref.split(":", 1)[1] if ref and not ref.endswith(":*") else None
        if fn.type == "member_expression":
            obj = fn.child_by_field_name("object")
            prop = fn.child_by_field_name("property")
            if obj is not None and prop is not None and obj.type == "identifier":
                ref = self.imports.get(_text(obj))
                if ref and ref.endswith(":*"):
                    return _text(prop)
        return None

    # -- evaluation ----------------------------------------------------------------
    def eval(self, node: ts.Node, depth: int = 0) -> Any:
        if depth > MAX_DEPTH:
            return Unknown(_short(node), "too many indirections")
        d = depth + 1
        t = node.type
        s = _string(node)
        if s is not None:
            return s
        if t in ("true", "false"):
            return t == "true"
        if t in ("null", "undefined"):
            return None
        if t == "number":
            try:
                return int(_text(node))
            except ValueError:
                return Unknown(_short(node), "number")
        if t == "array":
            items: list[Any] = []
            for c in node.named_children:
                if c.type == "spread_element" and c.named_children:
                    inner = self.eval(c.named_children[0], d)
                    if isinstance(inner, tuple):
                        items.extend(inner)
                    else:
                        items.append(Unknown(_short(c), "spread value"))
                elif c.type != "comment":
                    items.append(self.eval(c, d))
            return tuple(items)
        if t == "object":
            return self._object(node, d)
        if t in (
            "parenthesized_expression",
            "as_expression",
            "satisfies_expression",
            "non_null_expression",
            "type_assertion",
        ):
            inner = [c for c in node.named_children if not c.type.endswith("type")]
            return self.eval(inner[0], d) if inner else Unknown(_short(node), "expression")
        if t == "identifier":
            name = _text(node)
            if name == "__dirname":
                return PathSym("source-dir")
            if name == "__filename":
                return PathSym("source-file")
            if name == "undefined":
                return None
            value = self._resolve(node, name)
            return self.eval(value, d) if isinstance(value, ts.Node) else value
        if t == "ternary_expression":
            a = node.child_by_field_name("consequence")
            b = node.child_by_field_name("alternative")
            if a is not None and b is not None:
                return OneOf((self.eval(a, d), self.eval(b, d)))
        if t == "binary_expression":
            op = node.child_by_field_name("operator")
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            if (
                op is not None
                and left is not None
                and right is not None
                and _text(op) in ("||", "??")
            ):
                return OneOf((self.eval(left, d), self.eval(right, d)))
        if t == "member_expression":
            text = _text(node)
            if text.startswith("process.env."):
                return Unknown(text, f"environment variable {text.split('.', 2)[2]}")
            if text == "import.meta.dirname":
                return PathSym("source-dir")
        if t == "subscript_expression" and _text(node).startswith("process.env["):
            return Unknown(_short(node), "environment variable")
        if t == "call_expression":
            return self._call(node, d)
        return Unknown(_short(node), "expression")

    def _object(self, node: ts.Node, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for c in node.named_children:
            if c.type == "pair":
                key = c.child_by_field_name("key")
                value = c.child_by_field_name("value")
                if key is None or value is None:
                    continue
                k = _key_name(key)
                if k is None:  # `[expr]: ...`: any key, `command` as well
                    out["**"] = Unknown(_short(c), "a key known only when the code runs")
                else:
                    out[k] = self.eval(value, depth)
            elif c.type == "shorthand_property_identifier":
                found = self._resolve(c, _text(c))
                out[_text(c)] = self.eval(found, depth) if isinstance(found, ts.Node) else found
            elif c.type == "spread_element" and c.named_children:
                inner = self.eval(c.named_children[0], depth)
                if isinstance(inner, dict):
                    out.update(inner)
                else:
                    out["**"] = Unknown(_short(c), "spread of a value not known")
            elif c.type == "method_definition":
                out[_text(c.child_by_field_name("name") or c)] = Unknown(_short(c), "function")
        return out

    def _call(self, node: ts.Node, depth: int) -> Any:
        fn = node.child_by_field_name("function")
        args_node = node.child_by_field_name("arguments")
        if fn is None:
            return Unknown(_short(node), "call")
        name = _text(fn)
        args = (
            [self.eval(a, depth) for a in args_node.named_children if a.type != "comment"]
            if args_node is not None
            else []
        )
        if name == "process.cwd":
            return PathSym("process-cwd")
        if name in ("path.resolve", "path.join", "resolve", "join") and args:
            return join_path(args)
        if name in ("path.dirname", "dirname") and len(args) == 1:
            return parent_path(args[0])
        if name in ("fileURLToPath", "url.fileURLToPath") and args_node is not None:
            inner = args_node.named_children
            if inner and _text(inner[0]) == "import.meta.url":
                return PathSym("source-file")
        return Unknown(_short(node), f"result of {_short(fn, 40)}()")

    def _declarations(self, block: ts.Node) -> dict[str, ts.Node | Unknown]:
        """The first declaration of each name in ``block``, gathered once per block (a
        table of 20,000 names each resolved by a walk of the block was quadratic)."""
        key = (block.start_byte, block.end_byte, block.type)
        found = self._scopes.get(key)
        if found is None:
            found = {}
            for stmt in block.named_children:
                for name, value in _declared(stmt):
                    found.setdefault(name, value)
            self._scopes[key] = found
        return found

    def _resolve(self, use: ts.Node, name: str) -> ts.Node | Unknown:
        """The initialiser of ``name`` in the nearest enclosing block that declares it."""
        node: ts.Node | None = use.parent
        while node is not None:
            if node.type in ("statement_block", "program", "class_body", "switch_body"):
                found = self._declarations(node).get(name)
                if isinstance(found, ts.Node):
                    self.resolved.add(found.start_byte)
                if found is not None:
                    return found
            if node.type in (
                "function_declaration",
                "function_expression",
                "arrow_function",
                "method_definition",
                "function",
            ):
                params = node.child_by_field_name("parameters") or node.child_by_field_name(
                    "parameter"
                )
                if params is not None and any(
                    _text(p) == name for p in _descendants(params) if p.type == "identifier"
                ):
                    return Unknown(name, "function parameter")
            node = node.parent
        if name in self.imports:
            return Unknown(name, "imported")
        return Unknown(name, "name not defined in this file")


def _declared(stmt: ts.Node) -> list[tuple[str, ts.Node | Unknown]]:
    """(name, initialiser) of each variable a statement declares."""
    target = stmt
    if stmt.type == "export_statement":
        decl = stmt.child_by_field_name("declaration")
        if decl is None:
            return []
        target = decl
    if target.type not in ("lexical_declaration", "variable_declaration"):
        return []
    out: list[tuple[str, ts.Node | Unknown]] = []
    for decl in target.named_children:
        if decl.type != "variable_declarator":
            continue
        n = decl.child_by_field_name("name")
        if n is not None and n.type == "identifier":
            name = _text(n)
            value = decl.child_by_field_name("value")
            out.append((name, value or Unknown(name, "declared without a value")))
    return out


def _descendants(node: ts.Node) -> list[ts.Node]:
    out: list[ts.Node] = []
    stack = [node]
    while stack:
        n = stack.pop()
        out.append(n)
        stack.extend(reversed(n.named_children))
    return out


# (the language is kept with its query: an id is another object's once the first is gone)
_QUERIES: dict[tuple[int, tuple[str, ...]], tuple[ts.Language, ts.Query]] = {}


def typed_descendants(
    node: ts.Node, language: ts.Language, types: tuple[str, ...]
) -> list[ts.Node]:
    """``[n for n in _descendants(node) if n.type in types]``, the same nodes in the same
    order (a parent before its children, siblings in order), found by a tree-sitter query
    in C: a Python walk made a node object for every node of a large file (gemini-cli's
    tests), where a reader wants a few kinds. Sorted by start, the longer first: where a
    node and one below it start at the same byte, the one above holds more (none of the
    kinds asked for here wraps another of them without brackets or keys around it).
    ``language``: the grammar the tree was parsed with."""
    key = (id(language), types)
    cached = _QUERIES.get(key)
    if cached is not None and cached[0] is language:
        query = cached[1]
    else:
        query = ts.Query(language, "[" + " ".join(f"({t})" for t in types) + "] @n")
        _QUERIES[key] = (language, query)
    found = ts.QueryCursor(query).captures(node).get("n", [])
    return sorted(found, key=lambda n: (n.start_byte, -n.end_byte))

"""TypeScript/JavaScript agent code for ``--write-launch``: the ``mcpServers`` entries of a
``query()``'s options (``tracker: {command: "npx", args: ["-y", "pkg"]}``), parsed with
tree-sitter as the reader parses them.

Only a string literal that is the launch's argument itself (no escape, no template, no
concatenation, no variable: those stay notes, with the reason) is edited, in its own
quotes. The edited source is parsed again: it must parse without error, and its tokens
must be the original's with exactly those literals replaced."""

from __future__ import annotations

from collections.abc import Sequence

import tree_sitter as ts

from agentguard.facts.agents import McpServer
from agentguard.harden.launch_edit import (
    OVER_BUDGET,
    Budget,
    Todo,
    done_note,
    pinned_args,
    refused_note,
    unwritten_note,
)
from agentguard.inspect.project.js_strings import cooked
from agentguard.inspect.project.ts_agents import _language

_WHY = {
    "template_string": "the argument is a template literal",
    "binary_expression": "the argument is a concatenation",
    "identifier": "the argument is a variable",
    "member_expression": "the argument is a variable",
    "call_expression": "the argument is computed",
}


def _parse(path: str, data: bytes) -> ts.Tree:
    return ts.Parser(_language(path)).parse(data)


def _key(pair: ts.Node, data: bytes) -> str | None:
    key = pair.child_by_field_name("key")
    if key is None:
        return None
    text = data[key.start_byte : key.end_byte].decode("utf-8", "replace")
    if key.type == "string":
        return cooked(text[1:-1])  # as the reader reads a key: its escapes decoded
    return text if key.type == "property_identifier" else None


def _plain_string(node: ts.Node, data: bytes) -> str | None:
    """A string literal's value when it has no escapes (else None)."""
    if node.type != "string" or any(c.type == "escape_sequence" for c in node.children):
        return None
    return "".join(
        data[c.start_byte : c.end_byte].decode("utf-8")
        for c in node.children
        if c.type == "string_fragment"
    )


def _pairs(obj: ts.Node, data: bytes) -> dict[str, ts.Node]:
    out: dict[str, ts.Node] = {}
    for pair in obj.named_children:
        value = pair.child_by_field_name("value")
        if pair.type == "pair" and (k := _key(pair, data)) is not None and value is not None:
            out[k] = value
    return out


def _servers(root: ts.Node, data: bytes, server: McpServer) -> list[ts.Node]:
    """The ``args`` of every object of the file that holds a command and args and may be
    ``server`` as the reader read it (the reader also follows a ``const``, so an object
    that is no pair's value may be it too; :func:`_may_be`)."""
    found: list[ts.Node] = []
    stack = [root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        if node.type != "object":
            continue
        pairs = _pairs(node, data)
        if "command" in pairs and "args" in pairs and _may_be(node, pairs, data, server):
            found.append(pairs["args"])
    return found


def _may_be(obj: ts.Node, pairs: dict[str, ts.Node], data: bytes, server: McpServer) -> bool:
    """Whether an object may be ``server``: the key it is the value of (when it is one),
    and every plain literal of its command and arguments, equal to the reader's. What is
    not a plain literal may evaluate to anything, so it does not rule the object out."""
    parent = obj.parent
    key = _key(parent, data) if parent is not None and parent.type == "pair" else None
    if key is not None and key != server.name:
        return False  # (a key not read here, a computed one, does not rule it out)
    command = _plain_string(pairs["command"], data)
    if command is not None and command != server.command:
        return False
    args = pairs["args"]
    if args.type != "array" or not isinstance(server.args, tuple):
        return True
    elts = [c for c in args.named_children if c.type != "comment"]
    if any(e.type == "spread_element" for e in elts):
        return True
    if len(elts) != len(server.args):
        return False
    return all(
        (got := _plain_string(e, data)) is None or got == want
        for e, want in zip(elts, server.args, strict=True)
    )


def _one(path: str, data: bytes, root: ts.Node, todo: Todo) -> tuple[int, int, str] | str:
    launch, pin, server = todo
    found = _servers(root, data, server)
    if len(found) != 1:
        return f"{len(found)} entries of the file may be this server (one is needed)"
    args = found[0]
    if args.type != "array":
        return "the arguments are not a list written there"
    elts = [c for c in args.named_children if c.type != "comment"][: launch.operand + 1]
    if len(elts) <= launch.operand or any(e.type == "spread_element" for e in elts):
        return "the arguments are built with `...`"
    item = elts[launch.operand]
    if item.type in _WHY:
        return _WHY[item.type]
    if _plain_string(item, data) != launch.spec:
        return "the argument is not a plain string written there"
    quote = data[item.start_byte : item.start_byte + 1].decode()
    values = pinned_args(launch, pin)
    if any(quote in v or "\\" in v or "\n" in v for v in values):
        return "its quotes cannot hold the pinned argument"
    return item.start_byte, item.end_byte, ", ".join(f"{quote}{v}{quote}" for v in values)


def _checked(path: str, data: bytes, edits: Sequence[tuple[int, int, str]]) -> bytes | None:
    """The edited source, when it parses cleanly into the original's tokens with exactly
    the edited literals' tokens swapped for the new ones' (None otherwise)."""
    new = data
    for start, end, text in sorted(edits, reverse=True):
        new = new[:start] + text.encode("utf-8") + new[end:]
    tree = _parse(path, new)
    if tree.root_node.has_error:
        return None
    old = _tokens(_parse(path, data).root_node)
    expected: list[tuple[str, bytes]] = []
    at = 0
    for start, end, text in sorted(edits):
        expected += [(t, data[a:b]) for a, b, t in old if a >= at and b <= start]
        piece = b"[" + text.encode("utf-8") + b"]"
        expected += [(t, piece[a:b]) for a, b, t in _tokens(_parse(path, piece).root_node)][1:-1]
        at = end
    expected += [(t, data[a:b]) for a, b, t in old if a >= at]
    got = [(t, new[a:b]) for a, b, t in _tokens(tree.root_node)]
    return new if got == expected else None


def _tokens(node: ts.Node) -> list[tuple[int, int, str]]:
    """The leaves of a tree, in order: (start byte, end byte, type)."""
    out: list[tuple[int, int, str]] = []
    stack = [node]
    while stack:
        n = stack.pop()
        if n.child_count:
            stack.extend(reversed(n.children))
        elif n.end_byte > n.start_byte:
            out.append((n.start_byte, n.end_byte, n.type))
    return out


def plan_ts(path: str, text: str, todo: Sequence[Todo]) -> tuple[str | None, list[str], int]:
    """The edited source (None: nothing to write), the notes, how many launches it pins."""
    data = text.encode("utf-8")
    tree = _parse(path, data)
    notes: list[str] = []
    done: list[str] = []
    edits: list[tuple[int, int, str]] = []
    budget = Budget(text)
    budget.take(2)  # the check of every edit at once
    for item in todo:
        got = (
            "the file does not parse"
            if tree.root_node.has_error
            else _one(path, data, tree.root_node, item)
            if budget.take(2)
            else OVER_BUDGET
        )
        if isinstance(got, str):
            notes.append(refused_note(item[0], item[1], got))
        elif _checked(path, data, [got]) is None:
            notes.append(
                refused_note(item[0], item[1], "the edit did not re-read as the pinned launch")
            )
        else:
            edits.append(got)
            done.append(done_note(item[0], item[1]))
    if not edits:
        return None, notes, 0
    new = _checked(path, data, edits)
    if new is None:
        return None, [*notes, unwritten_note(todo)], 0
    return new.decode("utf-8"), [*notes, *done], len(edits)

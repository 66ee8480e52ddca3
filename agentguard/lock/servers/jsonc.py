"""JSON with comments (JSONC: `//` and `/* */` comments, trailing commas), parsed into
nodes that keep where each value is in the text, so that one string can be replaced and
every other byte (comments, layout, key order) kept.

Parsing is iterative over tokens with a depth cap: a hostile file nested a million deep is
refused (:class:`JsoncError`), never a crash."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

MAX_DEPTH = 256
_TOKEN = re.compile(
    r"(?P<ws>[ \t\r\n\ufeff]+)|(?P<line>//[^\n]*)|(?P<block>/\*.*?\*/)"
    r'|(?P<str>"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*")'
    r"|(?P<num>-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)|(?P<lit>true|false|null)"
    r"|(?P<punct>[{}\[\]:,])",
    re.S,
)


class JsoncError(ValueError):
    pass


@dataclass
class Node:
    kind: str  # "object" | "array" | "string" | "number" | "literal"
    start: int
    end: int
    value: Any = None  # a string's decoded text; a number's or literal's value
    members: list[tuple[str, Node]] = field(default_factory=list)  # object
    items: list[Node] = field(default_factory=list)  # array

    def get(self, key: str) -> list[Node]:
        return [v for k, v in self.members if k == key]


def _tokens(text: str) -> list[tuple[str, int, int]]:
    out = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise JsoncError(f"unexpected text at offset {pos}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "line", "block"):
            out.append((kind, m.start(), m.end()))
        pos = m.end()
    return out


def parse(text: str) -> Node:
    toks = _tokens(text)
    stack: list[tuple[Node, str | None]] = []  # (container, pending key for objects)
    root: Node | None = None
    expect_key = False
    i = 0
    while i < len(toks):
        kind, a, b = toks[i]
        raw = text[a:b]
        i += 1
        if kind == "punct" and raw in ",:":
            continue  # (order is checked loosely: the file was valid enough for the reader)
        if kind == "punct" and raw in "}]":
            if not stack:
                raise JsoncError(f"unbalanced {raw!r} at offset {a}")
            node, _ = stack.pop()
            if (node.kind == "object") != (raw == "}"):
                raise JsoncError(f"mismatched {raw!r} at offset {a}")
            node.end = b
            expect_key = bool(stack) and stack[-1][0].kind == "object"
            continue
        if stack and stack[-1][0].kind == "object" and expect_key:
            if kind != "str":
                raise JsoncError(f"an object key is not a string at offset {a}")
            stack[-1] = (stack[-1][0], json.loads(raw))
            expect_key = False
            continue
        if kind == "punct":
            node = Node("object" if raw == "{" else "array", a, b)
        elif kind == "str":
            node = Node("string", a, b, json.loads(raw))
        else:
            node = Node("number" if kind == "num" else "literal", a, b, json.loads(raw))
        if stack:
            parent, key = stack[-1]
            if parent.kind == "object":
                if key is None:
                    raise JsoncError(f"a value without a key at offset {a}")
                parent.members.append((key, node))
                stack[-1] = (parent, None)
            else:
                parent.items.append(node)
        elif root is None:
            root = node
        else:
            raise JsoncError(f"more than one value at offset {a}")
        if node.kind in ("object", "array"):
            if len(stack) >= MAX_DEPTH:
                raise JsoncError(f"nested deeper than {MAX_DEPTH}")
            stack.append((node, None))
            expect_key = node.kind == "object"
        else:
            expect_key = bool(stack) and stack[-1][0].kind == "object"
    if root is None or stack:
        raise JsoncError("the text ends inside a value" if stack else "no value")
    return root


def walk(node: Node) -> list[tuple[str, Node]]:
    """Every object member (key, value) in the tree, depth first, without recursion."""
    out: list[tuple[str, Node]] = []
    todo = [node]
    while todo:
        n = todo.pop()
        out.extend(n.members)
        todo.extend(v for _, v in reversed(n.members))
        todo.extend(reversed(n.items))
    return out

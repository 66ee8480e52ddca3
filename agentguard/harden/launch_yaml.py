"""YAML for ``--write-launch``: a workflow's agent step whose input holds the servers as
JSON in a block scalar (run-gemini-cli's ``settings: |``), and a server list written in
YAML itself.

The view of a YAML text is the document as the workflow reader loads it, with each string
that reads as a JSON(C) object replaced by what it holds, so that the server inside an
input is found, and checked, as the reader found it. The tokens that may spell an argument
are a double-quoted string (JSON's, inside a literal block, or YAML's own), a
single-quoted string, and a plain scalar; each is written back in its own style, and only
where that style holds the new text as it is (a plain scalar that would need quotes, a
folded block, a token inside a quoted scalar: refused, as the re-read shows)."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentguard.harden.launch_edit import Token
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import PARSE_FAILURES
from agentguard.inspect.project.yaml_lined import load_yaml

DOUBLE, SINGLE, PLAIN = "double-quoted string", "single-quoted string", "plain scalar"
EMBEDDED = "\x00json"  # the key under which a view holds a JSON text's value
_PLAIN_SAFE = re.compile(r"^[A-Za-z0-9@_./+~=-][A-Za-z0-9@_./+~=,\[\]-]*\Z")
_ITEM = re.compile(r"^(\s*)-\s+$")  # a block sequence item's lead, before its scalar
_BEFORE = " \t[,{:\n"
_AFTER = " \t],}\r\n#"


def _embedded(value: Any) -> Any:
    """``value`` with every string holding a JSON(C) object replaced by that object (the
    inputs that carry settings as JSON text)."""
    if isinstance(value, dict):
        return {k: _embedded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_embedded(v) for v in value]
    if isinstance(value, str):
        # every string, as the workflow reader parses it (a comment or a BOM may come
        # before the `{`): a text the reader takes for servers is never hidden from the view
        try:
            doc = load_jsonc(value).value
        except PARSE_FAILURES:
            return value
        return {EMBEDDED: doc} if isinstance(doc, dict) else value
    return value


def _bounded(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start else "\n"
    after = text[end] if end < len(text) else "\n"
    return before in _BEFORE and after in _AFTER


class YamlFormat:
    name = "YAML"

    def view(self, text: str) -> Any:
        return _embedded(load_yaml(text).value)

    def tokens(self, text: str, value: str) -> list[Token]:
        out: list[Token] = []
        for style, spelt in (
            (DOUBLE, json.dumps(value, ensure_ascii=False)),
            (SINGLE, "'" + value.replace("'", "''") + "'"),
            (PLAIN, value),
        ):
            at = text.find(spelt)
            while at >= 0 and len(out) <= 64:
                end = at + len(spelt)
                if style != PLAIN or _bounded(text, at, end):
                    out.append(Token(at, end, value, style))
                at = text.find(spelt, at + 1)
        return out

    def encode(self, text: str, token: Token, values: Sequence[str]) -> str | None:
        if token.style == PLAIN:
            if not all(_PLAIN_SAFE.match(v) for v in values):
                return None
            spelt = list(values)
        elif token.style == SINGLE:
            if any("\n" in v for v in values):
                return None
            spelt = ["'" + v.replace("'", "''") + "'" for v in values]
        else:
            spelt = [json.dumps(v, ensure_ascii=False) for v in values]
        line_start = text.rfind("\n", 0, token.start) + 1
        item = _ITEM.match(text[line_start : token.start])
        if item is None or len(spelt) == 1:
            return ", ".join(spelt)  # a flow sequence, or a JSON array inside a block scalar
        nl = text.find("\n", token.end)
        eol = "\r\n" if nl > 0 and text[nl - 1] == "\r" else "\n"
        return f"{eol}{item.group(1)}- ".join(spelt)

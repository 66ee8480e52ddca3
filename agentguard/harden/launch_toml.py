"""TOML for ``--write-launch`` (Codex ``config.toml`` ``[mcp_servers.NAME]``, OpenHands
``[mcp] stdio_servers``): the string tokens of a TOML text, found by a scan that knows
the only context TOML has (comments and the four kinds of string), and written back in the
token's own style: a basic string (``"..."``, escaped as TOML escapes) or a literal one
(``'...'``, which has no escapes: a value it cannot hold is refused). Multi-line strings
are never edited: they are skipped, and a launch spelt in one is left to the notes."""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Sequence
from typing import Any

from agentguard.harden.launch_edit import Token

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

BASIC, LITERAL = "basic string", "literal string"
_ESCAPES = {"b": "\b", "t": "\t", "n": "\n", "f": "\f", "r": "\r", '"': '"', "\\": "\\"}
_UNICODE = re.compile(r"u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})")
_LITERAL_SAFE = re.compile(r"^[^'\x00-\x08\x0a-\x1f\x7f]*\Z")


def _decode_basic(body: str) -> str | None:
    """A basic string's value (None: an escape this reader does not take as certain)."""
    out: list[str] = []
    i = 0
    while i < len(body):
        ch = body[i]
        if ch != "\\":
            out.append(ch)
            i += 1
            continue
        nxt = body[i + 1 : i + 2]
        if nxt in _ESCAPES:
            out.append(_ESCAPES[nxt])
            i += 2
            continue
        m = _UNICODE.match(body, i + 1)
        if m is None:
            return None
        code = int(m.group(1) or m.group(2), 16)
        if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
            return None
        out.append(chr(code))
        i = m.end()
    return "".join(out)


def string_tokens(text: str) -> list[Token]:
    """Every single-line string of ``text`` (keys included), in order."""
    out: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch == "#":
            nl = text.find("\n", i)
            i = n if nl < 0 else nl + 1
        elif text.startswith('"""', i) or text.startswith("'''", i):
            i = _skip_multiline(text, i)
        elif ch == '"':
            j = i + 1
            while j < n and text[j] not in '"\n':
                j += 2 if text[j] == "\\" else 1
            if j >= n or text[j] == "\n":
                return out  # not TOML past here: the parse refuses it anyway
            value = _decode_basic(text[i + 1 : j])
            if value is not None:
                out.append(Token(i, j + 1, value, BASIC))
            i = j + 1
        elif ch == "'":
            j = text.find("'", i + 1)
            nl = text.find("\n", i + 1)
            if j < 0 or 0 <= nl < j:
                return out
            out.append(Token(i, j + 1, text[i + 1 : j], LITERAL))
            i = j + 1
        else:
            i += 1
    return out


def _skip_multiline(text: str, i: int) -> int:
    quote = text[i : i + 3]
    j = i + 3
    while True:
        k = text.find(quote, j)
        if k < 0:
            return len(text)
        if quote == '"""':
            slashes = 0
            while k - 1 - slashes >= j and text[k - 1 - slashes] == "\\":
                slashes += 1
            if slashes % 2:
                j = k + 1
                continue
        end = k + 3
        while end < len(text) and end - k < 5 and text[end] == quote[0]:
            end += 1  # up to two quotes of the closing run belong to the value
        return end


def _basic(value: str) -> str:
    # JSON's escapes are a subset of TOML's basic-string escapes (\uXXXX included)
    return json.dumps(value, ensure_ascii=False)


class TomlFormat:
    name = "TOML"

    def view(self, text: str) -> Any:
        return tomllib.loads(text)

    def tokens(self, text: str, value: str) -> list[Token]:
        return [t for t in string_tokens(text) if t.value == value]

    def encode(self, text: str, token: Token, values: Sequence[str]) -> str | None:
        if token.style == LITERAL:
            if not all(_LITERAL_SAFE.match(v) for v in values):
                return None
            return ", ".join(f"'{v}'" for v in values)
        return ", ".join(_basic(v) for v in values)

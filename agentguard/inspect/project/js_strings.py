"""The value of a JavaScript/TypeScript string literal or plain template, as the engine
reads it: its escapes decoded (``"@acme/tracker\\u002dmcp"`` is ``@acme/tracker-mcp``).

Dropping an escape, or keeping it as written, reads another package than the one that
runs (and a lock, or a fix, then names a package an attacker may own). An escape whose
value depends on the mode (legacy octal, ``\\8``) or that makes no text (a lone surrogate)
is no value: None, and the caller keeps the literal unknown."""

from __future__ import annotations

import re

_SIMPLE = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_LINE_ENDS = ("\r\n", "\n", "\r", "\u2028", "\u2029")
_HEX2 = re.compile(r"[0-9A-Fa-f]{2}")
_HEX4 = re.compile(r"[0-9A-Fa-f]{4}")
_BRACED = re.compile(r"\{([0-9A-Fa-f]{1,6})\}")


def cooked(body: str, *, template: bool = False) -> str | None:
    """The value of a literal's ``body`` (the text between its quotes or backticks)."""
    units: list[int] = []  # UTF-16 code units, as the engine holds a string
    i, n = 0, len(body)
    while i < n:
        ch = body[i]
        if ch != "\\":
            if template and ch == "\r":  # a template's CR and CRLF are LF
                i += 2 if body.startswith("\r\n", i) else 1
                units.append(0x0A)
                continue
            _push(units, ord(ch))
            i += 1
            continue
        got = _escape(body, i + 1)
        if got is None:
            return None
        value, i = got
        units.extend(value)
    return _text(units)


def _escape(body: str, at: int) -> tuple[list[int], int] | None:
    """The code units of the escape whose letter is at ``at``, and where it ends."""
    if at >= len(body):
        return None
    ch = body[at]
    for end in _LINE_ENDS:
        if body.startswith(end, at):
            return [], at + len(end)  # a line continuation: no text
    if ch in _SIMPLE:
        return [ord(_SIMPLE[ch])], at + 1
    if ch == "0" and not body[at + 1 : at + 2].isdigit():
        return [0], at + 1
    if ch.isdigit():
        return None  # legacy octal, `\8`, `\9`: another value in strict code, or an error
    if ch == "x":
        m = _HEX2.match(body, at + 1)
        return None if m is None else ([int(m.group(0), 16)], m.end())
    if ch == "u":
        braced = _BRACED.match(body, at + 1)
        if braced is not None:
            code = int(braced.group(1), 16)
            return None if code > 0x10FFFF else (_units(code), braced.end())
        m = _HEX4.match(body, at + 1)
        return None if m is None else ([int(m.group(0), 16)], m.end())
    return _units(ord(ch)), at + 1  # any other character stands for itself


def _units(code: int) -> list[int]:
    if code < 0x10000:
        return [code]
    code -= 0x10000
    return [0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF)]


def _push(units: list[int], code: int) -> None:
    units.extend(_units(code))


def _text(units: list[int]) -> str | None:
    """The code units as text (None: a lone surrogate, which is no text)."""
    try:
        return b"".join(u.to_bytes(2, "little") for u in units).decode("utf-16-le")
    except UnicodeDecodeError:
        return None

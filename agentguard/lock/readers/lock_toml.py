"""TOML in the regular layout uv and Poetry write their locks in, read several times faster
than tomllib (which reads a string one character at a time).

tomllib is the definition. This reader accepts a small part of TOML: one ``key = value`` per
line, ``[table]`` and ``[[array]]`` headers of bare keys, basic strings whose only escapes
are ``\\"`` and ``\\\\``, decimal integers, booleans, arrays and inline tables of those,
comments, LF or CRLF line ends. Anything else (a literal or multi-line string, another
escape, a float or a date, a dotted key, a header with spaces or quotes, a control
character, a key or table defined twice) is ``None``: the caller reads the text with
tomllib, which gives the value or the error. Where this reader answers, it answers what
tomllib does (tests/lock/test_lock_toml.py holds it to that on real and hostile locks).
"""

from __future__ import annotations

import re
from typing import Any

_BAD = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # (after CRLF -> LF: a lone CR is one)
_KEY = r'(?:[A-Za-z0-9_-]+|"[^"\\\n]*")'
_BODY = r'[^"\\\n]*(?:\\["\\][^"\\\n]*)*'  # (unrolled: one pass, no alternation per character)
_STR = rf'"{_BODY}"'
_INT = r"-?(?:0|[1-9][0-9]*)"
_SCALAR = rf"(?:{_STR}|{_INT}|true|false)"
_BLANK = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
_HEADER = re.compile(
    r"(\[\[?)([A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*)(\]\]?)[ \t]*(?:#[^\n]*)?(?:\n|\Z)"
)
_KV = re.compile(rf"({_KEY})[ \t]*=[ \t]*")
_END = re.compile(r"[ \t]*(?:#[^\n]*)?(?:\n|\Z)")
_STRING = re.compile(rf'"({_BODY})"')
_ATOM = re.compile(rf"({_INT})|(true|false)")
_SPACE = re.compile(r"[ \t]*")
_ARRAY_SPACE = re.compile(r"(?:[ \t\n]|#[^\n]*)*")
_UNESCAPE = re.compile(r'\\(["\\])')
# an inline table of scalars on one line (most of a lock: each file with its hash), read at once
_FLAT = re.compile(
    rf"\{{[ \t]*{_KEY}[ \t]*=[ \t]*{_SCALAR}(?:[ \t]*,[ \t]*{_KEY}[ \t]*=[ \t]*{_SCALAR})*[ \t]*\}}"
)
_PAIR = re.compile(rf'({_KEY})[ \t]*=[ \t]*(?:"({_BODY})"|({_INT})|(true|false))')


class _Outside(Exception):
    """The text leaves the layout this reader knows: tomllib reads it."""


def loads(text: str) -> dict[str, Any] | None:
    """The document as tomllib would give it, or None when tomllib must decide."""
    if "\r" in text:
        text = text.replace("\r\n", "\n")
    if _BAD.search(text):
        return None
    try:
        return _Document(text).read()
    except (_Outside, IndexError, RecursionError):
        return None


def _skip(space: re.Pattern[str], text: str, pos: int) -> int:
    m = space.match(text, pos)
    return m.end() if m is not None else pos


def _key(raw: str) -> str:
    return raw[1:-1] if raw[0] == '"' else raw


def _string(raw: str) -> str:
    return _UNESCAPE.sub(r"\1", raw) if "\\" in raw else raw


class _Document:
    def __init__(self, text: str) -> None:
        self.text = text
        self.root: dict[str, Any] = {}
        # the tables headers made: id -> defined by its own header (False: only by a deeper one)
        self.tables: dict[int, bool] = {id(self.root): True}
        self.arrays: set[int] = set()  # the arrays of tables [[...]] made

    def read(self) -> dict[str, Any]:
        text, n, pos = self.text, len(self.text), 0
        table = self.root
        while pos < n:
            m = _BLANK.match(text, pos)
            if m is not None and m.end() > pos:
                pos = m.end()
                continue
            if text[pos] == "[":
                h = _HEADER.match(text, pos)
                if h is None or len(h[1]) != len(h[3]):
                    raise _Outside
                table = self._open(h[2].split("."), array=len(h[1]) == 2)
                pos = h.end()
                continue
            pos = self._pair(table, pos)
            end = _END.match(text, pos)
            if end is None:
                raise _Outside
            pos = end.end()
        return self.root

    def _open(self, keys: list[str], *, array: bool) -> dict[str, Any]:
        table = self.root
        for k in keys[:-1]:
            child = table.get(k)
            if child is None:
                child = table[k] = {}
                self.tables[id(child)] = False
            elif isinstance(child, list) and id(child) in self.arrays:
                child = child[-1]
            elif not (isinstance(child, dict) and id(child) in self.tables):
                raise _Outside  # a value (or an inline table) is not extended by a header
            table = child
        last = table.get(keys[-1])
        new: dict[str, Any] = {}
        if array:
            if last is None:
                last = table[keys[-1]] = []
                self.arrays.add(id(last))
            elif not (isinstance(last, list) and id(last) in self.arrays):
                raise _Outside
            last.append(new)
        elif last is None:
            table[keys[-1]] = new
        elif isinstance(last, dict) and self.tables.get(id(last)) is False:
            new = last  # made by a deeper header: this is its own, once
        else:
            raise _Outside
        self.tables[id(new)] = True
        return new

    def _pair(self, table: dict[str, Any], pos: int) -> int:
        """``key = value`` at ``pos`` into ``table`` (a key defined twice is tomllib's to
        report); where the value ends."""
        kv = _KV.match(self.text, pos)
        if kv is None:
            raise _Outside
        key = _key(kv[1])
        if key in table:
            raise _Outside
        table[key], end = self._value(kv.end())
        return end

    def _value(self, pos: int) -> tuple[Any, int]:
        text = self.text
        c = text[pos]
        if c == '"':
            m = _STRING.match(text, pos)
            if m is None:
                raise _Outside
            return _string(m[1]), m.end()
        if c == "{":
            flat = _FLAT.match(text, pos)
            if flat is not None:
                return self._flat(flat[0]), flat.end()
            return self._inline(pos + 1)
        if c == "[":
            return self._array(pos + 1)
        m = _ATOM.match(text, pos)
        if m is None:
            raise _Outside
        return (int(m[1]) if m[1] is not None else m[2] == "true"), m.end()

    @staticmethod
    def _flat(raw: str) -> dict[str, Any]:
        pairs = _PAIR.findall(raw)
        table: dict[str, Any] = {}
        for key, string, integer, boolean in pairs:
            if string or not (integer or boolean):
                table[_key(key)] = _string(string)
            elif integer:
                table[_key(key)] = int(integer)
            else:
                table[_key(key)] = boolean == "true"
        if len(table) != len(pairs):
            raise _Outside  # a key twice
        return table

    def _inline(self, pos: int) -> tuple[dict[str, Any], int]:
        text = self.text
        table: dict[str, Any] = {}
        pos = _skip(_SPACE, text, pos)
        if text[pos] == "}":
            return table, pos + 1
        while True:
            pos = _skip(_SPACE, text, self._pair(table, pos))
            if text[pos] == "}":
                return table, pos + 1
            if text[pos] != ",":
                raise _Outside
            pos = _skip(_SPACE, text, pos + 1)

    def _array(self, pos: int) -> tuple[list[Any], int]:
        text = self.text
        items: list[Any] = []
        while True:
            pos = _skip(_ARRAY_SPACE, text, pos)
            if text[pos] == "]":
                return items, pos + 1
            value, pos = self._value(pos)
            items.append(value)
            pos = _skip(_ARRAY_SPACE, text, pos)
            if text[pos] == "]":
                return items, pos + 1
            if text[pos] != ",":
                raise _Outside
            pos += 1

"""A tolerant JSONC reader (devcontainer.json): comments, trailing commas, line numbers.

Accepts JSON plus ``//`` and ``/* */`` comments and trailing commas before ``]``/``}``,
as VS Code's reader does. Returns a :class:`LinedDoc`; raises :class:`DocumentError`
with the line of the problem. Duplicate keys are an error (never "take the first").
"""

from __future__ import annotations

import json
import re
from typing import Any

from agentguard.inspect.project.lined import MAX_DEPTH, MAX_NODES, DocumentError, KeyPath, LinedDoc

_NUMBER = re.compile(r"-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?")
_STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.lines: dict[KeyPath, int] = {}
        self.spans: dict[KeyPath, tuple[int, int]] = {}  # where each value is in the text
        self.count = 0
        self._mark = (0, 1)  # (position, line) last computed: lines are counted forward

    def line(self) -> int:
        last_pos, last_line = self._mark
        if self.pos < last_pos:
            last_pos, last_line = 0, 1
        line = last_line + self.text.count("\n", last_pos, self.pos)
        self._mark = (self.pos, line)
        return line

    def fail(self, message: str) -> DocumentError:
        return DocumentError(f"not valid JSON: {message}", line=self.line())

    def skip(self) -> None:
        text = self.text
        while self.pos < len(text):
            ch = text[self.pos]
            if ch in " \t\r\n\ufeff":
                self.pos += 1
            elif text.startswith("//", self.pos):
                end = text.find("\n", self.pos)
                self.pos = len(text) if end < 0 else end + 1
            elif text.startswith("/*", self.pos):
                end = text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("unterminated /* comment")
                self.pos = end + 2
            else:
                return

    def value(self, path: KeyPath, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_NODES:
            raise DocumentError(f"more than {MAX_NODES} values", self.line(), "too-large")
        if depth > MAX_DEPTH:
            raise DocumentError(f"nested deeper than {MAX_DEPTH} levels", self.line(), "too-deep")
        self.skip()
        self.lines.setdefault(path, self.line())
        start = self.pos
        got = self._value(path, depth)
        self.spans[path] = (start, self.pos)
        return got

    def _value(self, path: KeyPath, depth: int) -> Any:
        if self.pos >= len(self.text):
            raise self.fail("unexpected end of file")
        ch = self.text[self.pos]
        if ch == "{":
            return self.obj(path, depth)
        if ch == "[":
            return self.arr(path, depth)
        if ch == '"':
            return self.string()
        for word, val in (("true", True), ("false", False), ("null", None)):
            if self.text.startswith(word, self.pos):
                self.pos += len(word)
                return val
        m = _NUMBER.match(self.text, self.pos)
        if m and m.end() > self.pos:
            self.pos = m.end()
            return json.loads(m.group(0))
        raise self.fail(f"unexpected character {ch!r}")

    def string(self) -> str:
        m = _STRING.match(self.text, self.pos)
        if not m:
            raise self.fail("bad string")
        self.pos = m.end()
        return str(json.loads(m.group(0)))

    def obj(self, path: KeyPath, depth: int) -> dict[str, Any]:
        self.pos += 1
        out: dict[str, Any] = {}
        while True:
            self.skip()
            if self.text.startswith("}", self.pos):
                self.pos += 1
                return out
            if not self.text.startswith('"', self.pos):
                raise self.fail("expected a quoted key")
            key_line = self.line()
            key = self.string()
            if key in out:
                raise DocumentError(f"duplicate key {key!r}", key_line, "duplicate-key")
            self.skip()
            if not self.text.startswith(":", self.pos):
                raise self.fail("expected ':'")
            self.pos += 1
            key_path = (*path, key)
            self.lines[key_path] = key_line
            out[key] = self.value(key_path, depth + 1)
            if not self.sep("}"):
                return out

    def arr(self, path: KeyPath, depth: int) -> list[Any]:
        self.pos += 1
        out: list[Any] = []
        while True:
            self.skip()
            if self.text.startswith("]", self.pos):
                self.pos += 1
                return out
            out.append(self.value((*path, len(out)), depth + 1))
            if not self.sep("]"):
                return out

    def sep(self, close: str) -> bool:
        """After a member: True to read another, False once ``close`` was consumed."""
        self.skip()
        if self.text.startswith(",", self.pos):
            self.pos += 1
            return True
        if self.text.startswith(close, self.pos):
            self.pos += 1
            return False
        raise self.fail(f"expected ',' or {close!r}")


def load_jsonc(text: str) -> LinedDoc:
    return load_jsonc_spans(text)[0]


def load_jsonc_spans(text: str) -> tuple[LinedDoc, dict[KeyPath, tuple[int, int]]]:
    """The document, and where each value is in ``text`` (start and end offsets, by key
    path): what a rewrite of one value needs to keep every other byte."""
    reader = _Reader(text)
    value = reader.value((), 0)
    reader.skip()
    if reader.pos != len(text):
        raise reader.fail("extra data after the value")
    return LinedDoc(value, reader.lines), reader.spans

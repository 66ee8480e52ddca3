"""Where a Python file's string literals and comments are, from its bytes (for the
pre-filters): a position outside them is code as Python reads it.

An import statement is code: a framework's name inside a docstring (``>>> from pydantic_ai
import Agent``), a string or a comment imports nothing, however it is laid out. The
pre-filters ask :func:`in_code` for each place that looks like an import before they let a
file through to ``ast.parse``.

The scan is lexical, as Python's tokenizer reads the file: from the start, each ``#`` in
code opens a comment to the end of its line, and each quote in code opens a string that
ends at its closing quote (a backslash escapes the character after it, in raw strings too,
as far as the end of a string goes). It is run with regular expressions (a few hundred
megabytes a second) and only as far as a question needs.

It never calls code a string: where the bytes are not a string Python would end where the
expression ends, the scan stops and everything after that point is code (so a file is
parsed rather than skipped):

- an f-string (or t-string) whose text holds a quote or a ``#``, or whose braces are not
  plain ``{name}`` fields and ``{{``/``}}``: since Python 3.12 a field may hold a string
  in the same quotes (``f"{x["key"]}"``) or a comment, so its end cannot be told without
  parsing the fields;
- a quote that opens no string that ends (an unterminated string: a syntax error).

The bytes it is given are the text as Python decodes it, in UTF-8: a file that declares
another encoding (UTF-7 spells a quote ``+ACI-``; in Shift_JIS a character's second byte
can be ``\\``) is handed over decoded (:func:`.python_source.as_python_reads`).
"""

from __future__ import annotations

import re
from bisect import bisect_right

# a comment, a string literal (triple-quoted first), or a quote that opens none that ends
_TOKEN = re.compile(
    rb"#[^\r\n]*"
    rb"|'''[^'\\]*(?:(?:\\.|'(?!''))[^'\\]*)*'''"
    rb'|"""[^"\\]*(?:(?:\\.|"(?!""))[^"\\]*)*"""'
    rb"|'''|\"\"\""
    rb"|'[^'\\\r\n]*(?:\\(?:\r\n|.)[^'\\\r\n]*)*'"
    rb'|"[^"\\\r\n]*(?:\\(?:\r\n|.)[^"\\\r\n]*)*"'
    rb"|['\"]",
    re.S,
)
_FORMATTED = frozenset(b"fFtT")  # prefixes of strings whose fields are code
# an f-string's text whose end is the first closing quote under every Python: no quote,
# no `#`, and braces that are only `{{`, `}}` and fields without braces inside
_PLAIN_FIELDS = re.compile(rb"(?:[^{}'\"#]|\{\{|\}\}|\{[^{}'\"#]*\})*", re.S)
_STEP = 4096  # how far one call of the scan reads past the position asked about (an
# import is most often near the top: a first answer costs the lines before it)


class Literals:
    """The string literals and comments of one file, found as far as asked."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self._starts: list[int] = []
        self._ends: list[int] = []
        self._formatted: list[bool] = []  # an f-string (its fields are code)
        self._scanned = 0  # every token starting before this is recorded
        self._stop: int | None = None  # where the scan stopped: code from there on

    def in_code(self, at: int, *, fields: bool = False) -> bool:
        """Whether the byte at ``at`` is code: in no string literal and no comment.
        ``fields``: an f-string counts as code (an expression may stand in its fields)."""
        if self._stop is None and at >= self._scanned:
            self._scan(at + _STEP)
        if self._stop is not None and at >= self._stop:
            return True
        i = bisect_right(self._starts, at) - 1
        return i < 0 or at >= self._ends[i] or (fields and self._formatted[i])

    def _scan(self, until: int) -> None:
        data = self.data
        starts, ends, formatted = self._starts, self._ends, self._formatted
        pos = ends[-1] if ends else 0
        for m in _TOKEN.finditer(data, pos):
            start, end = m.span()
            first = data[start]
            if first == 0x23:  # a comment
                fstring = False
            else:  # a string, or a quote that opens none
                if end - start == 1 or (end - start == 3 and data[start + 1] == first):
                    self._stop = start  # (a lone quote, or `'''`: a string that never ends)
                    return
                fstring = (start > 0 and data[start - 1] in _FORMATTED) or (
                    start > 1 and data[start - 2] in _FORMATTED
                )
                if fstring and not self._plain_fstring(m):
                    self._stop = start
                    return
            starts.append(start)
            ends.append(end)
            formatted.append(fstring)
            if end > until:
                self._scanned = end
                return
        self._scanned = len(data) + 1

    def _plain_fstring(self, m: re.Match[bytes]) -> bool:
        quote = 3 if m.group().startswith((b"'''", b'"""')) else 1
        return _PLAIN_FIELDS.fullmatch(self.data, m.start() + quote, m.end() - quote) is not None

"""The text of each ``except`` handler of a Python file, found without parsing it.

Used by the second-stage pre-filter of the fallback reader (:func:`.python_fallback_filter.
may_switch_model`): a file whose handlers hold no switch of a model cannot yield a
fallback, so it need not be parsed for one.

The handler text found here is always a superset of the handler's body as Python reads it.
A handler runs from its ``except`` line to the first physical line that starts a new
logical line at the ``except``'s indentation or less. A line only ends it when nothing is
open before it: strings and comments are skipped as the tokenizer skips them (so a
bracket or quote inside them does not count), and an unclosed bracket, an unterminated
triple-quoted string or a trailing backslash keeps the handler going. Where this reader
cannot tell, it reads on (to the end of the file at worst): reading too much costs a
parse, never a miss. An ``except`` inside a string is taken as a handler too, for the
same reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# the keyword (where it starts a line, past its indentation: told by the bytes before it,
# which is 8 times faster than a search anchored at every line's start)
_EXCEPT = re.compile(rb"except\b")
_INDENT_BYTES = b" \t\f"
# What the tokenizer skips, leftmost first: strings (any prefix, triple-quoted ones to their
# end or to the end of the file), comments; and what the handler's end depends on:
# brackets, backslash-newlines and newlines.
_TOKENS = re.compile(
    rb'(?P<s>"""(?:\\[\s\S]|[^\\])*?(?:"""|\Z)'
    rb"|'''(?:\\[\s\S]|[^\\])*?(?:'''|\Z)"
    rb'|"(?:\\[\s\S]|[^"\\\n])*(?:"|(?=\n)|\Z)'
    rb"|'(?:\\[\s\S]|[^'\\\n])*(?:'|(?=\n)|\Z))"
    rb"|(?P<c>#[^\n]*)"
    rb"|(?P<o>[(\[{])"
    rb"|(?P<x>[)\]}])"
    rb"|(?P<b>\\\r?\n)"
    rb"|(?P<n>\n)"
)
_BLANK_OR_COMMENT = re.compile(rb"[ \t\f\r]*(?:#[^\n]*)?(?=\n|\Z)")


def _indent(data: bytes, start: int) -> tuple[int, int]:
    """(column, offset of the first character) of the physical line at ``start``; a tab
    advances to the next multiple of 8, as Python counts it."""
    col = 0
    i = start
    while i < len(data):
        ch = data[i]
        if ch == 0x20:
            col += 1
        elif ch == 0x09:
            col = (col // 8 + 1) * 8
        elif ch == 0x0C:
            col = 0
        else:
            break
        i += 1
    return col, i


def handler_texts(data: bytes) -> Iterator[bytes]:
    """The text of every ``except`` clause with its body (a superset of it, see above)."""
    if b"\r" in data:  # Python also ends a line at a lone CR
        data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    for match in _EXCEPT.finditer(data):
        line = data.rfind(b"\n", 0, match.start()) + 1
        if data[line : match.start()].strip(_INDENT_BYTES):
            continue  # (not the first word of its line)
        column = _indent(data, line)[0]
        yield data[line : _handler_end(data, match.end(), column)]


def _handler_end(data: bytes, pos: int, column: int) -> int:
    depth = 0
    for tok in _TOKENS.finditer(data, pos):
        kind = tok.lastgroup
        if kind == "o":
            depth += 1
        elif kind == "x":
            depth -= 1  # below zero is a syntax error: the file is read on
        elif kind == "n" and depth == 0:
            nxt = tok.end()
            if _BLANK_OR_COMMENT.match(data, nxt):
                continue
            col, _first = _indent(data, nxt)
            if col <= column:
                return nxt
    return len(data)  # (an unterminated string runs to the end of the file)

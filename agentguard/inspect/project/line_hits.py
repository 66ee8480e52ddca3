"""Which lines of a text hold a word, without splitting the text into lines.

The line readers (``claude``, ``codex`` and ``gemini`` command lines) start a logical line
only at a physical line that holds their word, and join the lines after it. On a recorded
HTTP exchange of several megabytes (a test cassette that names a model in every response)
splitting the text and looping over every line in Python cost more than everything else
done with the file: here the word is found with ``str.find``, its line's number counted
with ``str.count``, and a line is cut out of the text only when it is read.

Lines and their numbers are those of ``str.splitlines()``: when the text holds a line
break other than ``\\n`` (``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``,
``\\u2028``, ``\\u2029``) it is split, and each line tested, as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

_OTHER_BREAKS = "\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"


class _Lines(Sequence[str]):
    """``text.splitlines()`` of a text whose only line break is ``\\n``, cut out line by
    line when asked for: from a line whose start is known, or the one after it."""

    def __init__(self, text: str, starts: dict[int, int]) -> None:
        self._text = text
        self._starts = starts  # line index -> offset of its first character
        self._count = text.count("\n") + (0 if not text or text.endswith("\n") else 1)

    def __len__(self) -> int:
        return self._count

    def _start(self, index: int) -> int:
        start = self._starts.get(index)
        if start is None:
            known = max((k for k in self._starts if k < index), default=-1)
            start = self._starts[known] if known >= 0 else 0
            for _ in range(known if known >= 0 else 0, index):
                start = self._text.index("\n", start) + 1
            self._starts[index] = start
        return start

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError(index)
        start = self._start(index)
        end = self._text.find("\n", start)
        return self._text[start : end if end >= 0 else len(self._text)]


def lines_holding(text: str, words: tuple[str, ...]) -> tuple[list[int], Sequence[str]]:
    """(the indexes of the lines that hold any of ``words``, in order; the lines, as
    ``text.splitlines()`` gives them). No word may hold a line break."""
    if any(b in text for b in _OTHER_BREAKS):
        lines = text.splitlines()
        return [i for i, line in enumerate(lines) if any(w in line for w in words)], lines
    found: set[int] = set()
    for word in words:
        at = text.find(word)
        while at >= 0:
            found.add(text.rfind("\n", 0, at) + 1)
            end = text.find("\n", at)  # (the rest of this line is the same line)
            if end < 0:
                break
            at = text.find(word, end)
    indexes: list[int] = []
    starts: dict[int, int] = {}
    index = 0
    counted = 0
    for start in sorted(found):
        index += text.count("\n", counted, start)
        counted = start
        indexes.append(index)
        starts[index] = start
    return indexes, _Lines(text, starts)

"""Whether a Python file can import a module, from its bytes alone (for the pre-filters).

Every qualname the code readers resolve starts with a module an import statement of the
file names (:class:`~agentguard.inspect.project.python_scope.ModuleIndex` binds nothing
else to a module), and that module's first name is written right after ``import``,
``from`` or a comma of ``import a, b``, with only blanks and backslash continuations
between (Python allows nothing else there: a comment ends the statement). A reader that
finds nothing without an import of its framework need not parse a file in which no
occurrence of the framework's name stands there: docstrings, comments and strings that name
it (``"openai:gpt-4o"``, "build agents with...") do not.

The test is a necessary condition only: ``x = 1, agents`` passes it. Each place that passes
is then asked whether it is code (:mod:`.python_literals`): not in a string literal nor a
comment, where no import statement can be.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable

from agentguard.inspect.project.python_literals import Literals

_BLANKS = b" \t\f"
_NAME_BYTES = frozenset(
    b"_0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ" + bytes(range(0x80, 0x100))
)
_BLANK_BYTES = frozenset(_BLANKS)
_LIST_BYTES = _NAME_BYTES | _BLANK_BYTES | frozenset(b".,")
_LINE_REACH = 4096  # (a line longer than this before a gap: "maybe, a comment")
_IMPORT_WORD = re.compile(rb"(?<![\w\x80-\xff])import(?![\w\x80-\xff])")


# What may stand between two tokens inside brackets: blanks, line ends, backslash
# continuations, comments. Each spelled one way only (a comment runs to its line's end, a
# continuation's CR LF is one continuation, never a continuation and a line end): a gap a
# match cannot take, tried every way it may be split, costs time exponential in its length
# (`command ` and forty `#`s took longer than any run).
GAP = rb"(?:[ \t\f\r\n]|\\(?:\r\n|\r(?!\n)|\n)|#[^\r\n]*(?![^\r\n]))*"
# The same without comments: a test that starts at many places of a file (every letter
# that may begin a word) reads no comment through, since a comment read to its line's end
# from each place a line holds is quadratic; there a comment ends the match as "maybe".
BLANKS = rb"(?:[ \t\f\r\n]|\\(?:\r\n|\r(?!\n)|\n))*"


def _is_name_byte(byte: int) -> bool:
    # ASCII letters, digits, `_`, and any byte of a non-ASCII character (an identifier may
    # hold one: `agentsé` is another name)
    return byte in _NAME_BYTES


def _skip_back(data: bytes, i: int, over: frozenset[int]) -> int:
    """The start of the run of ``over`` bytes and backslash continuations ending at ``i``."""
    while i > 0:
        byte = data[i - 1]
        if byte in over:
            i -= 1
        elif byte == 0x0A and i >= 2 and data[i - 2] == 0x5C:  # backslash, \n
            i -= 2
        elif byte == 0x0A and i >= 3 and data[i - 2] == 0x0D and data[i - 3] == 0x5C:  # \r\n
            i -= 3
        elif byte == 0x0D and i >= 2 and data[i - 2] == 0x5C:  # backslash, \r
            i -= 2
        else:
            break
    return i


def _after_an_opener(data: bytes, start: int) -> bool:
    """Whether ``data[:start]``, less its trailing blanks and backslash continuations, ends
    with ``import`` or ``from``, or with a comma of a statement that holds ``import``
    (``import a as b, <module>``: only names, dots, blanks and commas stand between)."""
    i = _skip_back(data, start, _BLANK_BYTES)
    if data.endswith((b"import", b"from"), 0, i):
        return True
    if not data.endswith(b",", 0, i):
        return False
    run = data[_skip_back(data, i, _LIST_BYTES) : i]
    return _IMPORT_WORD.search(run) is not None


def gap_start(data: bytes, i: int, also: bytes = b"") -> tuple[int, bool]:
    """The start of the gap that ends at ``i`` (blanks, newlines, backslash continuations
    and the bytes of ``also``: what stands between two tokens inside brackets), and
    whether the line it starts on may end in a comment (a ``#`` on it, or a line longer
    than the search reaches): a comment's last byte is then where the gap starts, and what
    stands before the comment was not looked for. Only that line can hold a comment: a
    line the gap crosses whole holds nothing else."""
    crossed = False
    while i > 0:
        byte = data[i - 1]
        if byte == 0x0A or byte == 0x0D:
            i -= 2 if byte == 0x0A and i >= 2 and data[i - 2] == 0x0D else 1
            crossed = True
            if i > 0 and data[i - 1] == 0x5C:
                i -= 1  # (a backslash continuation)
        elif byte in _BLANK_BYTES or byte in also:
            i -= 1
        else:
            break
    if not crossed:
        return i, False  # (a comment on the gap's own line would run on over what follows)
    lo = max(0, i - _LINE_REACH)
    line = data.rfind(b"\n", lo, i)
    line = max(line, data.rfind(b"\r", max(line, lo), i)) + 1
    return i, (line == 0 and lo > 0) or data.find(b"#", line, i) >= 0


def may_import(data: bytes, roots: Iterable[bytes] = (), *, prefixes: Iterable[bytes] = ()) -> bool:
    """False only when no import statement of the file can name a module whose first name
    is one of ``roots``, or starts with one of ``prefixes``. A name in a string literal or
    a comment (a docstring's ``from agents import X``) is no import."""
    for name, whole in (*((r, True) for r in roots), *((p, False) for p in prefixes)):
        at = data.find(name)
        while at >= 0:
            end = at + len(name)
            if (
                (not whole or end == len(data) or not _is_name_byte(data[end]))
                and (at == 0 or not _is_name_byte(data[at - 1]))  # (not `smolagents`)
                and _after_an_opener(data, at)
                and _literals(data).in_code(at)
            ):
                return True
            at = data.find(name, end)
    return False


def spelled_in_code(data: bytes, names: Iterable[bytes], *, whole: bool = False) -> bool:
    """Whether one of ``names`` stands in code or in a field of an f-string (a name a
    reader matches as a callee, a keyword or an import): not only in strings and comments.
    ``whole``: as a whole name, not inside a longer one (a reader that matches a callee's
    last name, or a keyword, exactly: ``ShellTool`` is not read in ``ShellToolSet``)."""
    for name in names:
        at = data.find(name)
        while at >= 0:
            end = at + len(name)
            if (
                not whole
                or (
                    (at == 0 or data[at - 1] not in _NAME_BYTES)
                    and (end == len(data) or data[end] not in _NAME_BYTES)
                )
            ) and in_code(data, at):
                return True
            at = data.find(name, end)
    return False


def in_code(data: bytes, at: int) -> bool:
    """Whether ``data[at]`` is code or in a field of an f-string (where an expression, a
    call, may stand): not in a plain string literal, nor in a comment."""
    return _literals(data).in_code(at, fields=True)


_ASCII_NAME_CHAR = re.compile(r"[A-Za-z0-9_]")
_ASCII = bytes(range(0x80))
_MAX_ASKED = 512


@functools.lru_cache(maxsize=4096)
def _reads_as_ascii(char: str) -> bool:
    return _ASCII_NAME_CHAR.search(unicodedata.normalize("NFKC", char)) is not None


def spelled_non_ascii(data: bytes) -> bool:
    """Whether code (or an f-string's field) holds a character that Python reads as an
    ASCII letter, digit or ``_`` in a name: names are NFKC-normalised (fullwidth
    letters import ``claude_agent_sdk``), so no test of a name's bytes
    sees such a name, and a pre-filter that finds one says "maybe". Characters that stay
    other than ASCII (accents, CJK, fullwidth punctuation) spell no name a reader matches."""
    if data.isascii():
        return False  # (most files: faster than the search)
    # (first the characters alone, without their places: a character's NFKC form holds an
    # ASCII one only from its own decomposition, never from its neighbours)
    chars = set(data.translate(None, _ASCII).decode("utf-8", "replace"))
    spelled = sorted(c.encode() for c in chars if _reads_as_ascii(c))
    if not spelled:
        return False
    # then where each such character stands (a few hundred in strings at most are asked
    # about one by one: past that, "maybe")
    where = re.compile(b"|".join(re.escape(c) for c in spelled))
    for asked, m in enumerate(where.finditer(data)):
        if asked >= _MAX_ASKED or in_code(data, m.start()):
            return True
    return False


# the literals of the file asked about last: the pre-filters ask about one file several
# times in a row (each reader's import test), and the scan is made once, as far as asked
_LAST: Literals | None = None


def _literals(data: bytes) -> Literals:
    global _LAST
    last = _LAST
    if last is None or last.data is not data:
        last = _LAST = Literals(data)
    return last

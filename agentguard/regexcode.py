"""The programs of the regular expressions agentguard compiles, compiled once.

Every start compiles the same regular expressions again: agentguard's readers, redactor
and rules, and the libraries they import, about 300 patterns (40 ms of CPU on a large
tree, 23 ms of it before the readers are forked, most of the rest after they end, where no
other CPU helps). Python's ``re`` keeps its compiled patterns for one process only.

:func:`install` gives ``re``'s compiler module a ``compile`` of its own (``re._compile``
calls it by that module attribute, once per pattern and process, after its own cache
missed). For a pattern given as text or bytes it does what Python's does, in the same
place of the stack (so a warning the parser gives names the same caller), from the same
functions: parse, generate the code, hand the program (flags, code, group count, names)
to ``_sre.compile``; and keeps the program in a table. The next run hands the kept program
to ``_sre.compile`` without parsing (``_sre`` checks the code before it makes the
pattern; a program it refuses is compiled again, as without the table). Installed only
under the Pythons whose compiler does exactly this (3.10 to 3.13, the same source); a
pattern given parsed (``re.Scanner``) or as a subclass of text is compiled the same way,
and not kept.

Not kept: a pattern whose compile may warn (Python warns at a process's first compile: a
program from the table would never warn), screened by its text in one pass; a debug
compile; a pattern longer than :data:`MAX_KEPT_CHARS` or with more than
:data:`MAX_KEPT_GROUPS` parentheses (one a scanned file spelled, or one whose parse may run
out of stack where the caller's is deeper); and, when the table is written, an entry whose
program does not make the very pattern Python's own compiler makes (equal code, flags,
groups and group names).

The table is a :class:`agentguard.codetable.Table` (where it is kept, when it is read and
written, what it trusts: see there), versioned by this interpreter's exact version and the
regular expression engine's magic number, so another build's programs are not read.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from agentguard.codetable import Table

# (pattern, flags) -> what the compiler hands to _sre.compile after the pattern:
# (flags, code, groups - 1, group names -> numbers, numbers -> names)
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]
Key = tuple[str | bytes, int]

_VERSIONS = ((3, 10), (3, 11), (3, 12), (3, 13))  # (whose compile() is the one mirrored here)
_compiler: Any = getattr(re, "_compiler", None) or getattr(re, "sre_compile", None)
_parser: Any = getattr(re, "_parser", None) or getattr(re, "sre_parse", None)
_sre: Any = sys.modules.get("_sre")
_DEBUG = int(re.DEBUG)
MAX_KEPT_CHARS = 4096
MAX_KEPT_GROUPS = 48
_KEEP_BYTES = 1024 * 1024  # (a table of agentguard's own patterns is about 250 KB)
_MAX_BYTES = 4 * 1024 * 1024

# What may make Python's parser warn: a set that may nest or combine (FutureWarning), a
# conditional group's reference (DeprecationWarning unless plain digits), a bytes pattern's
# non-ASCII group name (3.11), and before 3.11 global flags not at the start (any letter
# the parser reads as a flag, `t` included)
_SET_SIGNS = ("[[", "--", "&&", "~~", "||")
_LATE_FLAGS = "".join(sorted(getattr(_parser, "FLAGS", {}))) if sys.version_info < (3, 11) else ""

_TABLE: Table[Key, Program] | None = None
_ORIGINAL: Any = None


def _valid_key(k: object) -> bool:
    return type(k) is tuple and len(k) == 2 and type(k[0]) in (str, bytes) and type(k[1]) is int


def _whole(v: object) -> bool:
    """A program of the right shape, its group count the count of its numbers' names."""
    return (
        type(v) is tuple
        and len(v) == 5
        and type(v[0]) is int
        and type(v[1]) is list
        and type(v[2]) is int
        and type(v[3]) is dict
        and type(v[4]) is tuple
        and v[2] >= 0
        and len(v[4]) == v[2] + 1
        and all(
            type(name) is str and type(n) is int and 0 < n <= v[2] and v[4][n] == name
            for name, n in v[3].items()
        )
    )


def install() -> None:
    """Give ``re``'s compiler the table's ``compile`` (once per process; not at all where
    ``re`` is not built as this module knows)."""
    global _TABLE, _ORIGINAL
    if _TABLE is not None or sys.version_info[:2] not in _VERSIONS:
        return
    if _compiler is None or _parser is None or _sre is None:
        return
    original = getattr(_compiler, "compile", None)
    if original is None or not hasattr(_compiler, "_code") or not hasattr(_sre, "compile"):
        return
    version = f"3 {sys.version} {getattr(_sre, 'MAGIC', '?')} {getattr(_sre, 'CODESIZE', '?')}"
    _TABLE = Table(
        "regex-programs",
        version.encode("ascii", "replace"),
        _valid_key,
        _whole,
        verify=_verified,
        keep_bytes=_KEEP_BYTES,
        max_bytes=_MAX_BYTES,
    )
    _ORIGINAL = original
    _compiler.compile = _compile


def _compile(p: Any, flags: Any = 0) -> Any:
    """Python's ``compile(p, flags)`` (re/_compiler.py), step by step in its place on the
    stack, for every input; the program kept for a pattern of exactly text or bytes (flags
    of any int kind: 3.13's ``re.sub`` passes a subclass of int, a caller may pass a bool)."""
    table = _TABLE
    key: Key | None = None
    if table is not None and (type(p) is str or type(p) is bytes) and isinstance(flags, int):
        key = (p, int(flags))
        program = table.get(key)  # (its shape checked by _whole when it was read)
        if program is not None:
            try:
                return _sre.compile(p, *program)
            except Exception:  # (not a program _sre takes: compiled as without the table)
                table.forget(key)
    if isinstance(p, (str, bytes)):
        pattern = p
        parsed = _parser.parse(p, flags)
    else:  # (already parsed: re.Scanner's way)
        pattern = None
        parsed = p
    code = _compiler._code(parsed, flags)
    if flags & _DEBUG:
        print()  # noqa: T201  (what Python's compile prints before the dump)
        _compiler.dis(code)
    groupindex = parsed.state.groupdict
    indexgroup = [None] * parsed.state.groups
    for k, i in groupindex.items():
        indexgroup[i] = k
    made = _sre.compile(
        pattern,
        flags | parsed.state.flags,
        code,
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )
    if key is not None and table is not None and not flags & _DEBUG and _keepable(p):
        kept = _as_program(flags | parsed.state.flags, code, parsed.state.groups, groupindex)
        if kept is not None:
            table.put(key, kept)
    return made


def _keepable(p: str | bytes) -> bool:
    """Short, shallow, and its compile warns of nothing (one pass over the text)."""
    if len(p) > MAX_KEPT_CHARS:
        return False
    if type(p) is str:
        text: str = p
    elif p.isascii():  # (a bytes pattern's non-ASCII group name warns under 3.11)
        text = p.decode("ascii")  # type: ignore[union-attr]
    else:
        return False
    if text.count("(") > MAX_KEPT_GROUPS or "(?(" in text:
        return False
    opened = text.find("[")  # (a set's warnings need a set open before them)
    if opened >= 0 and any(text.find(sign, opened) >= 0 for sign in _SET_SIGNS):
        return False
    if _LATE_FLAGS:  # (`(?` then a flag letter, anywhere but at the start)
        at = text.find("(?", 1)
        while at >= 0:
            letter = text[at + 2 : at + 3]
            if letter and letter in _LATE_FLAGS:
                return False
            at = text.find("(?", at + 2)
    return True


def _as_program(flags: int, code: Any, groups: int, names: Any) -> Program | None:
    try:
        numbers: list[str | None] = [None] * groups
        plain = {str(k): int(v) for k, v in names.items()}
        for name, number in plain.items():
            numbers[number] = name
        return int(flags), [int(c) for c in code], int(groups - 1), plain, tuple(numbers)
    except Exception:  # (a compiler that works otherwise: nothing kept)
        return None


def _verified(key: Key, program: Program) -> bool:
    """Whether ``program`` makes the very pattern Python's own compiler makes (asked when
    the table is written, for what this run compiled)."""
    import warnings

    p, flags = key
    try:
        with warnings.catch_warnings():  # (the report is out: no other warning is lost)
            warnings.simplefilter("ignore")
            reference = _ORIGINAL(p, flags)
        made = _sre.compile(p, *program)
        return bool(
            made == reference
            and made.groups == reference.groups
            and dict(made.groupindex) == dict(reference.groupindex)
        )
    except Exception:
        return False

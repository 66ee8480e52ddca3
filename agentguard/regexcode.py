"""The programs of the regular expressions agentguard compiles, compiled once.

Every start compiles the same regular expressions again: agentguard's readers, redactor
and rules, and the libraries they import, about 300 patterns (40 ms of CPU on a large
tree, 23 ms of it before the readers are forked, most of the rest after they end, where no
other CPU helps). Python's ``re`` keeps its compiled patterns for one process only.

:func:`install` gives ``re``'s compiler module a ``compile`` of its own (``re._compile``
calls it by that module attribute, once per pattern and process, after its own cache
missed): for a pattern given as text or bytes, the program Python's compiler would make
(its flags, code, group count and names) is taken from a table when that same pattern
with the same flags was compiled before, and handed to ``_sre.compile`` exactly as the
compiler hands it (``_sre`` checks the code before it makes the pattern: a program it
does not accept is compiled again, as without the table). A pattern never seen is
compiled by Python's own compiler; the program is kept only when one made the same way
from the parsed pattern is the same pattern (equal code, flags, groups and group names),
so an interpreter whose compiler works otherwise keeps nothing. Kept neither: a pattern
whose compile may warn (Python warns once, at the first compile: a program taken from the
table would never warn), nor a debug compile, nor one compiled from a parsed pattern.

The table is a :class:`agentguard.codetable.Table` (where it is kept, when it is read and
written, what it trusts: see there), versioned by this interpreter's exact version and
the regular expression engine's magic number, so another build's programs are not read.
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

_compiler: Any = getattr(re, "_compiler", None) or getattr(re, "sre_compile", None)
_parser: Any = getattr(re, "_parser", None) or getattr(re, "sre_parse", None)
_sre: Any = sys.modules.get("_sre")
_DEBUG = int(re.DEBUG)
# What may make Python's parser warn, screened by text: a set that may nest or combine
# (FutureWarning); a conditional group's reference (DeprecationWarning when not plain
# digits); a bytes pattern's non-ASCII group name (3.11); before 3.11, global flags not at
# the start (DeprecationWarning).
_MAY_WARN = re.compile(r"\[(?:\[|.*?(?:--|&&|~~|\|\|))|\(\?\(", re.DOTALL)
_MAY_WARN_BYTES = re.compile(_MAY_WARN.pattern.encode(), re.DOTALL)
_LATE_FLAGS = re.compile(r"(?<!^)\(\?[aiLmsux]+\)") if sys.version_info < (3, 11) else None
_LATE_FLAGS_BYTES = re.compile(_LATE_FLAGS.pattern.encode()) if _LATE_FLAGS is not None else None

_TABLE: Table[Key, Program] | None = None
_ORIGINAL: Any = None


def _valid(table: object) -> bool:
    return isinstance(table, dict) and all(
        type(k) is tuple
        and len(k) == 2
        and type(k[0]) in (str, bytes)
        and type(k[1]) is int
        and type(v) is tuple
        and len(v) == 5
        and type(v[0]) is int
        and type(v[1]) is list
        and type(v[2]) is int
        and type(v[3]) is dict
        and type(v[4]) is tuple
        for k, v in table.items()
    )


def install() -> None:
    """Give ``re``'s compiler the table's ``compile`` (once per process; not at all where
    ``re`` is not built as this module knows)."""
    global _TABLE, _ORIGINAL
    if _TABLE is not None or _compiler is None or _parser is None or _sre is None:
        return
    original = getattr(_compiler, "compile", None)
    if original is None or not hasattr(_compiler, "_code") or not hasattr(_sre, "compile"):
        return
    version = f"1 {sys.version} {getattr(_sre, 'MAGIC', '?')} {getattr(_sre, 'CODESIZE', '?')}"
    _TABLE = Table("regex-programs", version.encode("ascii", "replace"), _valid)
    _ORIGINAL = original
    _compiler.compile = _compile


def _compile(p: Any, flags: Any = 0) -> Any:
    table = _TABLE
    kind = type(p)
    if table is None or (kind is not str and kind is not bytes) or type(flags) is not int:
        return _ORIGINAL(p, flags)
    key = (p, flags)
    program = table.get(key)
    if program is not None:
        try:
            return _sre.compile(p, *program)
        except Exception:  # (not a program _sre takes: compiled as without the table)
            table.forget(key)
    made = _ORIGINAL(p, flags)
    if not flags & _DEBUG and not _may_warn(p):
        program = _program(p, flags)
        if program is not None and _same(p, program, made):
            table.put(key, program)
    return made


def _may_warn(p: str | bytes) -> bool:
    if type(p) is str:
        late = _LATE_FLAGS
        return _MAY_WARN.search(p) is not None or (late is not None and late.search(p) is not None)
    data: bytes = p  # type: ignore[assignment]
    late_bytes = _LATE_FLAGS_BYTES
    return (
        not data.isascii()
        or _MAY_WARN_BYTES.search(data) is not None
        or (late_bytes is not None and late_bytes.search(data) is not None)
    )


def _program(p: str | bytes, flags: int) -> Program | None:
    """What the compiler hands ``_sre.compile`` for ``p``, made as it makes it."""
    try:
        parsed = _parser.parse(p, flags)
        code = [int(c) for c in _compiler._code(parsed, flags)]
        state = parsed.state
        names = {str(k): int(v) for k, v in state.groupdict.items()}
        numbers: list[str | None] = [None] * state.groups
        for name, number in names.items():
            numbers[number] = name
        return int(flags | state.flags), code, int(state.groups - 1), names, tuple(numbers)
    except Exception:  # (a compiler that works otherwise: nothing kept)
        return None


def _same(p: str | bytes, program: Program, reference: Any) -> bool:
    """Whether ``program`` makes the very pattern Python's compiler made."""
    try:
        made = _sre.compile(p, *program)
        return bool(
            made == reference
            and made.groups == reference.groups
            and dict(made.groupindex) == dict(reference.groupindex)
        )
    except Exception:
        return False

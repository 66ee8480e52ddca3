"""Which bare names a Python file may bind to an imported or aliased name, from its bytes
(for the fallback reader's pre-filter).

The fallback reader counts a call ``X(...)`` in a handler as a client's construction only
when ``X``'s qualname is a client class of an LLM library, and the evaluator gives a bare
name a qualname only when the module index put it among its alias names: bound somewhere
by an import, or assigned (``=``, an annotated ``=``, ``:=``) a name or an attribute
(:class:`~.python_scope.ModuleIndex`). A name bound only otherwise (``def``, ``class``, a
parameter, a loop, ``with``/``except ... as``, unpacking, ``+=``) or not at all never
resolves to a client. So a bare callee counts only when the file may bind it so:

- it is a client class's own name;
- it stands in an import statement (from the keyword to the end of its logical line)
  whose module may be an LLM library's, or that has no ``from`` (``import a.b as X``): a
  name imported from another module (``from .exceptions import UserError``) has that
  module's qualname;
- or it stands, as a whole name and not after ``.``, ``->``, ``except``, ``class``, ``def``
  or ``as``, before a gap
  (blanks, newlines, continuations, comments; closing brackets: ``(make) = ...``) and
  ``=`` (not ``==``), ``:=`` or ``:`` (an annotation; a slice or a dict key too: "maybe").

Every test errs towards "maybe bound" (a name in a string or a comment counts, as does a
keyword argument ``f(X=...)``); a file that spells a name in characters Python reads as
ASCII is not asked (:func:`~.python_import_needles.spelled_non_ascii`: every bare callee
counts there).
"""

from __future__ import annotations

import re
from collections.abc import Callable

_GAP = rb"(?:[ \t\f\r\n]|\\\r?\n|\\\r|#[^\r\n]*)*"
_ASSIGNED_AFTER = re.compile(_GAP + rb"(?::|=(?!=))")
# (a target in brackets binds the same name: `(make) = ...`, `(make): T = ...`)
_BRACKETED_AFTER = re.compile(_GAP + rb"(?:\)" + _GAP + rb")+(?::|=(?!=))")
_IMPORT = re.compile(rb"\bimport\b")
_FROM_MODULE = re.compile(rb"\bfrom(?:[ \t\f]|\\\r?\n|\\\r)+([\w.]+)(?:[ \t\f]|\\\r?\n|\\\r)+$")
_WORD = re.compile(rb"\w+")
_NOT_TARGET_AFTER = (b"->", b".")
# (`class make:`, `with ... as make:` bind no alias; an import's `as` is read above)
_NOT_TARGET_AFTER_WORD = (b"except", b"class", b"def", b"as")
_OPEN = frozenset(b"([{")
_READ_BUDGET = 4  # passes over the file, at most, before every name counts as bound
_EVERY: set[bytes] = set()  # (a sentinel: the budget ran out, any name may be imported)
_CLOSE = frozenset(b")]}")


def binder(
    data: bytes, llm_modules: tuple[str, ...], client_names: frozenset[str] | set[str]
) -> Callable[[str], bool]:
    """``bound(name)``: False only when ``data`` cannot bind ``name`` to an import or an
    alias (see the module's docstring); each name's answer is kept."""
    roots = tuple(m.encode() for m in llm_modules)
    imported: set[bytes] | None = None
    answers: dict[str, bool] = {}
    # (each name asked is a pass over the file: past a few passes' worth, "maybe")
    budget = _READ_BUDGET * len(data) + 65536

    def bound(name: str) -> bool:
        nonlocal imported, budget
        if name in client_names:
            return True
        got = answers.get(name)
        if got is None:
            if imported is None:
                imported = _imported_words(data, roots)
            budget -= len(data)
            key = name.encode()
            got = budget < 0 or imported is _EVERY or key in imported
            got = got or _assigned_somewhere(data, key)
            answers[name] = got
        return got

    return bound


def _imported_words(data: bytes, roots: tuple[bytes, ...]) -> set[bytes]:
    """The words of every import statement whose names may come from an LLM library
    (:data:`_EVERY` past a few passes' worth of reading: "any name")."""
    words: set[bytes] = set()
    budget = _READ_BUDGET * len(data) + 65536
    for m in _IMPORT.finditer(data):
        line = max(data.rfind(b"\n", 0, m.start()), data.rfind(b"\r", 0, m.start())) + 1
        head = _FROM_MODULE.search(data, line, m.start())
        if head is not None:
            module = head.group(1)
            if module.startswith(b".") or not module.startswith(roots):
                continue  # (its names' qualnames start with that module)
        end = _statement_end(data, m.end())
        budget -= end - line
        if budget < 0:
            return _EVERY
        words.update(_WORD.findall(data, m.end(), end))
    return words


def _statement_end(data: bytes, pos: int) -> int:
    """Where the logical line holding ``pos`` ends: at a line end outside brackets and not
    after a backslash (a comment runs to its line's end; a string is not told apart: a
    bracket in one can only read on, which counts more words)."""
    depth = 0
    i = pos
    n = len(data)
    while i < n:
        c = data[i]
        if c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        elif c == 0x5C and i + 1 < n and data[i + 1] in b"\r\n":  # a continuation
            i += 3 if data[i + 1 : i + 3] == b"\r\n" else 2
            continue
        elif c in b"\r\n" and depth <= 0:
            return i
        elif c == 0x23:  # a comment, to its line's end
            end = data.find(b"\n", i)
            i = n if end < 0 else end
            continue
        i += 1
    return n


def _assigned_somewhere(data: bytes, name: bytes) -> bool:
    at = data.find(name)
    while at >= 0:
        end = at + len(name)
        if (
            (at == 0 or not _is_name_byte(data[at - 1]))
            and (end == len(data) or not _is_name_byte(data[end]))
            and _may_be_target(data, at, end)
        ):
            return True
        at = data.find(name, end)
    return False


def _may_be_target(data: bytes, at: int, end: int) -> bool:
    """Whether the name at ``at:end`` may be an assignment's target (see the docstring)."""
    stop = at  # (blanks only: `...` or `1.` ending the line before is no attribute's dot)
    while stop > 0 and data[stop - 1] in b" \t\f":
        stop -= 1
    if data.endswith(_NOT_TARGET_AFTER, 0, stop):
        return False
    for word in _NOT_TARGET_AFTER_WORD:
        k = stop - len(word)
        if k >= 0 and data.startswith(word, k) and (k == 0 or not _is_name_byte(data[k - 1])):
            return False
    if _ASSIGNED_AFTER.match(data, end) is not None:
        return True
    # In brackets: anything but a tuple's or a parameter list's comma before it (a tuple
    # target binds no alias; `def f(q, log):` is no annotated `(log): T = ...`)
    k = stop
    while k > 0 and data[k - 1] in b" \t\f\r\n\\":
        k -= 1
    return (k == 0 or data[k - 1] != 0x2C) and _BRACKETED_AFTER.match(data, end) is not None


def _is_name_byte(b: int) -> bool:
    return b == 0x5F or 0x30 <= b <= 0x39 or 0x41 <= b <= 0x5A or 0x61 <= b <= 0x7A

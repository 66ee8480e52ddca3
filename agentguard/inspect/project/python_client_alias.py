"""Whether a bare name called in an ``except`` handler may construct an LLM client, from
the file's bytes (for the fallback pre-filter, :mod:`.python_fallback_filter`).

:func:`~.python_fallback._client_call` reads a call as a client's when its callee's
qualname ends with a client class's name. A bare name has a qualname only through the
bindings :class:`~.python_scope.ModuleIndex` records as aliases: an import (``from openai
import OpenAI``, ``... import OpenAI as mk``: the qualname ends with the imported name,
never with the ``as`` name) or an assignment, annotated assignment or walrus whose value is
a name or an attribute (``mk = openai.OpenAI``, ``mk = other``: the qualname ends with the
attribute's name, or is the other name's). Any other binding (a parameter, a ``def``, a
loop variable, ``with ... as``) gives none, and neither does no binding at all. So a name
names a client only when it is a client class's name, or is bound ``as`` it right after
one, or is assigned a value that is, or ends with, one, or another name that does (looked
up in turn). An annotated assignment's logical line (its annotation may hold anything) is
found by Python's tokenizer and parsed, from where its target may start a statement.

Every test is of code bytes and errs towards "maybe": a comment where a gap is read, a
name list too long to follow, a name in letters other than ASCII.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
import warnings

from agentguard.inspect.project.python_fallback import _CLIENT_NAMES
from agentguard.inspect.project.python_import_needles import NAME_BYTES, gap_start, in_code

_CLIENTS = frozenset(n.encode() for n in _CLIENT_NAMES)
_MAX_NAMES = 16  # names followed from one to another before "maybe"
# between two tokens inside brackets: blanks, newlines, continuations, brackets, comments
# (a comment read whole, to its line's end: never as what follows it)
_GAP = rb"(?:[ \t\f\r\n()]|\\\r?\n|\\\r|#[^\r\n]*(?![^\r\n]))*"
_NAME = rb"[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*"
# `= <value>` or `:= <value>` after a name, the value a name or dotted name when it is one
_ASSIGNED = re.compile(
    _GAP + rb"(?::=|=(?!=))" + _GAP + rb"(?P<value>" + _NAME + rb"(?:" + _GAP + rb"\." + _GAP
    + _NAME + rb")*)?"
)  # fmt: skip
_ANNOTATED = re.compile(_GAP + rb":(?!=)")
_AS_THEN_COMMENT = re.compile(rb"(?<![A-Za-z0-9_\x80-\xff])as[ \t\f]*#")
_MAX_TOKENS = 2000  # tokens of an annotated assignment read before "maybe"
_MAX_STARTS = 8  # places an annotated assignment's target may start at, before "maybe"
_LINE_REACH = 4096
# a call right after a value on its line (a newline may end the statement there)
_CALLED = re.compile(rb"[ \t\f]*(?:\\\r?\n[ \t\f]*|\\\r[ \t\f]*)*\(")
_CONSTANTS = frozenset((b"None", b"True", b"False"))


def may_name_a_client(data: bytes, name: str) -> bool:
    """False only when a call of the bare name ``name`` cannot be read as a client
    class's call: see the module's text."""
    if name in _CLIENT_NAMES or not name.isascii():
        return True  # (a name of other letters may be spelled otherwise: not looked for)
    todo, seen = [name.encode()], set()
    while todo:
        word = todo.pop()
        if word in seen:
            continue
        seen.add(word)
        if len(seen) > _MAX_NAMES:
            return True
        for at in _places(data, word):
            found = _bound_at(data, at, at + len(word))
            if found is True:
                return True
            if isinstance(found, bytes):
                todo.append(found)
    return False


def _places(data: bytes, word: bytes) -> list[int]:
    """Where ``word`` stands whole in code (or an f-string's field)."""
    out: list[int] = []
    at = data.find(word)
    while at >= 0:
        end = at + len(word)
        if (
            (at == 0 or data[at - 1] not in NAME_BYTES)
            and (end == len(data) or data[end] not in NAME_BYTES)
            and in_code(data, at)
        ):
            out.append(at)
        at = data.find(word, end)
    return out


def _bound_at(data: bytes, at: int, end: int) -> bool | bytes:
    """Whether the name at ``data[at:end]`` is bound there to a client class (True, or
    "maybe"), to another name (that name: its own bindings decide) or to nothing that
    can be one (False)."""
    assigned = _ASSIGNED.match(data, end)
    if assigned is not None:
        value = assigned.group("value")
        if value is None:
            return False  # (a string, a number, a display: no alias)
        if _CALLED.match(data, assigned.end()) is not None:
            return False  # (`mk = openai.OpenAI()`: a call's result, no alias)
        last = _last_name(value)
        if last in _CLIENTS:
            return True
        return value if value == last and value not in _CONSTANTS else False
    if _ANNOTATED.match(data, end) is not None:
        before, _ = gap_start(data, at, b"(")
        first = (
            before == 0
            or data[before - 1] in b";:"
            or b"\n" in data[before:at]
            or b"\r" in data[before:at]
        )
        if not first:
            return False  # (a parameter's annotation, a dict's key, a slice: no binding)
        # (the target may start at any bracket of the gap: `(mk): T = v`; a bracket in a
        # comment before it starts nothing, so each is tried, the name itself first)
        starts = [at, *(i for i in range(at - 1, before - 1, -1) if data[i] == 0x28)]
        if len(starts) > _MAX_STARTS:
            return True
        found: bool | bytes = False
        for start in starts:
            found = _annotated(data, start, data[at:end])
            if found is not False:
                break
        return found
    return _after_as(data, at)


def _last_name(value: bytes) -> bytes:
    start = len(value)
    while start > 0 and value[start - 1] in NAME_BYTES:
        start -= 1
    return value[start:]


def _annotated(data: bytes, start: int, name: bytes) -> bool | bytes:
    """The binding of an annotated assignment (``mk: T = openai.OpenAI``) whose target
    may start at ``start``: its logical line, found by Python's tokenizer, is parsed; a
    line that does not parse as one is no annotated assignment of ``name`` (where its
    target truly starts a statement, its logical line is the statement)."""
    stream = io.BytesIO(data)
    stream.seek(start)
    lines: list[str] = []

    def readline() -> str:
        line = stream.readline().decode("utf-8", "replace")
        lines.append(line)
        return line

    try:
        for count, token in enumerate(tokenize.generate_tokens(readline)):
            if count > _MAX_TOKENS:
                return True  # (a statement too long to follow: "maybe")
            if token.type in (tokenize.NEWLINE, tokenize.ENDMARKER):
                break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse("".join(lines))
    except SyntaxError:
        return False  # (no statement starts at the name: it is no target there)
    except (tokenize.TokenError, ValueError, MemoryError, RecursionError):
        return True
    stmt = tree.body[0] if tree.body else None
    if not (
        isinstance(stmt, ast.AnnAssign)
        and isinstance(stmt.target, ast.Name)
        and stmt.target.id.encode() == name
    ):
        return False
    value = stmt.value
    if isinstance(value, ast.Attribute):
        return value.attr in _CLIENT_NAMES
    if isinstance(value, ast.Name):
        return True if value.id in _CLIENT_NAMES or not value.id.isascii() else value.id.encode()
    return False


def _after_as(data: bytes, at: int) -> bool:
    """Whether the name at ``at`` may follow an ``as`` after a client class's name
    (``from openai import OpenAI as mk``, ``import openai.OpenAI as mk``; inside brackets
    a comment may stand between them)."""
    i = at
    while True:
        before, commented = gap_start(data, i)
        if data.endswith(b"as", 0, before) and (before < 3 or data[before - 3] not in NAME_BYTES):
            return _after_a_client(data, before - 2)
        if not commented:
            return False
        lo = max(0, before - _LINE_REACH)
        line = data.rfind(b"\n", lo, before)
        line = max(line, data.rfind(b"\r", max(line, lo), before)) + 1
        if line == 0 and lo > 0:
            return True  # (a line too long to read back)
        if not data[line:before].lstrip(b" \t\f").startswith(b"#"):
            # (code, then maybe a comment: `... as  # the client` ends the line)
            return _AS_THEN_COMMENT.search(data, line, before) is not None
        i = line  # (a line of comment alone: what stands before it)


def _after_a_client(data: bytes, as_at: int) -> bool:
    """Whether the ``as`` at ``as_at`` follows a client class's name."""
    end, commented = gap_start(data, as_at)
    if commented:
        return True
    return _last_name(data[max(0, end - 64) : end]) in _CLIENTS

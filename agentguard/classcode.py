"""The methods the dataclasses module writes for agentguard's records, compiled once.

``@dataclass`` writes the source of each method it adds (``__init__``, ``__repr__``,
``__eq__``, ``__hash__``, a frozen class's ``__setattr__``) and compiles it with
``exec``, on every start: a run of ``inspect`` makes 150 record classes and compiled 830
such functions (70 ms of its 160 ms on an empty folder; 90 ms on a large tree, most of
it before the readers are forked or after they end, where no other CPU helps).

:func:`install` gives the dataclasses module an ``exec`` of its own (a module global
shadows the builtin, which is the only name it calls it by): the same call, with the
code object compiled from the same source text under the same name and flags
(``"<string>"``, no inherited future flags), taken from a table when that text was
compiled before. The text is the key, so a record class that changes misses; nothing
else about a class (its module's globals, its defaults) is in the code object, and
those are passed to ``exec`` as before. Any other use of ``exec`` (a code object, bytes,
a text never seen) is the builtin's.

The table is kept where Python keeps agentguard's own bytecode
(:func:`importlib.util.cache_from_source`: the package's ``__pycache__``, or under
``PYTHONPYCACHEPREFIX``), one file per interpreter (its cache tag in the name, its magic
number in the head), and is trusted exactly as the ``.pyc`` files beside it are: whoever
can write there can already replace agentguard's code (docs/security.md, "agentguard's
own files"). It is never looked for in a scanned folder nor in a cache folder a
workflow restores. A file that is not a table of code objects under this interpreter's
magic number (truncated, another Python's, another program's, too large) is ignored.
Written by :func:`save` when the command ends, from the process that loaded it (a
forked reader writes nothing), only when it compiled something new and Python itself
may write bytecode (``-B``, ``PYTHONDONTWRITEBYTECODE``: never); through the one safe
write path, in one rename. A folder it cannot write to leaves every run as before.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys
import types
from importlib.util import MAGIC_NUMBER, cache_from_source
from typing import Any

_HEAD = b"agentguard-class-code 1\n" + MAGIC_NUMBER
MAX_BYTES = 16 * 1024 * 1024  # a table this large is not read (about 1 MB is usual)
# Past either, a table keeps only what the last run used: the methods of every record
# class make about 2 MB (1,700 texts; under 3.13, one text per class, 300), and a table
# that only grows (each release's changed classes are new texts) costs its load at every
# start (9 MB: 35 ms, the whole gain) and, past MAX_BYTES, would never be written again.
MAX_ENTRIES = 8192
KEEP_BYTES = 4 * 1024 * 1024
_NAME = "<string>"  # (what exec names a text's code: tracebacks read the same)


class _Table:
    def __init__(self, path: str | None) -> None:
        self.path = path
        self.code: dict[str, types.CodeType] = {}
        self.used: set[str] = set()
        self.compiled = 0  # texts compiled by this process (misses)
        self.owner = os.getpid()
        self.loaded = path is None  # (read when the first method is made: `--version` makes none)


_TABLE: _Table | None = None


def table_path() -> str | None:
    """Where this interpreter's table is kept, or None (no bytecode cache for it)."""
    try:
        beside = cache_from_source(os.path.join(os.path.dirname(__file__), "__init__.py"))
    except (NotImplementedError, ValueError):  # (no cache tag: bytecode is not cached)
        return None
    tag = sys.implementation.cache_tag
    return os.path.join(os.path.dirname(beside), f"dataclass-methods.{tag}.bin")


def install() -> None:
    """Give the dataclasses module the table's ``exec`` (once per process)."""
    global _TABLE
    if _TABLE is not None or "exec" in vars(dataclasses):
        return
    _TABLE = _Table(table_path())
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def _load(path: str) -> dict[str, types.CodeType]:
    from agentguard import safeio

    try:
        blob = safeio.read_bytes(path, cap=MAX_BYTES)
    except OSError:  # (none yet, or not a regular file, or too large: compiled as usual)
        return {}
    if not blob.startswith(_HEAD):
        return {}
    try:
        table = marshal.loads(memoryview(blob)[len(_HEAD) :])
    except (ValueError, EOFError, TypeError):
        return {}
    if not isinstance(table, dict) or not all(
        type(k) is str and type(v) is types.CodeType and v.co_filename == _NAME
        for k, v in table.items()
    ):
        return {}
    return table


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    table = _TABLE
    if table is None or type(source) is not str:
        return builtins.exec(source, globals, locals)
    if not table.loaded:
        table.loaded = True
        table.code = _load(table.path) if table.path is not None else {}
    code = table.code.get(source)
    if code is None:
        code = compile(source, _NAME, "exec", dont_inherit=True)
        table.code[source] = code
        table.compiled += 1
    table.used.add(source)
    return builtins.exec(code, globals, locals)


def save() -> bool:
    """Keep what this run compiled for the next one (see the module's docstring): whether
    a table was written."""
    table = _TABLE
    if (
        table is None
        or table.path is None
        or not table.compiled
        or table.owner != os.getpid()
        or sys.dont_write_bytecode
    ):
        return False
    kept = table.code
    blob = _HEAD + marshal.dumps(kept) if len(kept) <= MAX_ENTRIES else b""
    if not blob or len(blob) > min(KEEP_BYTES, MAX_BYTES):
        kept = {k: v for k, v in kept.items() if k in table.used}
        blob = _HEAD + marshal.dumps(kept)
    if len(blob) > MAX_BYTES:
        return False
    from agentguard import safeio

    with contextlib.suppress(OSError):
        os.makedirs(os.path.dirname(table.path), exist_ok=True)
        safeio.write_output(table.path, blob, sync=False)
        table.compiled = 0
        return True
    return False

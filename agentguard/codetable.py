"""Tables of what every start compiles the same way, kept from one run for the next.

Two kinds of work are the same on every start and are not Python's own bytecode: the
methods ``dataclasses`` writes for agentguard's record classes (:mod:`.classcode`) and
the programs of the regular expressions compiled by agentguard and the libraries it
imports (:mod:`.regexcode`). Each keeps what it compiled in a :class:`Table`: a dict
keyed by the whole source text (and whatever else the compile read), saved with
:mod:`marshal`.

A table is kept where Python keeps agentguard's own bytecode
(:func:`importlib.util.cache_from_source`: the package's ``__pycache__``, or under
``PYTHONPYCACHEPREFIX``), one file per kind and interpreter (its cache tag in the name;
its magic number and the kind's own version in the head, and a checksum of the rest: a
table damaged on disk is ignored, never unmarshalled), and is trusted exactly as the
``.pyc`` files beside it are: whoever can write there can already replace agentguard's
code (docs/security.md, "agentguard's own files"). It is never looked for in a scanned
folder nor in a cache folder a workflow restores. A file that is not a table of this kind
under this interpreter (truncated, another Python's, another program's, too large, a key
of another shape) is ignored. Read when the first entry is asked for, each value
unmarshalled when its key is first asked for (one that does not unmarshal, or is not of its
kind, is compiled anew and not written again); written by
:func:`save_all` when the command ends, from the process that loaded it (a forked reader
writes nothing), only when it compiled something new and Python itself may write bytecode
(``-B``, ``PYTHONDONTWRITEBYTECODE``: never); through the one safe write path, in one
rename. A folder it cannot write to leaves every run as before.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sys
import zlib
from collections.abc import Callable, Hashable
from importlib.util import MAGIC_NUMBER, cache_from_source
from typing import Generic, TypeVar

# (imported here, before a table is installed: a table is read in the middle of whatever
# import first compiles a pattern or makes a record class, pathlib's own included, so its
# read must import nothing then)
from agentguard import safeio

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

MAX_BYTES = 16 * 1024 * 1024  # a table this large is not read (about 1 MB is usual)
# Past either, a table keeps only what the last run used: a table that only grows (each
# release's changed texts are new keys; a scanned folder's own patterns) costs its load at
# every start (9 MB: 35 ms, the whole gain) and, past MAX_BYTES, would never be written again.
MAX_ENTRIES = 8192
KEEP_BYTES = 4 * 1024 * 1024

_TABLES: list[Table[object, object]] = []
_loading = False  # a table is being read (its imports compile: see Table.get)


def table_path(name: str) -> str | None:
    """Where this interpreter's table ``name`` is kept, or None (no bytecode cache for it)."""
    try:
        beside = cache_from_source(os.path.join(os.path.dirname(__file__), "__init__.py"))
    except (NotImplementedError, ValueError):  # (no cache tag: bytecode is not cached)
        return None
    tag = sys.implementation.cache_tag
    return os.path.join(os.path.dirname(beside), f"{name}.{tag}.bin")


class Table(Generic[K, V]):
    """One kind's table: as read (``stored``: loaded by the first :meth:`get`, each value
    unmarshalled when it is first asked for) and as used or compiled (``entries``)."""

    def __init__(
        self,
        name: str,
        version: bytes,
        valid_key: Callable[[object], bool],
        valid_value: Callable[[object], bool],
        *,
        verify: Callable[[K, V], bool] | None = None,
        keep_bytes: int | None = None,
        max_bytes: int | None = None,
    ) -> None:
        """``version``: what else the entries depend on (besides this interpreter's magic
        number); ``valid_key``, ``valid_value``: whether a loaded key, and an entry's value
        once unmarshalled, are of this kind; ``verify``: whether an entry this run made is
        right, asked before it is written (not kept otherwise); the two sizes:
        :data:`KEEP_BYTES`, :data:`MAX_BYTES` when not given."""
        self.head = b"agentguard-" + name.encode() + b" " + version + b"\n" + MAGIC_NUMBER
        self.path = table_path(name)
        self.valid_key = valid_key
        self.valid_value = valid_value
        self.verify = verify
        self.keep_bytes = keep_bytes
        self.max_bytes = max_bytes
        self.entries: dict[K, V] = {}  # as unmarshalled, or made by this run
        self.stored: dict[K, bytes] = {}  # as read: each value marshalled on its own
        self.used: set[K] = set()
        self.new: set[K] = set()  # entries this process made (verified before written)
        self.compiled = 0  # entries compiled by this process (misses)
        self.owner = os.getpid()
        self.loaded = self.path is None  # (read when the first entry is asked for)
        _TABLES.append(self)  # type: ignore[arg-type]

    def get(self, key: K) -> V | None:
        """The entry for ``key``, or None: never seen, or asked for while a table loads
        (the load's own imports compile patterns and make record classes: those are
        compiled as without a table, and the table is loaded at the next call)."""
        if not self.loaded:
            if _loading:
                return None
            self.stored = self.load()
            self.loaded = True
        got = self.entries.get(key)
        if got is None:
            raw = self.stored.get(key)
            if raw is None:
                return None
            got = self._value(raw)
            if got is None:  # (not one of this kind: compiled anew, and not written again)
                self.forget(key)
                return None
            self.entries[key] = got
        self.used.add(key)
        return got

    def _value(self, raw: bytes) -> V | None:
        value = _unmarshal(raw)
        if value is _NOT or not self.valid_value(value):
            return None
        return value  # type: ignore[return-value]  # (valid_value: a V)

    def put(self, key: K, value: V) -> None:
        if not self.loaded:  # (compiled while a table loads: see get)
            return
        self.entries[key] = value
        self.used.add(key)
        self.new.add(key)
        self.compiled += 1

    def forget(self, key: K) -> None:
        """An entry that turned out unusable: not kept, not written again."""
        self.entries.pop(key, None)
        self.stored.pop(key, None)
        self.used.discard(key)
        self.new.discard(key)
        self.compiled += 1  # (the file on disk still holds it: written again without it)

    def load(self) -> dict[K, bytes]:
        """The table as kept: each key with its value's own marshalled bytes (a run reads
        the values it asks for; a start that makes a few record classes does not pay for
        unmarshalling a thousand: 0.4 ms for the whole table, 6 ms with every value)."""
        global _loading
        if self.path is None:
            return {}
        _loading = True
        try:
            return self._load(self.path)
        finally:
            _loading = False

    def _load(self, path: str) -> dict[K, bytes]:
        try:
            blob = safeio.read_bytes(path, cap=self._max())
        except OSError:  # (none yet, or not a regular file, or too large: compiled as usual)
            return {}
        start = len(self.head) + 4
        if not blob.startswith(self.head) or len(blob) < start:
            return {}
        body = memoryview(blob)[start:]
        # (a table changed on disk is ignored before marshal reads it: marshal makes a
        # tuple of the length a damaged header claims before it reads one item, and the
        # engine checks a regular expression's program less than the program needs)
        if zlib.crc32(body).to_bytes(4, "little") != blob[len(self.head) : start]:
            return {}
        table = _unmarshal(body)
        if not isinstance(table, dict) or not all(
            type(v) is bytes and self.valid_key(k) for k, v in table.items()
        ):
            return {}
        return table

    def save(self) -> bool:
        """Keep what this run compiled for the next one: whether the table was written."""
        if (
            self.path is None
            or not self.compiled
            or self.owner != os.getpid()
            or sys.dont_write_bytecode
        ):
            return False
        if self.verify is not None:
            for key in [k for k in self.new if k in self.entries]:
                if not self.verify(key, self.entries[key]):
                    del self.entries[key]
        self.new.clear()
        kept = dict(self.stored)
        new = ((k, v) for k, v in self.entries.items() if k not in kept)
        kept.update((k, marshal.dumps(v)) for k, v in new)  # type: ignore[arg-type]  # (V: what marshal writes)
        blob = self._blob(kept) if len(kept) <= MAX_ENTRIES else b""
        keep = KEEP_BYTES if self.keep_bytes is None else self.keep_bytes
        if not blob or len(blob) > min(keep, self._max()):
            kept = {k: v for k, v in kept.items() if k in self.used}
            blob = self._blob(kept)
        if len(blob) > self._max():
            return False
        with contextlib.suppress(OSError):
            os.makedirs(os.path.dirname(self.path), exist_ok=True)
            safeio.write_output(self.path, blob, sync=False)
            self.compiled = 0
            return True
        return False

    def _max(self) -> int:
        return MAX_BYTES if self.max_bytes is None else self.max_bytes

    def _blob(self, entries: dict[K, bytes]) -> bytes:
        body = marshal.dumps(entries)
        return self.head + zlib.crc32(body).to_bytes(4, "little") + body


_NOT = object()  # (what _unmarshal gives for bytes that are no marshalled object)


def _unmarshal(raw: bytes | memoryview) -> object:
    """The object ``raw`` holds, or :data:`_NOT`. Whatever marshal raises means "not one":
    besides the errors of damaged data (ValueError, EOFError, TypeError), MemoryError (a
    length claim), RecursionError, and SystemError (a code object whose fields are of the
    wrong types: one flipped flag byte of a kept entry)."""
    try:
        return marshal.loads(raw)
    except Exception:  # (a table is only ever an optimisation: never a failed run)
        return _NOT


def save_all() -> None:
    """Every table's :meth:`Table.save` (the command's last step, once its report is out)."""
    for table in _TABLES:
        with contextlib.suppress(Exception):  # (a table is only ever an optimisation)
            table.save()

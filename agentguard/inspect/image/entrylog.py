"""Entries of a layer that passed a one-pass stream before its image config arrived.

Which entries matter depends on the working directory, which only the config says. Rather
than copying such a layer to disk whole (measured: a 3 GB save took 9.4 s that way, the
floor 3.5 s), its walk logs every entry's header fields and the bodies of the few files that
could be collected under *some* working directory (agent config and code by name, outside
vendored folders, each capped at ``max_file_bytes``) to an anonymous temporary file. When the
plan is known the log is replayed with the real working directory.
"""

from __future__ import annotations

import struct
import tempfile
from collections.abc import Iterator

from agentguard.inspect.image.agentlaunch import SCRIPT_SUFFIXES
from agentguard.inspect.image.bytestreams import Budget
from agentguard.inspect.image.collect import CODE, CONFIG, VENDORED, kind_of_name
from agentguard.inspect.image.limits import ReadFailure

# Where an entrypoint wrapper without a suffix usually sits (the image root counts too).
LAUNCH_DIRS = frozenset({"usr/local/bin", "usr/local/sbin", "opt", "srv", "app"})

_REC = struct.Struct("<BQIIii")  # kind, size, mode, name length, link length, body length
_KINDS = ("file", "dir", "symlink", "hardlink", "other")
_CODES = {k: i for i, k in enumerate(_KINDS)}
_HEAD_ONLY = 0x80  # flag on the kind byte: the body logged is only the file's head
HEAD_BYTES = 4  # enough to tell a compiled program (ELF) from a script


def may_collect(name: str) -> bool:
    """Could some working directory or agent plan make this file's content wanted? (A
    superset, cheap: agent config and code by name, scripts, files where launchers live.)"""
    slash = name.rfind("/")
    base = name[slash + 1 :]
    if kind_of_name(base, name) not in (CONFIG, CODE) and not (
        base.endswith(SCRIPT_SUFFIXES) or slash < 0 or name[:slash] in LAUNCH_DIRS
    ):
        return False
    return not any(part in VENDORED for part in name.split("/")[:-1])


class LoggedEntry:
    """An entry read back from the log; it is its own body reader."""

    __slots__ = ("body", "head", "kind", "link", "missed", "mode", "name", "raw_name", "size")

    def __init__(
        self,
        name: str,
        kind: str,
        size: int,
        mode: int,
        link: str | None,
        body: bytes | None,
        head: bytes | None = None,
    ) -> None:
        self.name = name
        self.raw_name = name
        self.kind = kind
        self.size = size
        self.mode = mode
        self.link = link
        self.body = body
        self.head = head if head is not None else (body[:HEAD_BYTES] if body else None)
        self.missed = False  # a body was wanted that the log did not keep

    def read_body(self, limit: int) -> bytes:
        if self.body is None:
            self.missed = True
            return b""
        return self.body[:limit]


class EntryLog:
    """Append-only records in an anonymous temporary file, bounded by a byte budget."""

    def __init__(self, budget: Budget) -> None:
        self._f = tempfile.TemporaryFile(prefix="agentguard-entries-")  # noqa: SIM115 - closed by close()
        self._budget = budget

    def add(
        self,
        name: str,
        kind: str,
        size: int,
        mode: int,
        link: str | None,
        body: bytes | None,
        *,
        head_only: bool = False,
    ) -> None:
        """``head_only``: ``body`` is only the file's first bytes (is it a program?)."""
        raw_name = name.encode("utf-8", "surrogateescape")
        raw_link = link.encode("utf-8", "surrogateescape") if link is not None else b""
        record = _REC.pack(
            _CODES.get(kind, 4) | (_HEAD_ONLY if head_only else 0),
            size,
            mode,
            len(raw_name),
            len(raw_link) if link is not None else -1,
            len(body) if body is not None else -1,
        )
        self._budget.charge(len(record) + len(raw_name) + len(raw_link) + len(body or b""))
        try:
            self._f.write(record + raw_name + raw_link + (body or b""))
        except OSError as exc:
            raise ReadFailure("log-failed", f"could not log the layer's entries: {exc}") from None

    def replay(self) -> Iterator[LoggedEntry]:
        self._f.flush()
        self._f.seek(0)
        read = self._f.read
        while head := read(_REC.size):
            kind, size, mode, n_name, n_link, n_body = _REC.unpack(head)
            name = read(n_name).decode("utf-8", "surrogateescape")
            link = read(n_link).decode("utf-8", "surrogateescape") if n_link >= 0 else None
            body = read(n_body) if n_body >= 0 else None
            if kind & _HEAD_ONLY:
                yield LoggedEntry(name, _KINDS[kind & 0x7F], size, mode, link, None, body)
            else:
                yield LoggedEntry(name, _KINDS[kind], size, mode, link, body)

    def close(self) -> None:
        self._f.close()

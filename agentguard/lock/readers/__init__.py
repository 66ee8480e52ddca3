"""The locks a project already has: find one, read it through its format's reader."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from agentguard import safeio
from agentguard.lock.readers.interface import (
    MAX_LOCK_BYTES,
    ExistingLock,
    LockReader,
    LockReadError,
)
from agentguard.lock.readers.poetry_lock import PoetryLockReader
from agentguard.lock.readers.pylock import PylockReader
from agentguard.lock.readers.uv_lock import UvLockReader

READERS: tuple[LockReader, ...] = (UvLockReader(), PoetryLockReader(), PylockReader())

__all__ = [
    "READERS",
    "ExistingLock",
    "LockReadError",
    "find_existing",
    "read_existing",
    "read_lock",
    "read_lock_text",
]

# What each lock text read to, in this process: `check` reads the project's lock in its
# lock step, in the project scan (what it holds mitigates AG121) and for an image (AG110).
# Keyed by the whole text, so a changed file is read again; the lock is frozen, so sharing
# it is safe. Only a successful read is kept (a failure is read again, and fails again).
_READ: dict[tuple[str, str], ExistingLock] = {}
_READ_KEPT = 4


def read_lock(reader: LockReader, text: str, path: str) -> ExistingLock:
    """``reader.read(text, path)``, once per text in a run. ``path`` is only a label (the
    readers use it in errors and as ``ExistingLock.path``), so a text read under another
    label is the same lock with that label."""
    key = (reader.format, text)
    lock = _READ.get(key)
    if lock is None:
        lock = reader.read(text, path)
        while len(_READ) >= _READ_KEPT:
            del _READ[next(iter(_READ))]
        _READ[key] = lock
    return lock if lock.path == path else dataclasses.replace(lock, path=path)


def read_lock_text(path: Path, rel: str) -> str:
    """A lock file's text: a regular file (no link followed), capped, UTF-8; read through
    the safe open (:mod:`agentguard.safeio`)."""
    try:
        if path.is_symlink() or not path.is_file():
            raise LockReadError(
                rel, "not a regular file (a link is not followed)", code="lockfile-unreadable"
            )
        return safeio.read_bytes(path, cap=MAX_LOCK_BYTES).decode("utf-8")
    except safeio.TooLarge as exc:
        raise LockReadError(
            rel,
            f"{exc.size} bytes is larger than the {MAX_LOCK_BYTES} byte limit",
            code="lockfile-too-large",
        ) from None
    except UnicodeDecodeError as exc:
        raise LockReadError(rel, f"not UTF-8 (byte {exc.start})", code="lockfile-invalid") from None
    except OSError as exc:
        raise LockReadError(
            rel, f"cannot read ({exc.strerror or exc})", code="lockfile-unreadable"
        ) from None


def find_existing(root: Path) -> tuple[LockReader, ...]:
    """The readers whose lock file the project has (ours excluded), in preference order."""
    found = []
    for reader in READERS:
        path = root / reader.filename
        if not (path.is_file() or path.is_symlink()):
            continue
        if reader.format == "pylock.toml":
            try:
                head = read_lock_text(path, reader.filename)[:4096]
            except LockReadError:
                head = ""
            if not reader.claims(head):
                continue
        found.append(reader)
    return tuple(found)


def read_existing(root: Path, reader: LockReader) -> ExistingLock:
    text = read_lock_text(root / reader.filename, reader.filename)
    return read_lock(reader, text, reader.filename)

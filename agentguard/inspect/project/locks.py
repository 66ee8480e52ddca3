"""A project's own lock (uv.lock, poetry.lock, pylock.toml) as the project scan needs it:
which versions it holds. Read through :mod:`agentguard.lock.readers`; a lock that cannot
be read is a failed source, never "holds nothing". A lock no finding depends on is not
read: its source says so (skipped), so it is never taken for an empty one either."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from agentguard.facts.project_file import ProjectFile
from agentguard.findings import Source
from agentguard.inspect.project import cache as content_cache
from agentguard.lock.readers import READERS, LockReadError, read_lock


@dataclass(frozen=True)
class LockRead:
    """What one lock holds (None: not read, as ``source`` says why), as the content cache
    keeps it by the lock's path and bytes."""

    held: dict[str, list[str]] | None
    source: Source


def read_lock_pins(path: str, text: str) -> tuple[dict[str, list[str]] | None, Source]:
    """The versions the lock holds by package, and its source; through the folder scan's
    content cache when one is open (a re-run does not parse an unchanged lock again: a
    2 MB ``uv.lock`` took 0.1-0.2 s, on the path every re-run waits for)."""
    cache = content_cache.ACTIVE
    if cache is None:
        return _read_lock_pins(path, text)
    key = cache.key(path, "lock-pins", text.encode("utf-8", "surrogatepass"))
    got = cache.get_record(key, LockRead)
    if got is None:
        got = LockRead(*_read_lock_pins(path, text))
        cache.put_record(key, got)
    return got.held, got.source


def _read_lock_pins(path: str, text: str) -> tuple[dict[str, list[str]] | None, Source]:
    base = posixpath.basename(path).lower()
    reader = next((r for r in READERS if r.filename == base), None)
    if reader is None:
        return None, Source.skipped("file", path, "not a lock format agentguard reads")
    try:
        lock = read_lock(reader, text, path)
    except LockReadError as exc:
        return None, Source.failed(
            "file",
            path,
            str(exc),
            error_code=exc.code,
            retryable=False,
            remedy="Re-generate the lock with the tool that wrote it.",
        )
    held: dict[str, list[str]] = {}
    for p in lock.registry_pins:
        held.setdefault(p.name, []).append(p.version)
    return held, Source.ok("file", path, f"lock ({len(lock.registry_pins)} packages)")


NOT_ASKED = (
    "a lock: not read, since no finding depends on what it holds (no pyproject.toml in its "
    "folder requires a watched package without an upper bound)"
)


def read_folder_locks(
    locks: Iterable[tuple[ProjectFile, str, int]], asked: Mapping[str, object]
) -> tuple[list[tuple[int, Source]], dict[str, tuple[str, dict[str, list[str]]]]]:
    """Read the locks (file, text, where its source goes) of the folders in ``asked`` (where
    a requirement's finding depends on what the lock holds) and any lock named on the
    command line; every other lock is a skipped source that says why.

    Returns each lock's source with its place, and folder -> (the lock file names, the
    versions they hold by package)."""
    placed: list[tuple[int, Source]] = []
    locked: dict[str, tuple[str, dict[str, list[str]]]] = {}
    for f, text, at in locks:
        folder = posixpath.dirname(f.path) or "."
        if f.kind is None and folder not in asked:
            placed.append((at, Source.skipped("file", f.path, NOT_ASKED)))
            continue
        pins, source = read_lock_pins(f.path, text)
        placed.append((at, source))
        if pins is not None:
            names, held = locked.get(folder, ("", {}))
            base = posixpath.basename(f.path)
            locked[folder] = (f"{names}, {base}" if names else base, {**held, **pins})
    return placed, locked

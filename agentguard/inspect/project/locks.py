"""A project's own lock (uv.lock, poetry.lock, pylock.toml) as the project scan needs it:
which versions it holds. Read through :mod:`agentguard.lock.readers`; a lock that cannot
be read is a failed source, never "holds nothing"."""

from __future__ import annotations

import posixpath

from agentguard.findings import Source
from agentguard.lock.readers import READERS, LockReadError, read_lock


def read_lock_pins(path: str, text: str) -> tuple[dict[str, list[str]] | None, Source]:
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

"""Which lock a project uses: agentguard's own pair, or the lock another tool wrote
(uv.lock, poetry.lock, a pylock.toml). Kept light: `agentguard lock` asks this before it
starts the resolver, and reads a foreign lock's format only when the project has one."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from agentguard import safeio
from agentguard.errors import UsageError
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK

if TYPE_CHECKING:
    from agentguard.lock.readers.interface import LockReader

# The files the readers in agentguard.lock.readers read (a test holds the two together).
LOCK_FILES = ("uv.lock", "poetry.lock", PYLOCK)
EXPORT_MARK = "# Exported by `agentguard lock --export` from "
CREATED_BY = "agentguard-export"


def is_export(path: Path) -> bool:
    """A requirements.lock or pylock.toml `lock --export` wrote (not a lock of its own)."""
    try:
        with safeio.open_regular(path) as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return False
    return head.startswith(EXPORT_MARK) or f'created-by = "{CREATED_BY}"' in head


def quick_kind(root: Path) -> str | None:
    """Which lock, from the file names alone: ``"own"`` (agentguard's pair, or no lock of
    another tool: :func:`existing_reader` is None), ``"uv.lock"`` (a uv.lock and no other
    lock: its reader is the uv.lock reader), or None (only the readers can tell)."""
    if (root / REQUIREMENTS_LOCK).exists() and not is_export(root / REQUIREMENTS_LOCK):
        return "own"
    present = [n for n in LOCK_FILES if (root / n).is_file() or (root / n).is_symlink()]
    if not present:
        return "own"
    if present == ["uv.lock"] and not (root / "uv.lock").is_symlink():
        return "uv.lock"
    return None


def existing_reader(root: Path) -> LockReader | None:
    """The reader of the project's own (non-agentguard) lock, when that is the lock it uses.

    Our own lock files take precedence (the project chose agentguard's lock). Two foreign
    locks are never resolved by taking the first."""
    if quick_kind(root) == "own":
        return None
    from agentguard.lock.readers import find_existing

    found = find_existing(root)
    if not found:
        return None
    if len(found) > 1 and found[0].format == "uv.lock" and written_by_uv(root / PYLOCK):
        found = found[:1]  # `uv export --format pylock.toml` of the uv.lock beside it
    if len(found) > 1:
        names = ", ".join(r.filename for r in found)
        raise UsageError(
            f"{root}: more than one lock ({names}); agentguard will not pick one: remove the "
            "one the project does not install from"
        )
    if found[0].filename == PYLOCK and not (root / PYLOCK).is_file():
        return None
    return found[0]


def written_by_uv(path: Path) -> bool:
    try:
        with safeio.open_regular(path) as fh:
            return b'created-by = "uv"' in fh.read(4096)
    except (OSError, UnicodeDecodeError):
        return False


def derived_pylock(path: Path) -> bool:
    """A pylock.toml exported from the project's own lock (by agentguard or by uv)."""
    return is_export(path) or written_by_uv(path)

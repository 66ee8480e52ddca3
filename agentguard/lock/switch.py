"""The two lock files are replaced as a pair, with one atomic switch.

Both new files are written to temp siblings and synced; then a small manifest naming them
and their hashes is renamed into place: that rename is the switch. Before it, the old pair
stands (the temp files are litter, removed by the next run); after it, the new pair is the
lock, even if the process dies before both renames are done: the next ``agentguard lock``
(holding the project lock) finishes them, and ``lock --check`` reports the project as
mid-switch (exit 3) instead of checking a mixed pair.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping
from pathlib import Path

from agentguard import safeio
from agentguard.lock.lock_names import PYLOCK, REQUIREMENTS_LOCK, LockfileError
from agentguard.safeio import MAX_LOCK_BYTES, MAX_SWITCH_BYTES

SWITCH = ".agentguard-lock-switch.json"
# (hashlib and json are imported where they are used: every re-lock takes the project lock,
# which looks for a switch to finish, before its resolver starts, and finds none)
_TEMP = re.compile(r"\.(pylock\.toml|requirements\.lock)\.agentguard-[0-9]+\.tmp")


def temp_for(path: Path) -> Path:
    return path.with_name(f".{path.name}.agentguard-{os.getpid()}.tmp")


def _sync_dir(folder: Path) -> None:
    with contextlib.suppress(OSError):
        dfd = os.open(folder, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def _prepare(path: Path, data: bytes) -> Path:
    tmp = temp_for(path)
    # The name is predictable: whatever was planted under it (a link, a hard link to a file
    # elsewhere) is removed, never followed or truncated.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())
    return tmp


def pending(root: Path) -> bool:
    """A switch was made and not finished (the process died between the renames)."""
    return os.path.lexists(root / SWITCH)


def write_pair(files: Mapping[Path, str]) -> None:
    """Write every file to a temp sibling; switch; rename each into place.

    Whatever stops the write before the switch (a full disk, a read-only folder, SIGINT or
    SIGTERM turned into an exception) removes this run's temp files and leaves the old
    pair; a SIGKILL leaves them for the next run holding the project lock to remove."""
    import hashlib
    import json

    root = next(iter(files)).parent
    blobs = {path: text.encode("utf-8") for path, text in files.items()}
    prepared: list[tuple[Path, Path]] = []
    manifest = {
        "schema": 1,
        "files": {
            path.name: {"temp": temp_for(path).name, "sha256": hashlib.sha256(b).hexdigest()}
            for path, b in blobs.items()
        },
    }
    try:
        for path, data in blobs.items():
            prepared.append((_prepare(path, data), path))
        tmp_manifest = _prepare(root / SWITCH, json.dumps(manifest).encode())
        _sync_dir(root)  # the temp files are there before the switch says so
        os.replace(tmp_manifest, root / SWITCH)  # the switch
        _finish(root, prepared)
    except BaseException:
        # Switched or not is what the disk says (an interrupt can land between the rename
        # and any flag set after it); the project lock is held, so a manifest is ours.
        if pending(root):  # the new pair is the lock now: finish what can be finished
            with contextlib.suppress(OSError):
                _finish(root, prepared)
        else:
            for path in [*files, root / SWITCH]:
                with contextlib.suppress(OSError):
                    temp_for(path).unlink()
        raise


def _finish(root: Path, renames: list[tuple[Path, Path]]) -> None:
    for tmp, path in renames:
        if os.path.lexists(tmp):
            os.replace(tmp, path)
    _sync_dir(root)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(root / SWITCH)
    _sync_dir(root)


def _sha256_regular(path: Path) -> str | None:
    """The sha256 of a regular file in the project folder (through the safe open: no link
    followed, no FIFO waited on, capped as a lock file), or None."""
    import hashlib

    if os.path.islink(path):
        return None
    try:
        return hashlib.sha256(
            safeio.read_bytes(path, root=path.parent, cap=MAX_LOCK_BYTES)
        ).hexdigest()
    except OSError:
        return None


def finish_pending(root: Path) -> None:
    """Finish a switch a killed run left (only while holding the project lock). A manifest
    that is not one of ours, or temp files that do not match it, are a LockfileError."""
    path = root / SWITCH
    if not os.path.lexists(path):
        return
    import json

    broken = LockfileError(
        f"{SWITCH} names lock files that are not there or do not match; delete it and re-run",
        code="lock-switch-interrupted",
    )
    try:
        if os.path.islink(path):
            raise broken
        manifest = json.loads(safeio.read_bytes(path, root=root, cap=MAX_SWITCH_BYTES))
    except (OSError, ValueError, RecursionError):
        raise broken from None
    entries = manifest.get("files") if isinstance(manifest, dict) else None
    if not isinstance(entries, dict) or not entries:
        raise broken
    renames: list[tuple[Path, Path]] = []
    for name, entry in entries.items():
        temp = entry.get("temp") if isinstance(entry, dict) else None
        want = entry.get("sha256") if isinstance(entry, dict) else None
        if (
            name not in (PYLOCK, REQUIREMENTS_LOCK)
            or not isinstance(temp, str)
            or not _TEMP.fullmatch(temp)
            or not temp.startswith(f".{name}.")
        ):
            raise broken
        if _sha256_regular(root / temp) == want:
            renames.append((root / temp, root / name))
        elif _sha256_regular(root / name) != want:
            raise broken
    _finish(root, renames)

"""Reading the `pylock.toml` an image is compared with (AG110): the standard package list only.

`agentguard lock` writes a `[tool.agentguard]` table too; this reader ignores it, so any
PEP 751 lock (uv's, pip's) works. Every read is a :class:`Source`; a lock that cannot be
read is a failed source, never an empty lock.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from packaging.utils import canonicalize_name

from agentguard import safeio
from agentguard.facts.lock import LOCK_NAME as LOCK_NAME
from agentguard.facts.lock import OTHER_LOCKS as OTHER_LOCKS
from agentguard.facts.lock import LockInput as LockInput
from agentguard.findings import Source
from agentguard.lock.pins import LockedPackage
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


# One lock entry: the same frozen record every lock reader yields (a name may have several,
# one per fork). A version of "" means the entry has none (a VCS or directory source).
LockedPin = LockedPackage


def read_lock(path: Path, *, discovered: bool = False) -> tuple[LockInput | None, Source]:
    """Parse and validate ``path`` as a PEP 751 lock; a failure is a failed source."""
    from packaging.pylock import Pylock, PylockUnsupportedVersionError, PylockValidationError

    shown = str(path)
    try:
        size = path.stat().st_size
        if size > MAX_LOCK_BYTES:
            return None, Source.failed(
                "lockfile",
                shown,
                f"{size} bytes, over the {MAX_LOCK_BYTES}-byte cap",
                error_code="lockfile-too-large",
                retryable=False,
            )
        data = safeio.read_bytes(path, cap=MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None, Source.failed(
            "lockfile", shown, "no such file", error_code="lockfile-missing", retryable=False
        )
    except OSError as exc:
        return None, Source.failed(
            "lockfile", shown, str(exc), error_code="lockfile-unreadable", retryable=False
        )
    if path.name in OTHER_LOCKS:
        return _read_tool_lock(path, data, discovered)
    try:
        lock = Pylock.from_dict(tomllib.loads(data.decode("utf-8")))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return None, Source.failed(
            "lockfile", shown, f"not TOML: {exc}", error_code="lockfile-invalid", retryable=False
        )
    except RecursionError:
        return None, Source.failed(
            "lockfile",
            shown,
            "nested too deeply to read",
            error_code="lockfile-invalid",
            retryable=False,
        )
    except (PylockValidationError, PylockUnsupportedVersionError) as exc:
        return None, Source.failed(
            "lockfile",
            shown,
            f"not a valid pylock.toml: {exc}",
            error_code="lockfile-invalid",
            retryable=False,
        )
    pins = tuple(
        LockedPackage(
            name=canonicalize_name(p.name),
            version=str(p.version) if p.version is not None else "",
            marker=str(p.marker) if p.marker is not None else None,
            hashes=tuple(
                sorted(
                    f"sha256:{w.hashes['sha256']}" for w in (p.wheels or []) if "sha256" in w.hashes
                )
            ),
        )
        for p in lock.packages
    )
    digest = hashlib.sha256(data).hexdigest()
    how = "discovered in the current directory" if discovered else "given with --lock"
    return (
        LockInput(shown, f"sha256:{digest}", pins, discovered),
        Source.ok("lockfile", shown, f"{len(pins)} packages ({how})"),
    )


def _read_tool_lock(path: Path, data: bytes, discovered: bool) -> tuple[LockInput | None, Source]:
    """uv.lock / poetry.lock: what an install from it puts into the environment."""
    from agentguard.lock.readers import READERS, LockReadError, read_lock
    from agentguard.lock.readers.install_view import installed_by

    shown = str(path)
    reader = next(r for r in READERS if r.filename == path.name)
    try:
        lock = read_lock(reader, data.decode("utf-8"), shown)
    except UnicodeDecodeError as exc:
        return None, Source.failed(
            "lockfile", shown, f"not UTF-8: {exc}", error_code="lockfile-invalid", retryable=False
        )
    except LockReadError as exc:
        return None, Source.failed(
            "lockfile", shown, str(exc), error_code=exc.code, retryable=False
        )
    pins = tuple(LockedPin(n, v or "", m) for n, v, m in installed_by(lock))
    how = "discovered in the current directory" if discovered else "given with --lock"
    return (
        LockInput(shown, f"sha256:{hashlib.sha256(data).hexdigest()}", pins, discovered),
        Source.ok(
            "lockfile",
            shown,
            f"{len(pins)} packages an install from {path.name} puts in place ({how})",
        ),
    )

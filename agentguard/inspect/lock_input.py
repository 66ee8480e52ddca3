"""Reading the `pylock.toml` an image is compared with (AG110): the standard package list only.

`agentguard lock` writes a `[tool.agentguard]` table too; this reader ignores it, so any
PEP 751 lock (uv's, pip's) works. Every read is a :class:`Source`; a lock that cannot be
read is a failed source, never an empty lock.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.utils import canonicalize_name

from agentguard import safeio
from agentguard.findings import Source
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LOCK_NAME = "pylock.toml"


@dataclass(frozen=True)
class LockedPin:
    name: str  # canonical
    version: str | None  # None: the lock entry has no version (a VCS or directory source)
    marker: str | None


@dataclass(frozen=True)
class LockInput:
    path: str  # as shown to the user
    sha256: str  # of the file's bytes: the report's provenance input hash
    pins: tuple[LockedPin, ...]
    discovered: bool  # True when found next to the working directory, not given


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
        LockedPin(
            name=canonicalize_name(p.name),
            version=str(p.version) if p.version is not None else None,
            marker=str(p.marker) if p.marker is not None else None,
        )
        for p in lock.packages
    )
    digest = hashlib.sha256(data).hexdigest()
    how = "discovered in the current directory" if discovered else "given with --lock"
    return (
        LockInput(shown, f"sha256:{digest}", pins, discovered),
        Source.ok("lockfile", shown, f"{len(pins)} packages ({how})"),
    )

"""Facts about the lock an image is compared with (AG110): the standard package list only."""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.facts.pins import LockedPackage

LOCK_NAME = "pylock.toml"


OTHER_LOCKS = ("uv.lock", "poetry.lock")  # a project's own lock, read by its tool's reader


@dataclass(frozen=True)
class LockInput:
    path: str  # as shown to the user
    sha256: str  # of the file's bytes: the report's provenance input hash
    pins: tuple[LockedPackage, ...]
    discovered: bool  # True when found next to the working directory, not given

"""The previous lock of a re-lock, as the requirements flow reads it: the quick read of
``requirements.lock`` (:class:`~agentguard.lock.lockfile.QuickPrevious`) or the whole
``pylock.toml`` (:class:`~agentguard.lock.lockfile.StoredLock`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from agentguard.lock.graph import LockedPackage
    from agentguard.lock.lockfile import QuickPrevious
    from agentguard.lock.stored import StoredLock

Previous = Union["QuickPrevious", "StoredLock"]


def previous_pins(previous: Previous) -> tuple[LockedPackage, ...]:
    from agentguard.lock.lockfile import QuickPrevious

    return previous.pins if isinstance(previous, QuickPrevious) else previous.packages


def previous_index(previous: Previous) -> tuple[str, ...]:
    """The index the previous lock names (reported, never contacted)."""
    from agentguard.lock.stored import StoredLock

    if isinstance(previous, StoredLock):
        return tuple(previous.tool.get("index-urls", []))
    for line in previous.requirements_text.splitlines()[:8]:
        if line.startswith("# index-urls:"):
            return tuple(line.split(":", 1)[1].split())
    return ()


def previous_digest(previous: Previous) -> str | None:
    from agentguard.lock.lockfile import QuickPrevious

    if isinstance(previous, QuickPrevious):
        return previous.lock_digest
    digest = previous.tool.get("lock-digest")
    return str(digest) if digest else None


def same_lock(previous: Previous, requirements_text: str) -> bool:
    """Same pins, hashes and graph as before (the requirements lock carries the digest of
    everything in pylock.toml but its timestamp): nothing to rewrite."""
    from agentguard.lock.lockfile import QuickPrevious

    if not isinstance(previous, QuickPrevious):
        return False
    return previous.requirements_text == requirements_text

"""The pin facts of a lock: one frozen record per lock entry.

A lock entry is (name, version, markers): a universal lock pins a package once per fork
(``jiter==0.18.0 ; python_full_version < "3.11"`` and ``jiter==0.19.0 ; python_full_version
>= "3.11"``), so a name may have several entries. Nothing that reads a lock keeps only one
of them: every reader (``requirements.lock``, ``pylock.toml``, and readers of other lock
formats) yields :class:`LockedPackage` records, and :func:`pins_by_name` groups them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from packaging.version import Version


@dataclass(frozen=True)
class LockedPackage:
    name: str  # canonical
    version: str  # "" when the entry has no exact version
    marker: str | None  # the environments this entry is for; None: every environment
    hashes: tuple[str, ...] = ()  # "sha256:<hex>", sorted

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)

    @property
    def label(self) -> str:
        """``name==version ; marker`` as a requirements file writes it."""
        head = f"{self.name}=={self.version}"
        return f"{head} ; {self.marker}" if self.marker else head


def pins_by_name(pins: Iterable[LockedPackage]) -> dict[str, tuple[LockedPackage, ...]]:
    """Every entry of each name, in a stable order (version, then marker)."""
    out: dict[str, list[LockedPackage]] = {}
    for p in pins:
        out.setdefault(p.name, []).append(p)
    return {
        n: tuple(sorted(ps, key=lambda p: (_order(p.version), p.marker or "")))
        for n, ps in sorted(out.items())
    }


def _order(version: str) -> tuple[int, Version | str]:
    try:
        return (0, Version(version))
    except ValueError:
        return (1, version)

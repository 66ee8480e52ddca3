"""One interface for the locks a project already has (uv.lock, poetry.lock, pylock.toml).

Each format is one module with a :class:`LockReader`; each yields the same frozen
:class:`ExistingLock`: pins (several per name, each with its marker and hashes), the
files the lock names (so that a parent's ``Requires-Dist`` can be read from the metadata
cache), and the edges the lock records. A file that cannot be read is a
:class:`LockReadError` with the file and, where known, the line: never "no pins".
"""

from __future__ import annotations

import re
import sys
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any

from agentguard.lock.graph import LockedPackage

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from agentguard.safeio import MAX_LOCK_BYTES as MAX_LOCK_BYTES  # one cap for every lock


class LockReadError(Exception):
    """The lock file could not be read as its format; ``line`` is 1-based when known."""

    def __init__(self, file: str, message: str, *, line: int | None = None, code: str) -> None:
        where = f"{file}:{line}" if line else file
        super().__init__(f"{where}: {message}")
        self.file = file
        self.line = line
        self.code = code


@dataclass(frozen=True)
class LockedFile:
    """A wheel or sdist the lock names, with the hash the lock holds for it."""

    filename: str
    url: str | None
    sha256: str | None


@dataclass(frozen=True)
class LockPin:
    """One locked package. A name may have several (forked resolutions), told apart by marker.

    ``local`` marks the project itself and its workspace members (editable, virtual or
    directory sources): they are not downloaded, so they carry no hash."""

    name: str  # canonical
    version: str
    marker: str | None
    hashes: tuple[str, ...]  # "sha256:<hex>", sorted
    files: tuple[LockedFile, ...] = ()
    index: str | None = None  # the registry the lock names for it
    source: str = "registry"  # "registry" | "local" | "git" | "url" | "unknown"
    line: int | None = None
    groups: tuple[str, ...] = ()  # Poetry 2: the dependency groups that need it ("main", "dev")

    @property
    def local(self) -> bool:
        return self.source == "local"

    def as_locked_package(self) -> LockedPackage:
        """The one place where a reader's pin becomes the lock model's fact."""
        return LockedPackage(self.name, self.version, self.marker, self.hashes)


@dataclass(frozen=True)
class LockEdge:
    """``parent`` depends on ``child`` according to the lock. ``specifier`` is the declared
    range when the lock records it (Poetry does; uv does for the project's own packages);
    otherwise None, and it is read from the parent's ``Requires-Dist``."""

    parent: str  # canonical name
    parent_version: str | None
    child: str  # canonical
    marker: str | None = None
    specifier: str | None = None
    extra: str | None = None  # the parent's extra this edge belongs to


@dataclass(frozen=True)
class ExistingLock:
    path: str  # relative to the project root
    format: str  # "uv.lock" | "poetry.lock" | "pylock.toml"
    created_by: str  # "uv", "poetry 2.1.3", "pip", ...
    pins: tuple[LockPin, ...]
    edges: tuple[LockEdge, ...]
    records_edges: bool  # whether the format lists each package's dependencies
    root_requires: tuple[str, ...] | None = (
        None  # the project's requirements as the lock recorded them
    )
    # requirement strings the lock file records for each local member, by member name
    member_requires: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # the project's development groups as the lock recorded them (uv installs them by default)
    root_requires_dev: tuple[str, ...] = ()
    root: str | None = None  # the project's own package, when the lock names it
    content_hash: str | None = None
    # the version of the tool that wrote the lock, when the lock says (Poetry's first line)
    tool_version: str | None = None

    @property
    def registry_pins(self) -> tuple[LockPin, ...]:
        return tuple(p for p in self.pins if not p.local)

    @property
    def local_names(self) -> frozenset[str]:
        return frozenset(p.name for p in self.pins if p.local)

    def packages(self) -> tuple[LockedPackage, ...]:
        return tuple(p.as_locked_package() for p in self.registry_pins)


class LockReader(ABC):
    """Reads one lock format. ``read`` gets the file's text and never touches the disk."""

    format: str
    filename: str

    @abstractmethod
    def read(self, text: str, path: str) -> ExistingLock: ...

    @staticmethod
    def claims(text: str) -> bool:
        """Whether a file with this reader's name is of its format (pylock.toml is shared)."""
        return True


_TOML_AT = re.compile(r"at line (\d+)")


def load_toml(text: str, path: str) -> dict[str, Any]:
    """TOML as a dict, or a LockReadError naming the line tomllib stopped at. A lock in the
    layout uv and Poetry write is read by :mod:`lock_toml` (the same dict, faster); any
    other text, and every error, is tomllib's."""
    from agentguard.lock.readers.lock_toml import loads

    fast = loads(text)
    if fast is not None:
        return fast
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_AT.search(str(exc))
        line = int(m.group(1)) if m else None
        if line is None and "end of document" in str(exc):
            line = max(1, text.count("\n") + (0 if text.endswith("\n") else 1))
        raise LockReadError(
            path,
            f"not valid TOML ({str(exc).split(' (at ', 1)[0]})"
            + ("; the file ends early" if "end of document" in str(exc) else ""),
            line=line,
            code="lockfile-invalid",
        ) from None
    except RecursionError:
        raise LockReadError(path, "nested too deeply to read", code="lockfile-invalid") from None


def table_lines(text: str, header: str) -> list[int]:
    """The 1-based line of each ``[[header]]`` array-of-tables entry, in order."""
    pattern = re.compile(rf"^\s*\[\[\s*{re.escape(header)}\s*\]\]\s*(#.*)?$")
    return [i for i, line in enumerate(text.splitlines(), 1) if pattern.match(line)]


def require(
    value: Any, kind: type | tuple[type, ...], path: str, what: str, line: int | None
) -> Any:
    if not isinstance(value, kind):
        raise LockReadError(
            path, f"{what} is missing or malformed", line=line, code="lockfile-invalid"
        )
    return value

"""The two lock files a previous ``agentguard lock`` wrote, read back without network
(:class:`StoredLock`): the pins of both files, the inputs' hashes they were made from, and
the dependency graph and upload times ``pylock.toml``'s ``[tool.agentguard]`` table records
(written by :mod:`agentguard.lock.lockfile`). A malformed or unreadable pair raises
:class:`~agentguard.lock.mutex.LockfileError`, never an empty lock.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from agentguard import safeio
from agentguard.lock.graph import (
    PROJECT,
    DependencyEdge,
    LockedPackage,
    LockGraph,
    UpstreamBound,
)
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK, LockfileError
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class StoredLock:
    """What a previous ``agentguard lock`` wrote, read back without network."""

    packages: tuple[LockedPackage, ...]
    graph: LockGraph
    input_hash: str | None
    requirements_input_hash: str | None
    requirements_pins: tuple[LockedPackage, ...]
    tool: Mapping[str, Any]
    uploaded: Mapping[tuple[str, str], str | None] = field(default_factory=dict)
    # (name, version) -> the earliest upload time of its locked files, when recorded


def read_stored(root: Path) -> StoredLock | None:
    """The previous lock, or None when neither file exists. Raises LockfileError when unreadable."""
    from packaging.pylock import Pylock, PylockValidationError

    from agentguard.lock.backend import ResolverError
    from agentguard.lock.requirements_text import parse_requirements_lock

    py = root / PYLOCK
    req = root / REQUIREMENTS_LOCK
    if not py.exists() and not req.exists():
        return None
    if not py.exists():
        raise LockfileError(
            f"{REQUIREMENTS_LOCK} exists but {PYLOCK} does not", code="lockfile-missing"
        )
    if not req.exists():
        raise LockfileError(
            f"{PYLOCK} exists but {REQUIREMENTS_LOCK} does not", code="lockfile-missing"
        )
    try:
        data = tomllib.loads(safeio.read_text(py, root=root, cap=MAX_LOCK_BYTES))
        lock = Pylock.from_dict(data)
    except (OSError, UnicodeDecodeError) as exc:
        raise LockfileError(f"{PYLOCK}: cannot read ({exc})", code="lockfile-unreadable") from None
    except tomllib.TOMLDecodeError as exc:
        raise LockfileError(f"{PYLOCK}: not valid TOML ({exc})", code="lockfile-invalid") from None
    except RecursionError:
        raise LockfileError(
            f"{PYLOCK}: nested too deeply to read", code="lockfile-invalid"
        ) from None
    except (PylockValidationError, ValueError, TypeError) as exc:
        raise LockfileError(
            f"{PYLOCK}: not a valid PEP 751 lock ({exc})", code="lockfile-invalid"
        ) from None
    packages = tuple(
        LockedPackage(
            name=canonicalize_name(p.name),
            version=str(p.version) if p.version else "",
            marker=str(p.marker) if p.marker else None,
            hashes=tuple(
                sorted(
                    f"sha256:{w.hashes['sha256']}" for w in (p.wheels or []) if "sha256" in w.hashes
                )
            ),
        )
        for p in lock.packages
    )
    uploaded: dict[tuple[str, str], str | None] = {}
    for p in lock.packages:
        stamps = [w.upload_time for w in p.wheels or []]
        stamps.append(p.sdist.upload_time if p.sdist else None)
        times = sorted(t for t in stamps if t is not None)
        key = (canonicalize_name(p.name), str(p.version) if p.version else "")
        uploaded[key] = times[0].isoformat() if times else None
    tool = dict((lock.tool or {}).get("agentguard", {}))
    try:
        edges = [_edge(e) for e in _tables(tool.get("edges", []))]
    except (KeyError, TypeError):
        raise LockfileError(
            f"{PYLOCK}: malformed [tool.agentguard] edge (each needs a parent, a child and a "
            "specifier as strings)",
            code="lockfile-invalid",
        ) from None
    try:
        bounds = tuple(
            UpstreamBound(
                parent=_text(b["parent"]),
                parent_version=_text(b["parent-version"]),
                child=_text(b["child"]),
                specifier=_text(b["specifier"]),
                parent_versions=tuple(_text_list(b["later-releases"])),
            )
            for b in _tables(tool.get("upstream-bounds", []))
        )
    except (KeyError, TypeError):
        raise LockfileError(
            f"{PYLOCK}: malformed [tool.agentguard] upstream-bounds", code="lockfile-invalid"
        ) from None
    try:
        released = {str(k): tuple(_text_list(v)) for k, v in _table(tool, "released-majors")}
        unknown = tuple(_text_list(tool.get("unknown-metadata", [])))
    except TypeError:
        raise LockfileError(
            f"{PYLOCK}: malformed [tool.agentguard] released-majors or unknown-metadata "
            "(arrays of strings)",
            code="lockfile-invalid",
        ) from None
    graph = LockGraph(
        packages=packages,
        edges=tuple(edges),
        released_majors=released,
        unknown_metadata=unknown,
        upstream_bounds=bounds,
        major_uploads=_str_tables(tool.get("major-uploads")),
        release_uploads=_strs(tool.get("release-uploads")),
    )
    try:
        req_text = safeio.read_text(req, root=root, cap=MAX_LOCK_BYTES)
        pins, _, _ = parse_requirements_lock(req_text)
    except (OSError, UnicodeDecodeError) as exc:
        raise LockfileError(
            f"{REQUIREMENTS_LOCK}: cannot read ({exc})", code="lockfile-unreadable"
        ) from None
    except ResolverError as exc:
        raise LockfileError(f"{REQUIREMENTS_LOCK}: {exc}", code="lockfile-invalid") from None
    req_hash = None
    for line in req_text.splitlines():
        if line.startswith("# input-hash:"):
            req_hash = line.split(":", 1)[1].strip()
    return StoredLock(
        packages, graph, tool.get("input-hash"), req_hash, tuple(pins), tool, uploaded
    )


# The stored lock is the pull request's: every value that becomes part of the graph is
# checked for its type as it is read (a list where a name belongs is a malformed lock, exit
# 3 with the file named, never a crash of a rule that indexes or sorts by it).


def _edge(e: dict[str, object]) -> DependencyEdge:
    return DependencyEdge(
        parent=_text(e["parent"]) or PROJECT,
        parent_version=_text(e["parent-version"]) if e.get("parent-version") is not None else None,
        child=_text(e["child"]),
        specifier=_text(e["specifier"]),
        marker=_text(e["marker"]) if e.get("marker") is not None else None,
        extras=tuple(_text_list(e.get("extras", []))),
        admitted_majors=tuple(_text_list(e["majors-admitted"])) if "majors-admitted" in e else None,
    )


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError(f"not a string: {type(value).__name__}")
    return value


def _list(value: object) -> list[object]:
    if not isinstance(value, list):
        raise TypeError(f"not an array: {type(value).__name__}")
    return value


def _table(tool: dict[str, object], key: str) -> list[tuple[object, object]]:
    value = tool.get(key, {})
    if not isinstance(value, dict):
        raise TypeError(f"{key}: not a table")
    return list(value.items())


def _tables(value: object) -> list[dict[str, object]]:
    items = _list(value)
    if not all(isinstance(v, dict) for v in items):
        raise TypeError("not an array of tables")
    return [v for v in items if isinstance(v, dict)]


def _text_list(value: object) -> list[str]:
    return [_text(v) for v in _list(value)]


def _strs(value: object) -> dict[str, str]:
    """A table of strings as written; anything else in it is left out (unknown, not an error)."""
    items = value.items() if isinstance(value, dict) else ()
    return {str(k): v for k, v in items if isinstance(v, str)}


def _str_tables(value: object) -> dict[str, dict[str, str]]:
    items = value.items() if isinstance(value, dict) else ()
    return {str(k): _strs(v) for k, v in items if isinstance(v, dict)}

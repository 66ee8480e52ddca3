"""Facts about a resolved dependency tree: frozen records the dependency rules read."""

from __future__ import annotations

import functools
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

from agentguard.facts.pins import LockedPackage as LockedPackage

PROJECT = "<project>"


@dataclass(frozen=True)
class DependencyEdge:
    """``parent`` declares ``child`` with ``specifier`` (from its own Requires-Dist)."""

    parent: str  # canonical name, or PROJECT
    parent_version: str | None
    child: str  # canonical
    specifier: str
    marker: str | None = None
    extras: tuple[str, ...] = ()
    admitted_majors: tuple[str, ...] | None = (
        None  # released majors the specifier admits; None = unknown
    )


@dataclass(frozen=True)
class UpstreamBound:
    """Releases of ``parent`` later than the locked one that hold ``child`` below the
    locked major with ``specifier`` (the same text in each of ``parent_versions``, oldest
    first): the upstream's own word that the newer major broke it."""

    parent: str
    parent_version: str  # the locked release they are later than
    child: str
    specifier: str
    parent_versions: tuple[str, ...]


@dataclass(frozen=True)
class LockGraph:
    packages: tuple[LockedPackage, ...]
    edges: tuple[DependencyEdge, ...]
    released_majors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the released versions of each locked package, as major keys in order ("0.9", "1", "2")
    unknown_metadata: tuple[str, ...] = ()  # packages whose Requires-Dist could not be read
    upstream_bounds: tuple[UpstreamBound, ...] = ()
    # When each admitted major of a spanned child first shipped: child -> major key -> the
    # upload time (UTC, ISO 8601) of that major's first final release. Only for the children
    # of major-spanning edges; a major missing here has no known upload time.
    major_uploads: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    # "name==version" -> the upload time of that release (its earliest file), for the
    # parents of major-spanning edges.
    release_uploads: Mapping[str, str] = field(default_factory=dict)

    def versions_of(self, name: str) -> list[LockedPackage]:
        return list(self._by_name.get(canonicalize_name(name), ()))

    def edges_into(self, child: str) -> list[DependencyEdge]:
        return list(self._by_child.get(child, ()))

    @functools.cached_property
    def _by_name(self) -> dict[str, list[LockedPackage]]:
        """Each name's pins in lock order (the rules ask for a name's pins 2,900 times per
        272-pin re-lock: a scan of every pin each time was a fifth of their time)."""
        by_name: dict[str, list[LockedPackage]] = {}
        for p in self.packages:
            by_name.setdefault(p.name, []).append(p)
        return by_name

    @functools.cached_property
    def _by_child(self) -> dict[str, list[DependencyEdge]]:
        """The edges into each child, in edge order."""
        by_child: dict[str, list[DependencyEdge]] = {}
        for e in self.edges:
            by_child.setdefault(e.child, []).append(e)
        return by_child

    def path_to(self, parent: str) -> tuple[str, ...]:
        """Shortest chain of ``name==version`` from the project down to ``parent``."""
        if parent == PROJECT:
            return ("project",)
        label = self._labels
        prev = self._shortest_parents
        if parent not in prev:
            return ("project", label.get(parent, parent))
        chain = [parent]
        while chain[-1] in prev and prev[chain[-1]] != PROJECT:
            chain.append(prev[chain[-1]])
        return ("project", *(label.get(n, n) for n in reversed(chain)))

    @functools.cached_property
    def _labels(self) -> dict[str, str]:
        """``name==version``; a name pinned once per fork shows every version."""
        versions: dict[str, list[str]] = {}
        for p in self.packages:
            if p.version not in versions.setdefault(p.name, []):
                versions[p.name].append(p.version)
        # (a workspace member whose version is dynamic has none in the lock: its name alone)
        return {n: f"{n}=={' or '.join(vs)}" if any(vs) else n for n, vs in versions.items()}

    @functools.cached_property
    def _shortest_parents(self) -> dict[str, str]:
        """One breadth-first walk from the project (children in name order): each
        reachable package's parent on its first shortest path."""
        children: dict[str, list[str]] = {}
        for e in sorted(self.edges, key=lambda e: (e.parent, e.child)):
            children.setdefault(e.parent, []).append(e.child)
        prev: dict[str, str] = {}
        seen = {PROJECT}
        queue: deque[str] = deque([PROJECT])
        while queue:
            node = queue.popleft()
            for c in children.get(node, []):
                if c not in seen:
                    seen.add(c)
                    prev[c] = node
                    queue.append(c)
        return prev


@functools.lru_cache(maxsize=65536)
def major_key(version: Version) -> str:
    """The compatibility line of a version: the major, or ``0.minor`` before 1.0. (Kept per
    version: a re-lock asks it 25,000 times beside the resolver. Equal versions have one
    key: they differ at most in trailing zeros of their release.)"""
    if version.major == 0:
        minor = version.release[1] if len(version.release) > 1 else 0
        return f"0.{minor}"
    return str(version.major)


def released_major_keys(versions: Iterable[Version]) -> tuple[str, ...]:
    """The major keys of ``versions``, in the order of their oldest version (a key's place
    is where its first version falls when the versions are sorted; no full sort needed)."""
    lowest: dict[str, Version] = {}
    for v in set(versions):
        k = major_key(v)
        low = lowest.get(k)
        if low is None or v < low:
            lowest[k] = v
    return tuple(sorted(lowest, key=lowest.__getitem__))


MajorGroups = tuple[tuple[str, tuple[Version, ...]], ...]


def major_groups(versions: Iterable[Version]) -> MajorGroups:
    """Final releases by major key (oldest major first), each newest first."""
    groups: dict[str, list[Version]] = {}
    for v in set(versions):  # bucketed first: each major is sorted on its own
        if not v.is_prerelease:
            groups.setdefault(major_key(v), []).append(v)
    return tuple(
        sorted(
            ((k, tuple(sorted(vs, reverse=True))) for k, vs in groups.items()),
            key=lambda g: _major_order(g[0]),
        )
    )


class ReleasedVersions(list[Version]):
    """A package's released versions, never changed once read, with their major groups
    and keys worked out once (:func:`major_groups`, :func:`released_major_keys`)."""

    _groups: MajorGroups | None = None
    _keys: tuple[str, ...] | None = None

    def groups(self) -> MajorGroups:
        if self._groups is None:
            self._groups = major_groups(self)
        return self._groups

    def keys(self) -> tuple[str, ...]:
        if self._keys is None:
            self._keys = released_major_keys(self)
        return self._keys


def majors_admitted(
    specifier: str, versions: Iterable[Version], groups: MajorGroups | None = None
) -> tuple[str, ...]:
    """Which released majors have at least one version the specifier admits.

    ``groups`` (from :func:`major_groups` of ``versions``) saves regrouping when many
    edges point at one package. A major wholly outside the specifier's ``>=``/``>`` and
    ``<``/``<=`` bounds (compared as majors, so local and post releases cannot slip
    through) is skipped; every other major is tested version by version, newest first.
    """
    spec = SpecifierSet(specifier)
    low: tuple[int, ...] | None = None
    high: tuple[int, ...] | None = None
    for clause in spec:
        try:
            bound = _major_order(major_key(Version(clause.version)))
        except ValueError:  # a wildcard or arbitrary-equality version: no bound taken
            continue
        if clause.operator in (">=", ">"):
            low = bound if low is None else max(low, bound)
        elif clause.operator in ("<", "<="):
            high = bound if high is None else min(high, bound)
    keys: list[str] = []
    for key, members in groups if groups is not None else major_groups(versions):
        order = _major_order(key)
        if (low is not None and order < low) or (high is not None and order > high):
            continue
        if any(spec.contains(v, prereleases=False) for v in members):
            keys.append(key)
    return tuple(keys)


@functools.lru_cache(maxsize=4096)
def _major_order(key: str) -> tuple[int, ...]:
    return tuple(int(p) for p in key.split(".") if p.isdigit())


def unbounded_above(specifier: str) -> bool:
    """True when no clause of the specifier caps the version from above."""
    for s in SpecifierSet(specifier):
        if s.operator in ("<", "<=", "==", "===", "~="):
            if s.operator == "==" and s.version.endswith(".*"):
                return False
            return False
    return True


def next_major_floor(version: Version) -> str:
    if version.major == 0:
        minor = version.release[1] if len(version.release) > 1 else 0
        return f"0.{minor + 1}"
    return f"{version.major + 1}"


def major_floor(version: Version) -> str:
    if version.major == 0:
        minor = version.release[1] if len(version.release) > 1 else 0
        return f"0.{minor}"
    return f"{version.major}.0"

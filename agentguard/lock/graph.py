"""Facts about a resolved dependency tree: frozen records the dependency rules read."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name
from packaging.version import Version

PROJECT = "<project>"


@dataclass(frozen=True)
class LockedPackage:
    name: str  # canonical
    version: str
    marker: str | None
    hashes: tuple[str, ...]  # "sha256:<hex>"

    @property
    def parsed_version(self) -> Version:
        return Version(self.version)


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
class LockGraph:
    packages: tuple[LockedPackage, ...]
    edges: tuple[DependencyEdge, ...]
    released_majors: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # the released versions of each locked package, as major keys in order ("0.9", "1", "2")
    unknown_metadata: tuple[str, ...] = ()  # packages whose Requires-Dist could not be read

    def versions_of(self, name: str) -> list[LockedPackage]:
        cname = canonicalize_name(name)
        return [p for p in self.packages if p.name == cname]

    def edges_into(self, child: str) -> list[DependencyEdge]:
        return [e for e in self.edges if e.child == child]

    def path_to(self, parent: str) -> tuple[str, ...]:
        """Shortest chain of ``name==version`` from the project down to ``parent``."""
        if parent == PROJECT:
            return ("project",)
        label = {p.name: f"{p.name}=={p.version}" for p in self.packages}
        prev: dict[str, str] = {}
        seen = {PROJECT}
        queue: deque[str] = deque([PROJECT])
        children: dict[str, list[str]] = {}
        for e in sorted(self.edges, key=lambda e: (e.parent, e.child)):
            children.setdefault(e.parent, []).append(e.child)
        while queue:
            node = queue.popleft()
            if node == parent:
                break
            for c in children.get(node, []):
                if c not in seen:
                    seen.add(c)
                    prev[c] = node
                    queue.append(c)
        if parent not in prev:
            return ("project", label.get(parent, parent))
        chain = [parent]
        while chain[-1] in prev and prev[chain[-1]] != PROJECT:
            chain.append(prev[chain[-1]])
        return ("project", *(label.get(n, n) for n in reversed(chain)))


def major_key(version: Version) -> str:
    """The compatibility line of a version: the major, or ``0.minor`` before 1.0."""
    if version.major == 0:
        minor = version.release[1] if len(version.release) > 1 else 0
        return f"0.{minor}"
    return str(version.major)


def released_major_keys(versions: Iterable[Version]) -> tuple[str, ...]:
    keys: list[str] = []
    for v in sorted(set(versions)):
        k = major_key(v)
        if k not in keys:
            keys.append(k)
    return tuple(keys)


def majors_admitted(specifier: str, versions: Iterable[Version]) -> tuple[str, ...]:
    """Which released majors have at least one version the specifier admits."""
    spec = SpecifierSet(specifier)
    keys: list[str] = []
    ordered = versions if isinstance(versions, list) else sorted(set(versions))
    for v in ordered:
        if v.is_prerelease:
            continue
        k = major_key(v)
        if k in keys:  # one admitted version is enough for its major
            continue
        if spec.contains(v, prereleases=False):
            keys.append(k)
    return tuple(sorted(keys, key=_major_order))


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

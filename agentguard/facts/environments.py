"""The environments a universal lock serves, and which of them a marker selects.

A universal lock pins a package once per fork: ``jiter==0.18.0 ; python_full_version <
"3.11"`` beside ``jiter==0.19.0 ; python_full_version >= "3.11"``. Comparing two such
locks, or asking which pin of a child an edge reaches, is a question about environments:
a Python version and a platform. This module builds a finite set of environments that is
exact for the markers at hand (every Python version the markers' bounds can tell apart,
within ``requires-python``; a table of common platforms when a marker names one) and
evaluates each marker once over all of them, as a bit mask.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# (label, marker values): the platforms a universal lock is installed on in practice.
PLATFORMS: tuple[tuple[str, Mapping[str, str]], ...] = tuple(
    (
        label,
        {
            "sys_platform": sys_platform,
            "platform_system": system,
            "os_name": os_name,
            "platform_machine": machine,
            "implementation_name": impl,
            "platform_python_implementation": "CPython" if impl == "cpython" else "PyPy",
            "platform_release": "",
            "platform_version": "",
        },
    )
    for label, sys_platform, system, os_name, machine, impl in (
        ("linux/x86_64", "linux", "Linux", "posix", "x86_64", "cpython"),
        ("linux/aarch64", "linux", "Linux", "posix", "aarch64", "cpython"),
        ("linux/x86_64 (PyPy)", "linux", "Linux", "posix", "x86_64", "pypy"),
        ("macos/arm64", "darwin", "Darwin", "posix", "arm64", "cpython"),
        ("macos/x86_64", "darwin", "Darwin", "posix", "x86_64", "cpython"),
        ("windows/AMD64", "win32", "Windows", "nt", "AMD64", "cpython"),
        ("windows/ARM64", "win32", "Windows", "nt", "ARM64", "cpython"),
    )
)
_PLATFORM_VARS = frozenset(PLATFORMS[0][1])
_PYTHON_VAR = re.compile(
    r"""\b(python_full_version|python_version)\s*(?:[<>!=~]=?|===?)\s*['"]([^'"]+)['"]"""
    r"""|['"]([^'"]+)['"]\s*(?:[<>!=~]=?|===?)\s*(python_full_version|python_version)\b"""
)
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]|['"]([^'"]+)['"]\s*==\s*extra\b""")
_IDENT = re.compile(r"[a-z_]+")
# the marker variables an environment's values spell as a marker does (or that every
# environment takes from the same default): what :meth:`EnvironmentTable.mask` groups by
_GROUPABLE = frozenset(
    {*PLATFORMS[0][1], "python_full_version", "python_version", "extra", "implementation_version"}
)
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
LOWEST_MINOR = 8  # Python 3.8, when the project does not say
HIGHEST_MINOR = 14  # at least up to here; past the markers' last bound nothing changes


@dataclass(frozen=True)
class Environment:
    python: str  # python_full_version, e.g. "3.11.0"
    platform: str  # a PLATFORMS label, or "any platform"
    values: Mapping[str, str]

    @property
    def label(self) -> str:
        return f"Python {self.python} on {self.platform}"


def marker_names(marker: str) -> set[str]:
    return set(_IDENT.findall(_QUOTED.sub("", marker))) - {"and", "or", "in", "not"}


def _python_bounds(markers: Iterable[str]) -> set[tuple[int, ...]]:
    out: set[tuple[int, ...]] = set()
    for m in markers:
        for match in _PYTHON_VAR.finditer(m):
            text = match.group(2) or match.group(3) or ""
            try:
                release = Version(text.rstrip(".*")).release
            except InvalidVersion:
                continue
            out.add(release)
    return out


def python_points(markers: Iterable[str], requires_python: str | None) -> list[str]:
    """Python versions that tell apart every interval the markers' bounds draw.

    Every minor from the lowest allowed to one past the highest bound, and within a minor
    the patch levels on both sides of each patch bound (0 and 99 besides)."""
    bounds = _python_bounds(markers)
    floor: int | None = None
    spec: SpecifierSet | None = None
    if requires_python:
        try:
            spec = SpecifierSet(requires_python)
        except InvalidSpecifier:
            spec = None
    if spec is not None:
        for s in spec:
            if s.operator in (">=", ">", "~=", "==") and not s.version.endswith("*"):
                try:
                    rel = Version(s.version).release
                except InvalidVersion:
                    continue
                if rel[0] == 3 and len(rel) > 1:
                    floor = rel[1] if floor is None else max(floor, rel[1])
    if floor is None:
        floor = LOWEST_MINOR
    minors = {b[1] for b in bounds if b[0] == 3 and len(b) > 1}
    top = max([HIGHEST_MINOR, *(m + 1 for m in minors)])
    low = min([floor, *minors]) if minors else floor
    patches: dict[int, set[int]] = {}
    for b in bounds:
        if b[0] == 3 and len(b) > 2:
            patches.setdefault(b[1], set()).update({b[2] - 1, b[2], b[2] + 1})
    points: list[str] = []
    for minor in range(low, top + 1):
        for patch in sorted({0, 99, *(p for p in patches.get(minor, ()) if p >= 0)}):
            version = f"3.{minor}.{patch}"
            if spec is None or spec.contains(version, prereleases=True):
                points.append(version)
    return points or [f"3.{floor}.0"]


class EnvironmentTable:
    """A set of environments and each marker's mask over it (bit i: environment i)."""

    def __init__(self, markers: Iterable[str | None], requires_python: str | None = None) -> None:
        texts = sorted({m for m in markers if m})
        names: set[str] = set()
        for m in texts:
            names |= marker_names(m)
        platforms: tuple[tuple[str, Mapping[str, str]], ...] = (
            PLATFORMS if names & _PLATFORM_VARS else (("any platform", PLATFORMS[0][1]),)
        )
        envs: list[Environment] = []
        for python in python_points(texts, requires_python):
            short = ".".join(python.split(".")[:2])
            for label, values in platforms:
                envs.append(
                    Environment(
                        python,
                        label,
                        {**values, "python_full_version": python, "python_version": short},
                    )
                )
        self.environments: tuple[Environment, ...] = tuple(envs)
        self.all = (1 << len(envs)) - 1
        self._masks: dict[str, int] = {}
        self._variables = frozenset(k for e in envs for k in e.values)
        self._partitions: dict[tuple[str, ...], list[tuple[int, ...]]] = {}

    def mask(self, marker: str | None) -> int:
        """The environments ``marker`` selects; a marker that cannot be read selects all
        (a pin is never dropped from a comparison because its marker is odd)."""
        if not marker:
            return self.all
        cached = self._masks.get(marker)
        if cached is not None:
            return cached
        try:
            parsed = Marker(marker)
        except InvalidMarker:
            self._masks[marker] = self.all
            return self.all
        # An edge behind an extra was kept because the extra was asked for: count it as set.
        extras = [a or b for a, b in _EXTRA.findall(marker)] or [""]
        out = 0
        for group in self._groups(marker):  # (environments the marker cannot tell apart)
            env = self.environments[group[0]]
            for extra in extras:
                try:
                    hit = parsed.evaluate({**env.values, "extra": extra})
                except Exception:  # a comparison packaging cannot make: count it as selected
                    hit = True
                if hit:
                    for i in group:
                        out |= 1 << i
                    break
        self._masks[marker] = out
        return out

    def _groups(self, marker: str) -> list[tuple[int, ...]]:
        """The environments' indexes, grouped by the values of the variables ``marker``
        names: a marker reads nothing else, so it selects a whole group or none of it (a
        2,800-marker lock evaluated each over every environment: 0.15 s of its re-lock).
        A name this table does not know the spelling of (``os.name``, ``python_implementation``)
        puts every environment in a group of its own."""
        names = marker_names(marker)
        if not names <= _GROUPABLE:
            return [(i,) for i in range(len(self.environments))]
        keys = tuple(sorted(names & self._variables))
        groups = self._partitions.get(keys)
        if groups is None:
            by_values: dict[tuple[str | None, ...], list[int]] = {}
            for i, env in enumerate(self.environments):
                by_values.setdefault(tuple(env.values.get(k) for k in keys), []).append(i)
            groups = self._partitions[keys] = [tuple(g) for g in by_values.values()]
        return groups

    def describe(self, mask: int) -> str:
        """A short list of the environments in ``mask`` (for evidence)."""
        envs = [e for i, e in enumerate(self.environments) if mask >> i & 1]
        pythons = sorted({e.python for e in envs}, key=Version)
        platforms = sorted({e.platform for e in envs})
        if not envs:
            return "no environment"
        py = pythons[0] if len(pythons) == 1 else f"{pythons[0]} to {pythons[-1]}"
        where = (
            "every platform"
            if len(platforms) == len({e.platform for e in self.environments})
            else ", ".join(platforms)
        )
        return f"Python {py} on {where}"


def both(a: str | None, b: str | None) -> str | None:
    """The marker selecting where ``a`` and ``b`` both hold (None: everywhere)."""
    if not a or a == b:
        return b or None
    if not b:
        return a
    return f"({a}) and ({b})"


def quoted_for_toml(marker: str) -> str:
    """The marker with single quotes, so a snippet pastes into a TOML string as it is."""
    return marker.replace('"', "'") if "'" not in marker else marker


def environment_marker(env: Mapping[str, str]) -> str:
    """The PEP 508 marker that selects exactly the environment a lock was resolved for."""
    return " and ".join(f"{k} == '{v}'" for k, v in sorted(env.items()))

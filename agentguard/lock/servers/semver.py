"""npm versions and ranges, as npm reads them (node-semver): enough to choose the version a
launch gets and to tell which released majors its range admits.

Ranges: ``1.2.3``, ``=1.2.3``, ``v1.2.3``, comparators (``>=1.2 <2``), x-ranges (``1.x``,
``1.2.*``, ``*``, ``""``), tilde (``~1.2``), caret (``^0.2.3``), hyphen (``1.2 - 2.3``)
and unions (``^1 || ^2``). A prerelease satisfies a range only when a comparator of the
same set names a prerelease of the same ``major.minor.patch`` (npm's rule). A range that
is none of these is None: unknown, never "any"."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

_VERSION = re.compile(
    r"^[v=\s]*(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?$"
)
_PARTIAL = re.compile(
    r"^[v=]*(\*|[xX]|0|[1-9]\d*)(?:\.(\*|[xX]|0|[1-9]\d*)(?:\.(\*|[xX]|0|[1-9]\d*)"
    r"(?:-([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?(?:\+[0-9A-Za-z.-]+)?)?)?$"
)
_COMPARATOR = re.compile(r"^(<=|>=|<|>|=|\^|~>?|)\s*(.*)$")
_MAX_PART = 10**15  # bigger numbers are no version npm publishes


Pre = tuple[int | str, ...]
_LOWEST: Pre = (0,)  # `-0`: below every prerelease of its major.minor.patch


@functools.total_ordering
@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: Pre = ()  # () : a release (sorts above its prereleases)

    def _key(self) -> tuple[int, int, int, int, tuple[tuple[int, int, str], ...]]:
        pre = tuple((0, x, "") if isinstance(x, int) else (1, 0, x) for x in self.pre)
        return (self.major, self.minor, self.patch, 0 if self.pre else 1, pre)

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, Version):
            return NotImplemented
        return self._key() < other._key()

    @property
    def base(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)

    def __str__(self) -> str:
        core = f"{self.major}.{self.minor}.{self.patch}"
        return core + ("-" + ".".join(str(p) for p in self.pre) if self.pre else "")


def _pre(text: str | None) -> Pre:
    if not text:
        return ()
    return tuple(int(p) if p.isdigit() else p for p in text.split("."))


def parse_version(text: str) -> Version | None:
    m = _VERSION.match(text.strip())
    if m is None or len(text) > 256:
        return None
    parts = [int(m.group(i)) for i in (1, 2, 3)]
    if any(p > _MAX_PART for p in parts):
        return None
    return Version(parts[0], parts[1], parts[2], _pre(m.group(4)))


def major_of(v: Version) -> str:
    """The major a version belongs to; before 1.0 each minor counts as one (as for Python)."""
    return str(v.major) if v.major else f"0.{v.minor}"


@dataclass(frozen=True)
class _Cmp:
    op: str  # "<", "<=", ">", ">=", "="
    v: Version

    def test(self, x: Version) -> bool:
        if self.op == "<":
            return x < self.v
        if self.op == "<=":
            return x <= self.v
        if self.op == ">":
            return x > self.v
        if self.op == ">=":
            return x >= self.v
        return x == self.v


_Set = tuple[_Cmp, ...]


def _partial(text: str) -> tuple[int | None, int | None, int | None, str | None] | None:
    if text in ("", "*", "x", "X"):
        return (None, None, None, None)
    m = _PARTIAL.match(text)
    if m is None:
        return None

    def num(g: str | None) -> int | None:
        return None if g is None or g in ("*", "x", "X") else int(g)

    major, minor, patch = num(m.group(1)), num(m.group(2)), num(m.group(3))
    if major is None:
        minor = patch = None
    elif minor is None:
        patch = None
    if any(p is not None and p > _MAX_PART for p in (major, minor, patch)):
        return None
    return (major, minor, patch, m.group(4))


def _comparators(op: str, text: str) -> list[_Cmp] | None:
    p = _partial(text)
    if p is None:
        return None
    major, minor, patch, pre = p
    pre_t = _pre(pre)
    if major is None:
        return (
            []
            if op in ("", "=", ">=", "<=", "^", "~", "~>")
            else [_Cmp("<", Version(0, 0, 0, _LOWEST))]
        )
    lo = Version(major, minor or 0, patch or 0, pre_t)
    if minor is None:
        up = Version(major + 1, 0, 0, _LOWEST)
    elif patch is None:
        up = Version(major, minor + 1, 0, _LOWEST)
    else:
        up = None
    if op in ("", "="):
        return [_Cmp(">=", lo), _Cmp("<", up)] if up else [_Cmp("=", lo)]
    if op in ("~", "~>"):
        top = (
            Version(major + 1, 0, 0, _LOWEST)
            if minor is None
            else Version(major, minor + 1, 0, _LOWEST)
        )
        return [_Cmp(">=", lo), _Cmp("<", top)]
    if op == "^":
        if major > 0 or minor is None:
            top = Version(major + 1, 0, 0, _LOWEST)
        elif minor > 0 or patch is None:
            top = Version(0, minor + 1, 0, _LOWEST)
        else:
            top = Version(0, 0, patch + 1, _LOWEST)
        return [_Cmp(">=", lo), _Cmp("<", top)]
    if op == ">":
        return [_Cmp(">=", up)] if up else [_Cmp(">", lo)]
    if op == ">=":
        return [_Cmp(">=", lo)]
    if op == "<":
        return [_Cmp("<", lo)]
    if op == "<=":
        return [_Cmp("<", up)] if up else [_Cmp("<=", lo)]
    return None


@dataclass(frozen=True)
class Range:
    sets: tuple[_Set, ...]

    def test(self, v: Version) -> bool:
        return any(_set_test(s, v) for s in self.sets)


def _set_test(s: _Set, v: Version) -> bool:
    if not all(c.test(v) for c in s):
        return False
    if v.pre:  # a prerelease only where the range names one of the same major.minor.patch
        return any(c.v.pre and c.v.base == v.base and c.v.pre != _LOWEST for c in s)
    return True


def parse_range(text: str) -> Range | None:
    """The range npm reads in ``text`` (None: not one)."""
    if len(text) > 256:
        return None
    sets: list[_Set] = []
    for part in text.split("||"):
        part = part.strip()
        hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", part)
        if hyphen:
            low = _comparators(">=", hyphen.group(1))
            high = _comparators("<=", hyphen.group(2))
            if low is None or high is None:
                return None
            sets.append((*low, *high))
            continue
        tokens = re.sub(r"(<=|>=|<|>|=|\^|~>?)\s+", r"\1", part).split()
        cmps: list[_Cmp] = []
        for token in tokens or [""]:
            m = _COMPARATOR.match(token)
            got = _comparators(m.group(1), m.group(2)) if m else None
            if got is None:
                return None
            cmps += got
        sets.append(tuple(cmps))
    return Range(tuple(sets))


def max_satisfying(versions: Iterable[Version], rng: Range) -> Version | None:
    ok = [v for v in versions if rng.test(v)]
    return max(ok) if ok else None


def admitted_majors(versions: Iterable[Version], rng: Range) -> tuple[str, ...]:
    """The released majors (prereleases left out) with a version the range admits."""
    found = {major_of(v): v for v in sorted(versions) if not v.pre and rng.test(v)}
    return tuple(sorted(found, key=lambda m: found[m]))

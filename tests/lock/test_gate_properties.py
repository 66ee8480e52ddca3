"""Property: the major gate reports a crossing exactly when some environment's major changes.

Random lock pairs whose packages fork under Python-version and platform markers (as uv's
universal locks do), compared by the gate and by brute force: every marker evaluated with
packaging over a dense grid of Python versions and platforms, independent of the gate's
own choice of environments.
"""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import Marker, default_environment
from packaging.version import Version

from agentguard.lock.graph import major_key
from agentguard.lock.pins import LockedPackage
from agentguard.rules.deps_gate import find_crossings

REQUIRES_PYTHON = ">=3.10"
CUTS = ["3.11", "3.11.2", "3.11.5", "3.12", "3.13", "3.14"]
VERSIONS = ["0.18.0", "0.18.3", "0.19.0", "1.0.0", "1.4.0", "2.0.0"]
PLATFORMS = [
    {"sys_platform": "linux", "platform_system": "Linux", "os_name": "posix"},
    {"sys_platform": "darwin", "platform_system": "Darwin", "os_name": "posix"},
    {"sys_platform": "win32", "platform_system": "Windows", "os_name": "nt"},
]
PYTHONS = [f"3.{minor}.{patch}" for minor in range(10, 17) for patch in (0, 1, 2, 3, 7, 99)]


@st.composite
def forked_pins(draw: st.DrawFn, name: str) -> list[LockedPackage]:
    """One package's pins: Python ranges cut at random bounds, each optionally split by
    platform, each piece pinned to a version or left without the package."""
    cuts = sorted(draw(st.sets(st.sampled_from(CUTS), max_size=3)), key=Version)
    var = draw(st.sampled_from(["python_full_version", "python_version"]))
    bounds = [None, *cuts, None]
    pins: list[LockedPackage] = []
    for low, high in itertools.pairwise(bounds):
        parts = []
        if low is not None:
            parts.append(f'{var} >= "{low}"')
        if high is not None:
            parts.append(f'{var} < "{high}"')
        pieces = [parts]
        if draw(st.booleans()):
            pieces = [[*parts, 'sys_platform == "win32"'], [*parts, 'sys_platform != "win32"']]
        for piece in pieces:
            version = draw(st.one_of(st.none(), st.sampled_from(VERSIONS)))
            if version is None:
                continue
            marker = " and ".join(piece) or None
            pins.append(LockedPackage(name, version, str(Marker(marker)) if marker else None, ()))
    return pins


@st.composite
def lock_pairs(draw: st.DrawFn) -> tuple[list[LockedPackage], list[LockedPackage]]:
    old: list[LockedPackage] = []
    new: list[LockedPackage] = []
    for name in draw(st.sets(st.sampled_from(["jiter", "rpds-py", "pillow"]), min_size=1)):
        old += draw(forked_pins(name))
        new += draw(forked_pins(name))
    return old, new


def _brute_force(
    old: list[LockedPackage], new: list[LockedPackage]
) -> set[tuple[LockedPackage, LockedPackage]]:
    base = default_environment()
    out: set[tuple[LockedPackage, LockedPackage]] = set()
    for python, platform in itertools.product(PYTHONS, PLATFORMS):
        if Version(python) < Version("3.10"):
            continue
        env = {
            **base,
            **platform,
            "python_full_version": python,
            "python_version": ".".join(python.split(".")[:2]),
        }

        def selected(p: LockedPackage, env: dict[str, str] = env) -> bool:
            return p.marker is None or Marker(p.marker).evaluate(env)

        for o in old:
            if not selected(o):
                continue
            for n in new:
                if n.name != o.name or not selected(n):
                    continue
                if major_key(Version(o.version)) != major_key(Version(n.version)):
                    out.add((o, n))
    return out


@settings(max_examples=150, deadline=None)
@given(lock_pairs())
def test_the_gate_crosses_exactly_where_some_environment_changes_major(
    pair: tuple[list[LockedPackage], list[LockedPackage]],
) -> None:
    old, new = pair
    gate = {(c.old, c.new) for c in find_crossings(old, new, REQUIRES_PYTHON)}
    assert gate == _brute_force(old, new)


def test_a_new_fork_that_keeps_every_major_is_no_crossing() -> None:
    old = [LockedPackage("jiter", "0.18.0", None, ())]
    new = [
        LockedPackage("jiter", "0.18.0", 'python_full_version < "3.11"', ()),
        LockedPackage("jiter", "0.18.3", 'python_full_version >= "3.11"', ()),
    ]
    assert find_crossings(old, new, REQUIRES_PYTHON) == []
    moved = [*new[:1], LockedPackage("jiter", "0.19.0", 'python_full_version >= "3.11"', ())]
    [crossing] = find_crossings(old, moved, REQUIRES_PYTHON)
    assert (crossing.environment, crossing.where) == (
        'python_full_version >= "3.11"',
        "Python 3.11.0 to 3.14.99 on every platform",
    )

"""npm ranges as npm reads them: the version a launch gets, and the majors it admits."""

from __future__ import annotations

import pytest

from agentguard.lock.servers.semver import (
    admitted_majors,
    max_satisfying,
    parse_range,
    parse_version,
)

RELEASES = [
    parse_version(v)
    for v in (
        "0.9.0",
        "0.9.3",
        "1.0.0",
        "1.4.2",
        "1.5.0-beta.1",
        "2.0.0",
        "2.1.0",
        "2.1.1-rc.1",
        "10.0.0",
    )
]


@pytest.mark.parametrize(
    ("rng", "best", "majors"),
    [
        ("", "10.0.0", ("0.9", "1", "2", "10")),
        ("*", "10.0.0", ("0.9", "1", "2", "10")),
        ("x", "10.0.0", ("0.9", "1", "2", "10")),
        ("^1", "1.4.2", ("1",)),
        ("^1.2", "1.4.2", ("1",)),
        ("~1.4", "1.4.2", ("1",)),
        ("~1.4.3", None, ()),
        (">=1 <2", "1.4.2", ("1",)),
        (">= 1.0.0 < 2", "1.4.2", ("1",)),
        ("1.x", "1.4.2", ("1",)),
        ("1.2.*", None, ()),
        ("^1 || ^2", "2.1.0", ("1", "2")),
        ("1.0 - 2.0", "2.0.0", ("1", "2")),
        (">1", "10.0.0", ("2", "10")),
        (">1.4.2", "10.0.0", ("2", "10")),
        ("<=1.4", "1.4.2", ("0.9", "1")),
        ("<2", "1.4.2", ("0.9", "1")),
        ("^0.9", "0.9.3", ("0.9",)),
        ("^0.9.1", "0.9.3", ("0.9",)),
        ("^0.0.1", None, ()),
        ("=1.4.2", "1.4.2", ("1",)),
        ("v1.4.2", "1.4.2", ("1",)),
        # a prerelease only where the range names one of the same major.minor.patch
        ("1.5.0-beta.1", "1.5.0-beta.1", ()),
        (">=1.5.0-beta.0 <2", "1.5.0-beta.1", ()),
        (">=2.1.0", "10.0.0", ("2", "10")),
    ],
)
def test_ranges(rng: str, best: str | None, majors: tuple[str, ...]) -> None:
    parsed = parse_range(rng)
    assert parsed is not None
    got = max_satisfying(RELEASES, parsed)
    assert (str(got) if got else None, admitted_majors(RELEASES, parsed)) == (best, majors)


@pytest.mark.parametrize(
    "rng", ["latest", "next", "1.2.3.4", "^1.2.3.4", "1.2.3-", "git+https", "1" * 300]
)
def test_not_a_range_is_unknown_never_any(rng: str) -> None:
    assert parse_range(rng) is None


def test_prereleases_sort_below_their_release() -> None:
    order = [
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.2",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.0.0",
    ]
    versions = [parse_version(v) for v in order]
    assert sorted(reversed(versions)) == versions  # type: ignore[type-var]

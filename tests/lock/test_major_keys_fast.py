"""The major keys and groups of a package's released versions are worked out without
sorting every version at once; they must be exactly what the full sort gives, for any
mix of epochs, pre-, post-, dev- and local releases."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.version import Version

from agentguard.lock.graph import _major_order, major_groups, major_key, released_major_keys


def _keys_by_full_sort(versions: list[Version]) -> tuple[str, ...]:
    keys: list[str] = []
    for v in sorted(set(versions)):
        if major_key(v) not in keys:
            keys.append(major_key(v))
    return tuple(keys)


def _groups_by_full_sort(versions: list[Version]) -> tuple[tuple[str, tuple[Version, ...]], ...]:
    groups: dict[str, list[Version]] = {}
    for v in sorted(set(versions), reverse=True):
        if not v.is_prerelease:
            groups.setdefault(major_key(v), []).append(v)
    return tuple(
        sorted(((k, tuple(g)) for k, g in groups.items()), key=lambda g: _major_order(g[0]))
    )


_VERSION = st.builds(
    lambda epoch, release, pre, post, dev, local: Version(
        f"{f'{epoch}!' if epoch else ''}{'.'.join(map(str, release))}{pre}{post}{dev}{local}"
    ),
    st.sampled_from([0, 0, 0, 1]),
    st.lists(st.integers(0, 3), min_size=1, max_size=3),
    st.sampled_from(["", "", "a1", "rc2"]),
    st.sampled_from(["", "", ".post1"]),
    st.sampled_from(["", "", ".dev0"]),
    st.sampled_from(["", "", "+local.1"]),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(_VERSION, max_size=40))
def test_keys_and_groups_equal_the_full_sort(versions: list[Version]) -> None:
    assert released_major_keys(versions) == _keys_by_full_sort(versions)
    assert major_groups(versions) == _groups_by_full_sort(versions)

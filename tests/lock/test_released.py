"""Released versions read once per process: what the refresh beside `uv lock` wrote is
what the analysis after it reads (as it would from the disk cache), never another cache's
or a stale one."""

from __future__ import annotations

import time
from pathlib import Path

from packaging.version import Version

from agentguard.lock.existing import RELEASED_TTL_SECONDS, released_versions
from agentguard.lock.graph import ReleasedVersions, major_groups, released_major_keys
from agentguard.lock.index import IndexClient
from tests.wheelhouse import build_wheel, write_simple_index


def test_what_was_written_is_what_is_read_and_only_from_the_same_cache(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for v in ("0.9.0", "1.0.0", "2.0.0"):
        build_wheel(wheels, "mcp", v)
    url = write_simple_index(wheels, tmp_path / "simple")
    client = IndexClient((url,))
    now = time.time()
    cache_a, cache_b = tmp_path / "a", tmp_path / "b"
    fresh, cached = released_versions(client, url, "mcp", cache_a, now, fresh=True)
    assert (fresh, cached) == ([Version("0.9.0"), Version("1.0.0"), Version("2.0.0")], False)
    assert isinstance(fresh, ReleasedVersions)
    assert (fresh.groups(), fresh.keys()) == (major_groups(fresh), released_major_keys(fresh))
    again, cached = released_versions(client, url, "mcp", cache_a, now)
    assert again is fresh and cached  # kept as read, majors and all
    # Another cache folder has its own entries (here: none yet, so the page is read).
    build_wheel(wheels, "mcp", "3.0.0")
    write_simple_index(wheels, tmp_path / "simple")
    other, cached = released_versions(client, url, "mcp", cache_b, now)
    assert (other[-1], cached) == (Version("3.0.0"), False)
    # A day later the entry is stale here as on disk: the page is read again.
    later, cached = released_versions(client, url, "mcp", cache_a, now + RELEASED_TTL_SECONDS)
    assert (later[-1], cached) == (Version("3.0.0"), False)

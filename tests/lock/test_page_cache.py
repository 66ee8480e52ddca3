"""Index pages parsed once per content (agentguard.lock.page_cache), never across a change.

A real index on 127.0.0.1 serving built wheels; the index client reads its JSON pages over
HTTP as a re-lock does. The cache is kept for pages of any size here (it normally skips
pages under 64 KB).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from packaging.version import Version

from agentguard.lock import page_cache
from agentguard.lock.index import IndexClient
from tests.hostile.index_server import serving
from tests.wheelhouse import build_wheel


@pytest.fixture(autouse=True)
def _every_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(page_cache, "MIN_BYTES", 0)


def _read(url: str, cache: Path) -> object:
    client = IndexClient([url], cache_dir=cache)
    try:
        return client.project_page("mcp")
    finally:
        client.close()


def _facts(page: object) -> tuple[object, ...]:
    from agentguard.lock.pages import ProjectPage

    assert isinstance(page, ProjectPage)
    released = tuple(str(v) for v in page.released_versions())
    files = tuple(
        (f.filename, f.sha256, f.upload_time, f.yanked)
        for v in page.released_versions()
        for f in page.files_for(v)
    )
    return released, files, page.upload_times(Version("1.0.0")), len(page)


def test_the_same_page_is_parsed_once_and_reads_back_the_same(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for v in ("1.0.0", "1.1.0", "2.0.0"):
        build_wheel(wheels, "mcp", v)
    cache = tmp_path / "cache"
    with serving(wheels) as server:
        server.upload_times = {p.name: "2025-01-01T00:00:00Z" for p in wheels.glob("*.whl")}
        first = _read(server.url, cache)
        assert not isinstance(first, page_cache.CachedPage)
        again = _read(server.url, cache)
        assert isinstance(again, page_cache.CachedPage)  # the same bytes: not parsed again
        assert _facts(again) == _facts(first)
        assert _facts(again)[0] == ("1.0.0", "1.1.0", "2.0.0")


def test_a_changed_page_is_never_answered_from_the_cache(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "1.0.0")
    cache = tmp_path / "cache"
    with serving(wheels) as server:
        _read(server.url, cache)
        assert isinstance(_read(server.url, cache), page_cache.CachedPage)
        build_wheel(wheels, "mcp", "2.0.0")  # the index changed: a new release
        changed = _read(server.url, cache)
        assert not isinstance(changed, page_cache.CachedPage)
        assert _facts(changed)[0] == ("1.0.0", "2.0.0")
        # one entry per page: the old body's entry is gone, the new one answers next time
        assert len(list((cache / page_cache.FOLDER).rglob("*-*"))) == 1
        assert _facts(_read(server.url, cache))[0] == ("1.0.0", "2.0.0")


def test_an_entry_that_does_not_read_back_is_ignored(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp", "1.0.0")
    cache = tmp_path / "cache"
    with serving(wheels) as server:
        fresh = _facts(_read(server.url, cache))
        [entry] = (cache / page_cache.FOLDER).rglob("*-*")
        entry.write_bytes(b'{"key": "not this one"}\n[]')
        page = _read(server.url, cache)
        assert not isinstance(page, page_cache.CachedPage)
        assert _facts(page) == fresh

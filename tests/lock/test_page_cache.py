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
def _every_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(page_cache, "MIN_BYTES", 0)
    # the key that seals the entries: this test's own
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AGENTGUARD_CACHE_KEY", raising=False)


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


def test_a_planted_entry_that_hides_a_release_changes_nothing(tmp_path: Path) -> None:
    """The key of an entry is the SHA-256 of a page anyone can fetch: whoever can write the
    cache folder can put an entry there under it. One that lists fewer releases (mcp 2
    hidden, so no span of two majors), sealed with another key or not at all, is ignored."""
    import hashlib
    import hmac
    import json

    wheels = tmp_path / "wheels"
    for v in ("1.0.0", "2.0.0"):
        build_wheel(wheels, "mcp", v)
    cache = tmp_path / "cache"
    with serving(wheels) as server:
        fresh = _facts(_read(server.url, cache))
        assert fresh[0] == ("1.0.0", "2.0.0")
        [entry] = (cache / page_cache.FOLDER).rglob("*-*")
        data = entry.read_bytes()
        start = len(page_cache.HEAD) + 65
        end = data.index(b"\n", start)
        head = json.loads(data[start:end])
        head["ranges"] = {k: v for k, v in head["ranges"].items() if k != "2.0.0"}
        head["hint"] = ["1.0.0"]
        sealed = json.dumps(head).encode() + b"\n" + data[end + 1 :]
        for key in (b"k" * 64, None):
            mac = b"0" * 64 if key is None else hmac.new(key, sealed, hashlib.sha256).hexdigest()
            entry.write_bytes(
                page_cache.HEAD + (mac if isinstance(mac, bytes) else mac.encode()) + b"\n" + sealed
            )
            page = _read(server.url, cache)
            assert not isinstance(page, page_cache.CachedPage)
            assert _facts(page) == fresh
            [entry] = (cache / page_cache.FOLDER).rglob("*-*")  # (stored again, sealed)
        assert isinstance(_read(server.url, cache), page_cache.CachedPage)
        # (what the seal stops: the same entry sealed with the user's own key is believed)
        from agentguard import cache_key

        secret = cache_key.secret(cache, str(cache))
        assert secret is not None
        mac = hmac.new(secret, sealed, hashlib.sha256).hexdigest().encode()
        [entry] = (cache / page_cache.FOLDER).rglob("*-*")
        entry.write_bytes(page_cache.HEAD + mac + b"\n" + sealed)
        assert _facts(_read(server.url, cache))[0] == ("1.0.0",)


def test_places_that_do_not_give_their_versions_files_are_never_believed(tmp_path: Path) -> None:
    """An entry sealed with the user's own key (only a bug could write one) whose places for
    mcp 2.0.0 point at 1.0.0's files: the versions' files come from a full parse instead."""
    import hashlib
    import hmac
    import json

    from agentguard import cache_key

    wheels = tmp_path / "wheels"
    for v in ("1.0.0", "2.0.0"):
        build_wheel(wheels, "mcp", v)
    cache = tmp_path / "cache"
    with serving(wheels) as server:
        server.upload_times = {p.name: "2025-01-01T00:00:00Z" for p in wheels.glob("*.whl")}
        fresh = _facts(_read(server.url, cache))
        [entry] = (cache / page_cache.FOLDER).rglob("*-*")
        data = entry.read_bytes()
        start = len(page_cache.HEAD) + 65
        head = json.loads(data[start:])
        head["ranges"]["2.0.0"] = head["ranges"]["1.0.0"]
        sealed = json.dumps(head).encode() + b"\n"
        secret = cache_key.secret(cache, str(cache))
        assert secret is not None
        mac = hmac.new(secret, sealed, hashlib.sha256).hexdigest().encode()
        entry.write_bytes(page_cache.HEAD + mac + b"\n" + sealed)
        page = _read(server.url, cache)
        assert isinstance(page, page_cache.CachedPage)  # believed as an entry...
        assert _facts(page) == fresh  # ...but not for files it does not give

"""A hostile index against the page cache (agentguard.lock.page_cache): a page read back
from the cache gives exactly what a fresh parse of the same bytes gives (the same files, in
the same order), whatever odd JSON the index serves; an entry is only ever its own page's;
the cache folder is never left through a link.

A raw server on 127.0.0.1 serves exact bytes; the cache is kept for pages of any size here.
"""

from __future__ import annotations

import functools
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.version import Version

from agentguard.lock import page_cache, page_spans
from agentguard.lock.index import IndexClient
from agentguard.lock.pages import IndexError_, ProjectPage, parse_json_page
from tests.hostile.raw_index import raw_serving

H = "a" * 64


@pytest.fixture(autouse=True)
def _every_page(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(page_cache, "MIN_BYTES", 0)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("AGENTGUARD_CACHE_KEY", raising=False)


def _facts(page: ProjectPage, versions: list[str]) -> tuple[object, ...]:
    """What a lock reads of a page, in the order it reads it (files before anything groups
    them), every file in full and in the order given."""
    files = {v: [vars(f) for f in page.files_for(Version(v))] for v in versions}
    times = {v: page.upload_times(Version(v)) for v in versions}
    released = [str(v) for v in page.released_versions()]
    every = sorted(json.dumps(vars(f), default=str) for f in page.files)
    return files, times, released, sorted(page.yanked_versions()), every, page.versions_hint


def _below(frames: int, call: Any) -> Any:
    """``call()`` run ``frames`` frames further down the stack (as a lock's analysis reads a
    page's files on a deeper stack than the worker that read the page)."""
    return call() if frames <= 0 else _below(frames - 1, call)


def _reads(
    body: bytes, cache: Path, versions: list[str], times: int = 2, below: int = 0
) -> list[object]:
    def answer(sock: socket.socket, _line: str) -> None:
        head = b"HTTP/1.1 200 OK\r\nContent-Type: application/vnd.pypi.simple.v1+json\r\n"
        sock.sendall(head + b"Content-Length: %d\r\n\r\n" % len(body) + body)

    out: list[object] = []
    with raw_serving(answer) as server:
        try:  # what json.loads of the page gives, for a page that is one
            data = json.loads(body)
            plain = parse_json_page("mcp", server.url() + "mcp/", data)
            out.append(_facts(plain, versions))
        except (ValueError, RecursionError, IndexError_, AttributeError):
            out.append(None)
        for _ in range(times):
            client = IndexClient([server.url()], cache_dir=cache)
            try:
                client.prefetch(["mcp"])  # (read and parsed on a worker thread, as in a lock)
                page = client.project_page("mcp")
                out.append(
                    (type(page).__name__, _below(below, functools.partial(_facts, page, versions)))
                )
            except IndexError_ as exc:
                out.append(("failed", exc.code))
            finally:
                client.close()
    return out


def _file(filename: str, **more: object) -> dict[str, object]:
    item: dict[str, object] = {
        "filename": filename,
        "url": f"https://files.example/{filename}",
        "hashes": {"sha256": H},
        "upload-time": "2025-01-01T00:00:00Z",
    }
    item.update(more)
    return item


def test_a_version_spelled_two_ways_gives_its_files_in_the_pages_order(tmp_path: Path) -> None:
    """mcp 1.0 as "1.0" and "1.0.0": a fresh parse lists its files as the page does; the
    cached page gave "1.0"'s files first, then "1.0.0"'s (and the first sdist is the one whose
    Requires-Dist a lock reads)."""
    files = [
        _file("mcp-1.0-py3-none-any.whl"),
        _file("mcp-1.0.0.tar.gz", size=1),
        _file("mcp-1.0.tar.gz", size=2),
        _file("mcp-2.0.tar.gz"),
    ]
    for page in ({"files": files}, {"files": files, "versions": ["1.0", "2.0"]}):
        body = json.dumps(page).encode()
        cache = tmp_path / str(len(page))
        _, (kind, fresh), (kind_again, cached) = _reads(body, cache, ["1.0", "2.0"])  # type: ignore[misc]
        assert (kind, kind_again) == ("ProjectPage", "CachedPage")
        assert cached == fresh
    assert [f["filename"] for f in cached[0]["1.0"]] == [  # (with the index's version list)
        "mcp-1.0-py3-none-any.whl",
        "mcp-1.0.0.tar.gz",
        "mcp-1.0.tar.gz",
    ]


ODD_PAGES = {
    "escaped key": b'{"fil\\u0065s": [{"filename": "mcp-1.0.tar.gz", "yanked": false}]}',
    "files twice": b'{"files": [{"filename": "mcp-9.0.tar.gz"}], "files": [{"filename": "mcp-1.0.tar.gz"}]}',
    "keys twice in a file": (
        b'{"files": [{"filename": "mcp-2.0.tar.gz", "filename": "mcp-1.0.tar.gz",'
        b' "yanked": false, "yanked": "bad"}, {"filename": "mcp-1.0.0.tar.gz"}]}'
    ),
    "NaN and Infinity": (
        b'{"files": [{"filename": "mcp-1.0.tar.gz", "size": NaN, "upload-time": Infinity}],'
        b' "versions": [NaN, "1.0", -Infinity]}'
    ),
    "huge numbers": b'{"files": [{"filename": "mcp-1.0.tar.gz", "size": 1e999, "x": 1'
    + b"0" * 4000
    + b"}]}",
    "lone surrogates": (
        b'{"files": [{"filename": "mcp-\\ud800.tar.gz"}, {"filename": "mcp-1.0.tar.gz",'
        b' "url": "\\udfff", "hashes": {"sha256": "\\ud83d\\ude00"}}], "versions": ["\\udc00"]}'
    ),
    "not only objects": (
        b'{"files": [1, "mcp-1.0.tar.gz", null, [{"filename": "mcp-1.0.tar.gz"}], {},'
        b' {"filename": 5}, {"filename": ["mcp-2.0.tar.gz"]}, {"filename": "mcp-1.0.tar.gz"}]}'
    ),
    "a file name twice": (
        b'{"files": [{"filename": "mcp-1.0.tar.gz", "hashes": {"sha256": "' + b"b" * 64 + b'"}},'
        b' {"filename": "mcp-1.0.tar.gz", "yanked": true, "hashes": {"sha256": "'
        + b"c" * 64
        + b'"}}]}'
    ),
    "a version list that disagrees": (
        b'{"versions": ["9.0", "1.0"], "files": [{"filename": "mcp-1.0.tar.gz", "yanked": "r"},'
        b' {"filename": "mcp-2.0.tar.gz"}, {"filename": "mcp-2.0.0-py3-none-any.whl", "yanked": 1}]}'
    ),
    "every whitespace JSON takes": (
        b'\r\n\t {\r"files"\n:\t[ {"filename":"mcp-1.0.tar.gz"} ,\n{"filename":"mcp-2.0.zip"}\t]\n}\n '
    ),
    "whitespace JSON refuses": b'{"files": [{"filename": "mcp-1.0.tar.gz"}\x0c]}',
    "a file list that is not one at the end": b'{"files": [{"filename": "mcp-1.0.tar.gz"}], "files": {}}',
    "empty": b'{"files": []}',
    "versions that do not parse": (
        b'{"files": [{"filename": "mcp-1.0_x.tar.gz"}, {"filename": "mcp-v1.0.tar.gz"},'
        b' {"filename": "mcp-1.0-x-y-z-w-v.whl"}, {"filename": "mcp-1.0.tar.gz"}]}'
    ),
}


@pytest.mark.parametrize("label", sorted(ODD_PAGES))
def test_an_odd_page_reads_back_from_the_cache_as_parsed(tmp_path: Path, label: str) -> None:
    body = ODD_PAGES[label]
    versions = ["1.0", "2.0", "9.0"]
    plain, fresh, again = _reads(body, tmp_path / "cache", versions)
    if plain is None:  # not JSON, or no file list: a failed read both times
        assert fresh == again == ("failed", "index-garbage")
        return
    assert fresh == ("ProjectPage", plain)
    assert again == ("CachedPage", plain)


def test_a_file_nested_near_the_recursion_limit_is_left_to_json_loads(tmp_path: Path) -> None:
    """A file nested almost as deep as the decoder goes: the walk (two levels shallower than
    json.loads of the page) kept it; read back from the cache on a deeper stack its places did
    not decode and the page's full parse raised RecursionError out of files_for."""
    depth = sys.getrecursionlimit() - 40
    body = b'{"versions": ["1.0"], "files": [{"filename": "mcp-1.0.tar.gz", "deep": %s%s}]}' % (
        b"[" * depth,
        b"]" * depth,
    )
    assert page_spans.parse(body) is None
    _, fresh, again = _reads(body, tmp_path / "cache", ["1.0"], below=200)
    assert fresh == again
    assert fresh[0] == "ProjectPage"  # type: ignore[index]
    assert not (tmp_path / "cache" / page_cache.FOLDER).exists() or not any(
        (tmp_path / "cache" / page_cache.FOLDER).rglob("*-*")
    )


@pytest.mark.parametrize("brackets", [62, 65])  # (MAX_NEST: 64)
def test_the_walk_takes_values_only_as_deep_as_it_can_be_sure_of(brackets: int) -> None:
    half = brackets // 2
    deep = b"[" * half + b'{"a": ' * (brackets - half) + b"1" + b"}" * (brackets - half)
    deep += b"]" * half
    for body in (
        b'{"files": [{"filename": "mcp-1.0.tar.gz", "x": %s}]}' % deep[1:-1],
        b'{"meta": %s, "files": []}' % deep,
    ):
        got = page_spans.parse(body)
        if brackets > 64:
            assert got is None
        else:
            assert got is not None and got[0] == json.loads(body)


def _store(cache: Path, body: bytes, url: str, name: str = "mcp") -> None:
    got = page_spans.parse(body)
    assert got is not None
    page = parse_json_page(name, url, got[0])
    page_cache.store(cache, name, url, body, page, got[1])


def test_an_entry_is_only_ever_its_own_pages(tmp_path: Path) -> None:
    """The same bytes under another URL or another name, or an entry copied to where
    another page's entry would be: never a hit."""
    import shutil

    cache = tmp_path / "cache"
    url = "http://127.0.0.1:1/simple/mcp/"
    body = json.dumps({"files": [_file("mcp-1.0.tar.gz")]}).encode()
    _store(cache, body, url)
    assert isinstance(page_cache.load(cache, "mcp", url, body), page_cache.CachedPage)
    assert page_cache.load(cache, "other", url, body) is None
    assert page_cache.load(cache, "mcp", url.replace("mcp", "mcq"), body) is None
    [entry] = (cache / page_cache.FOLDER).rglob("*-*")
    for name, other in (("mcp", url.replace(":1/", ":2/")), ("other", url)):
        folder, where, key = page_cache._names(cache, name, other, body, None)
        folder.mkdir(parents=True, exist_ok=True)
        shutil.copy(entry, folder / f"{where}-{key}")
        assert page_cache.load(cache, name, other, body) is None


def test_storing_never_removes_anything_through_a_link(tmp_path: Path) -> None:
    """A planted cache folder whose shard is a link elsewhere: storing a new body of a page
    removed the files named like its old entries there (outside the cache)."""
    cache = tmp_path / "cache"
    url = "http://127.0.0.1:1/simple/mcp/"
    _store(cache, json.dumps({"files": [_file("mcp-1.0.tar.gz")]}).encode(), url)
    [entry] = (cache / page_cache.FOLDER).rglob("*-*")
    shard = entry.parent
    entry.unlink()
    shard.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    os.symlink(elsewhere, shard)
    kept = elsewhere / entry.name
    kept.write_text("not the cache's")
    _store(cache, json.dumps({"files": [_file("mcp-2.0.tar.gz")]}).encode(), url)
    assert kept.read_text() == "not the cache's"
    # the cache's own folder a link: nothing written or removed through it either
    cache2 = tmp_path / "cache2"
    cache2.mkdir()
    os.symlink(elsewhere, cache2 / page_cache.FOLDER)
    _store(cache2, json.dumps({"files": [_file("mcp-2.0.tar.gz")]}).encode(), url)
    assert sorted(p.name for p in elsewhere.iterdir()) == [entry.name]


def test_two_runs_at_once_never_read_a_half_written_entry(tmp_path: Path) -> None:
    """Two runs storing two states of one page while others read: every read is a miss or
    exactly its own body's page."""
    from concurrent.futures import ThreadPoolExecutor

    cache = tmp_path / "cache"
    url = "http://127.0.0.1:1/simple/mcp/"
    bodies = [
        json.dumps({"files": [_file(f"mcp-{v}.0.tar.gz") for v in range(1, n)]}).encode()
        for n in (40, 80)
    ]

    def run(i: int) -> list[Any]:
        body = bodies[i % 2]
        _store(cache, body, url)
        page = page_cache.load(cache, "mcp", url, body)
        if page is None:
            return []
        return [str(v) for v in page.released_versions()]

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(run, range(40)))
    for i, got in enumerate(results):
        assert got in ([], [f"{v}.0" for v in range(1, 40 if i % 2 == 0 else 80)])


def test_an_entry_is_readable_by_its_user_alone(tmp_path: Path) -> None:
    """Its head names the page's URL, and an index may take a token in its path."""
    cache = tmp_path / "cache"
    url = "https://127.0.0.1:1/t0ken/simple/mcp/"
    _store(cache, json.dumps({"files": [_file("mcp-1.0.tar.gz")]}).encode(), url)
    [entry] = (cache / page_cache.FOLDER).rglob("*-*")
    assert b"t0ken" in entry.read_bytes()
    assert entry.stat().st_mode & 0o077 == 0


def test_ascii_bytes_json_loads_reads_as_utf16_are_left_to_it() -> None:
    """Every byte below 128, yet json.loads reads the page as UTF-16 (a zero byte first or
    second): the walk reads no places in it."""
    text = '{"files": [{"filename": "mcp-1.0.tar.gz"}]}'
    for body in (text.encode("utf-16-le"), text.encode("utf-16-be"), text.encode("utf-32-le")):
        assert body.isascii() and json.loads(body) == json.loads(text)
        assert page_spans.parse(body) is None

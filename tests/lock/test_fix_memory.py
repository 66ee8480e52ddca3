"""A fix set that did not resolve is not resolved again while the index is the same
(issue #26: crewAI's re-lock ran a 9 s failing resolution of its first fixes every time).

Modelled on crewAI's case with small real wheels on a local index and the real resolver:
two caps that are each right and together unsatisfiable (``a 1`` needs ``b 2``). The
failure is remembered under the digests of the pages uv's own log says it read; a changed
page (a new release of ``b``, or one of ``a`` that makes the set resolve) sends the set to
the resolver again, and an entry that is not sealed with the user's key (planted) is
ignored: the resolver decides.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard import cache_key
from agentguard.lock.backend import ResolveRequest
from agentguard.lock.fix_check import UvResolve
from agentguard.lock.fix_memory import FOLDER, HEAD, logged_pages
from agentguard.lock.index import IndexClient
from tests.hostile.index_server import serving
from tests.lock.helpers import findings, run_json, strip_volatile, write_project
from tests.lock.test_fix_set import CONFLICT_TIMES, _serve_times
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

CAPS = ("a>=1,<2", "b>=1,<2")


def _wheels(tmp_path: Path) -> Path:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "a", "1.0.0", ["b>=2"])  # a 1 needs the b major the caps exclude
    build_wheel(wheels, "a", "2.0.0")
    build_wheel(wheels, "b", "1.0.0")
    build_wheel(wheels, "b", "2.0.0")
    build_wheel(wheels, "x", "1.0.0", ["a>=1", "b>=1"])
    return wheels


def _resolve(url: str, cache: Path, root: Path) -> tuple[UvResolve, IndexClient]:
    """A fresh run's resolver of fix sets: its own index client (nothing read yet)."""
    request = ResolveRequest(
        requirements=("x==1.0.0",),
        python_version="3.10",
        index_url=url,
        find_links=(),
        no_index=False,
        upgrade=False,
        upgrade_packages=(),
        only_binary=False,
        preferences=None,
    )
    client = IndexClient([url], cache_dir=cache)
    return UvResolve(request, (), client, cache, root), client


def _entries(cache: Path) -> list[Path]:
    return sorted((cache / FOLDER).glob("*.json"))


def _secret(tmp_path: Path, cache: Path) -> bytes:
    key = cache_key.secret(cache, str(tmp_path / "bot"))
    assert key is not None
    return key


def test_a_failed_set_is_not_resolved_again_until_a_page_it_read_changes(
    tmp_path: Path, isolated_cache: Path
) -> None:
    wheels = _wheels(tmp_path)
    root = tmp_path / "bot"
    root.mkdir()
    with serving(wheels) as server:
        resolve, client = _resolve(server.url, isolated_cache, root)
        assert resolve(CAPS) is False
        assert (resolve.runs, resolve.cached) == (1, False)
        client.close()
        [entry] = _entries(isolated_cache)
        body = cache_key.unseal(entry.read_bytes(), HEAD, _secret(tmp_path, isolated_cache))
        assert body is not None
        data = json.loads(body)
        assert data["outcome"] == "unresolvable"
        # the pages uv's log names, each with its digest as agentguard reads it
        assert sorted(n for _, n, _ in data["pages"]) == ["a", "b", "x"]
        assert {i for i, _, _ in data["pages"]} == {server.url + "/"}

        again, client = _resolve(server.url, isolated_cache, root)
        assert again(CAPS) is False
        assert (again.runs, again.cached) == (0, True)  # the same pages: no resolver run
        client.close()

        build_wheel(wheels, "b", "1.1.0")  # b's page changes; the set still cannot resolve
        changed, client = _resolve(server.url, isolated_cache, root)
        assert changed(CAPS) is False
        assert (changed.runs, changed.cached) == (1, False)
        client.close()

        build_wheel(wheels, "a", "1.5.0")  # a release of a that makes the caps resolve
        fixed, client = _resolve(server.url, isolated_cache, root)
        assert fixed(CAPS) is True
        assert fixed.runs == 1
        client.close()


def _replant(entry: Path, key: bytes, change: dict[str, Any] | None = None) -> None:
    """The entry as someone without the user's key could write it: sealed with ``key``."""
    body = json.loads(entry.read_bytes().split(b"\n", 2)[2])
    body.update(change or {})
    entry.write_bytes(cache_key.seal(HEAD, key, json.dumps(body, sort_keys=True).encode()))


def test_a_planted_entry_changes_no_verdict(tmp_path: Path, isolated_cache: Path) -> None:
    wheels = _wheels(tmp_path)
    build_wheel(wheels, "a", "1.5.0")  # the caps resolve (a 1.5 needs nothing)
    root = tmp_path / "bot"
    root.mkdir()
    with serving(wheels) as server:
        resolve, client = _resolve(server.url, isolated_cache, root)
        assert resolve(CAPS) is True
        client.close()
        [entry] = _entries(isolated_cache)
        # a failure, with the real digests of every page, sealed under another key
        pages = logged_pages(
            [f"DEBUG No cache entry for: {server.url}/{n}/" for n in ("a", "b", "x")], client
        )
        assert pages is not None
        from agentguard.lock.fix_memory import page_digests

        digests = page_digests(client, pages)
        assert digests is not None
        forged = {
            "outcome": "unresolvable",
            "made": 2e9,
            "pages": [[i, n, d] for (i, n), d in sorted(digests.items())],
        }
        for key in (b"k" * 64, b""):
            _replant(entry, key, forged)
            planted, client = _resolve(server.url, isolated_cache, root)
            assert planted(CAPS) is True  # the resolver was asked, and it resolves
            assert (planted.runs, planted.cached) == (1, False)
            client.close()
        # the other way round: a failing set planted as resolved
        (wheels / "a-1.5.0-py3-none-any.whl").unlink()
        failing, client = _resolve(server.url, isolated_cache, root)
        assert failing(CAPS) is False
        client.close()
        [entry] = _entries(isolated_cache)
        solution = {
            "outcome": "resolves",
            "pins": [{"name": "x", "version": "1.0.0", "hashes": []}],
        }
        _replant(entry, b"k" * 64, solution)
        planted, client = _resolve(server.url, isolated_cache, root)
        assert planted(CAPS) is False
        assert planted.runs == 1
        client.close()


def test_a_log_naming_a_page_of_another_index_is_not_remembered(tmp_path: Path) -> None:
    client = IndexClient(["https://pypi.example/simple/"], cache_dir=tmp_path)
    ok = ["DEBUG Found fresh response for: https://pypi.example/simple/mcp/"]
    wheel = "DEBUG No cache entry for: https://files.example/p/mcp-1.0.0-py3-none-any.whl.metadata"
    assert logged_pages([*ok, wheel], client) == {("https://pypi.example/simple/", "mcp")}
    other = "DEBUG Sending revalidation request for: https://other.example/simple/mcp/"
    assert logged_pages([*ok, other], client) is None
    local = IndexClient(["https://pypi.example/simple/"], ["/wheels"], cache_dir=tmp_path)
    assert logged_pages(ok, local) is None  # find-links folders are not pages it can digest


def test_a_relock_with_a_conflicting_fix_set_reports_the_same_from_memory(
    tmp_path: Path, isolated_cache: Path
) -> None:
    wheels = _wheels(tmp_path)
    with serving(wheels) as server:
        _serve_times(server, wheels, CONFLICT_TIMES)
        project = write_project(tmp_path / "bot", ["x==1.0.0"])
        _, first, _ = run_json("lock", str(project), "--index-url", server.url)
        [b] = [f for f in findings(first, "AG101") if f["evidence"]["child"] == "b"]
        assert b["evidence"]["fix_set"] == "conflict"
        assert any(
            json.loads(body or b"{}").get("outcome") == "unresolvable"
            for body in (
                cache_key.unseal(e.read_bytes(), HEAD, _secret(tmp_path, isolated_cache))
                for e in _entries(isolated_cache)
            )
        )
        _, second, _ = run_json("lock", str(project), "--index-url", server.url)
        assert [strip_volatile(f) for f in second["findings"]] == [
            strip_volatile(f) for f in first["findings"]
        ]

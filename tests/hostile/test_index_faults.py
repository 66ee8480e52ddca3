"""The package index failing for real: a loopback server that hangs, resets, closes, answers
5xx, garbage or endless bodies. Both readers are tested: uv (the resolver `lock` runs
first) and agentguard's own index client (pages and metadata after resolution). Each
fault is a failed source with a stable code and `retryable`, exit 3, and the previous lock
files stay byte for byte as they were.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock import http as lock_http
from agentguard.lock import index as ix
from tests.hostile.index_helpers import read_page, wheels
from tests.hostile.index_server import IndexServer, Request, serving
from tests.hostile.promises import check_failed_source, run_agentguard
from tests.lock.helpers import write_project

__all__ = ["wheels"]  # fixtures

pytestmark = pytest.mark.usefixtures("isolated_cache")

UV_FAST = {"UV_HTTP_RETRIES": "0", "UV_HTTP_TIMEOUT": "3"}


# -- agentguard's own index client -----------------------------------------------------


AFTER3 = " (after 3 attempts)"  # a transient failure, tried again twice


@pytest.mark.parametrize(
    ("action", "code", "retryable", "reason", "sent"),
    [
        ("500", "index-http-error", True, "{url}/mcp/: HTTP 500" + AFTER3, 3),
        ("503", "index-http-error", True, "{url}/mcp/: HTTP 503" + AFTER3, 3),
        ("huge-500", "index-http-error", True, "{url}/mcp/: HTTP 500" + AFTER3, 3),
        ("garbage", "index-garbage", True, "{url}/mcp/: answer is not JSON", 1),
        ("huge", "index-too-large", False, "{url}/mcp/: answer larger than 67108864 bytes", 1),
        (
            "reset",
            "index-unreachable",
            True,
            "{url}/mcp/: connection failed ([Errno 104] Connection reset by peer)" + AFTER3,
            3,  # (a new connection is not sent on once more: that is for a kept-alive one)
        ),
        (
            "close",
            "index-unreachable",
            True,
            "{url}/mcp/: connection failed (Remote end closed connection without response)"
            + AFTER3,
            3,
        ),
        ("hang", "index-unreachable", True, "{url}/mcp/: unreachable (timed out)" + AFTER3, 3),
        (
            "short",
            "index-unreachable",
            True,
            "{url}/mcp/: connection failed (IncompleteRead(11 bytes read, 989 more expected))"
            + AFTER3,
            3,
        ),
    ],
)
def test_index_client_page_faults(
    wheels: Path,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    action: str,
    code: str,
    retryable: bool,
    reason: str,
    sent: int,
) -> None:
    monkeypatch.setattr(lock_http, "TIMEOUT", 1.0)
    with serving(wheels, lambda _r: action) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        start = time.monotonic()
        exc = read_page(client, wait=30)
        elapsed = time.monotonic() - start
        asked = len(index.log)
    assert isinstance(exc, ix.IndexError_)
    assert (exc.code, exc.retryable, str(exc)) == (code, retryable, reason.format(url=index.url))
    assert asked == sent
    assert elapsed < 15, elapsed  # an endless error body is not read to its end


def test_metadata_garbage_never_reads_as_no_requirements(wheels: Path, tmp_path: Path) -> None:
    """A 200 answer for `<wheel>.metadata` that is not that wheel's metadata: the client
    falls back to the wheel itself (hash-checked) instead of recording zero requirements."""

    def plan(r: Request) -> str:
        return "garbage" if r.path.endswith(".metadata") else "ok"

    with serving(wheels, plan) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        [sdk] = client.project_page("agent-sdk").files
        assert client.requires_dist(sdk) == ["mcp>=1"]


def test_wheel_bytes_that_do_not_match_the_index_hash(wheels: Path, tmp_path: Path) -> None:
    def plan(r: Request) -> str:
        return "garbage" if r.path.endswith(".whl") else "ok"

    with serving(wheels, plan) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        [sdk] = client.project_page("agent-sdk").files
        with pytest.raises(ix.IndexError_) as caught:
            client.requires_dist(sdk)
    assert (caught.value.code, caught.value.retryable, str(caught.value)) == (
        "hash-mismatch",
        True,
        "agent_sdk-1.0.0-py3-none-any.whl: sha256 does not match the index",
    )


# -- `agentguard lock` end to end ------------------------------------------------------


def lock_json(project: Path, index_url: str) -> tuple[int, dict[str, Any]]:
    run = run_agentguard(
        "lock", str(project), "--index-url", index_url, "--format", "json", env=UV_FAST
    )
    run.check_no_crash()
    return run.code, json.loads(run.stdout)


def digests(project: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(project.iterdir())
        if p.is_file()
    }


@pytest.fixture()
def locked(tmp_path: Path, wheels: Path) -> tuple[Path, dict[str, str]]:
    """A project locked once against the good index (the lock every fault must leave alone)."""
    project = write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])
    with serving(wheels) as index:
        code, report = lock_json(project, index.url)
    assert code == 1 and report["complete"] is True, report["sources"]  # mcp spans 1 and 2
    # inputs change, so every later run resolves again and would rewrite both files
    write_project(project, ["agent-sdk==1.0.0", "mcp>=1"])
    return project, digests(project)


@pytest.mark.parametrize(
    ("action", "code", "retryable", "words"),
    [
        ("500", "index-unreachable", True, "500 Internal Server Error"),
        ("reset", "index-unreachable", True, "Connection reset by peer"),
        ("close", "index-unreachable", True, "connection closed before message completed"),
        ("hang", "index-unreachable", True, "operation timed out"),
        ("garbage", "index-garbage", True, "Received some unexpected JSON"),
    ],
)
def test_resolver_facing_a_bad_index(
    wheels: Path,
    locked: tuple[Path, dict[str, str]],
    action: str,
    code: str,
    retryable: bool,
    words: str,
) -> None:
    project, before = locked

    def plan(r: Request) -> str:
        return action if r.from_uv else "ok"

    with serving(wheels, plan) as index:
        exit_code, report = lock_json(project, index.url)
    assert exit_code == 3
    [resolver] = [s for s in report["sources"] if s["kind"] == "resolver"]
    check_failed_source(resolver)
    assert (resolver["error_code"], resolver["retryable"]) == (code, retryable)
    assert words in resolver["reason"]
    assert report["findings"] == [] and report["complete"] is False
    assert report["notes"] == ["No lock file was written or changed."]
    assert digests(project) == before


def test_nothing_listening(tmp_path: Path, locked: tuple[Path, dict[str, str]]) -> None:
    project, before = locked
    exit_code, report = lock_json(project, "http://127.0.0.1:9/simple")
    assert exit_code == 3
    [resolver] = [s for s in report["sources"] if s["kind"] == "resolver"]
    check_failed_source(resolver)
    assert (resolver["error_code"], resolver["retryable"]) == ("index-unreachable", True)
    assert digests(project) == before


@pytest.mark.parametrize("action", ["500", "garbage", "huge", "reset", "deep"])
def test_index_good_for_the_resolver_bad_for_agentguards_own_reads(
    wheels: Path, locked: tuple[Path, dict[str, str]], action: str
) -> None:
    """uv resolves against good pages; agentguard's own reads of the same pages (made while
    uv runs, or after) fail. The analysis is incomplete, so no lock is written."""
    project, before = locked

    def plan(r: Request) -> str:
        return action if r.is_page and r.from_agentguard else "ok"

    with serving(wheels, plan) as index:
        exit_code, report = lock_json(project, index.url)
        requests = {(r.from_uv, a) for r, a in index.log if r.is_page}
    assert exit_code == 3
    assert requests == {(True, "ok"), (False, action)}
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert sorted(s["name"] for s in failed) == ["agent-sdk (project page)", "mcp (project page)"]
    for s in failed:
        check_failed_source(s)
        assert s["kind"] == "index"
    assert report["notes"] == [
        "A source failed, so the analysis is incomplete; no lock file was written or changed."
    ]
    assert digests(project) == before


def test_server_log_tells_the_readers_apart(wheels: Path) -> None:
    """(The fixture's own promise: plans can single out uv or agentguard by user agent.)"""
    server = IndexServer(wheels).start()
    try:
        client = ix.IndexClient([server.url], cache_dir=wheels.parent / "c")
        client.project_page("mcp")
    finally:
        server.stop()
    [(request, action)] = server.log
    assert (request.from_agentguard, request.from_uv, request.is_page, action) == (
        True,
        False,
        True,
        "ok",
    )

"""A transient failure of the index is tried again, within bounds (agentguard.lock.http_retry):
a reset, a body cut short or a 503 once in a run's hundred reads is not a failed source, and
a failing index cannot multiply the run's requests or hold it past its deadline."""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

from agentguard.lock import http as lock_http
from agentguard.lock import http_retry
from agentguard.lock import index as ix
from agentguard.lock.deadline import Deadline
from agentguard.lock.http import Http
from agentguard.lock.http_retry import Retries
from tests.hostile.index_helpers import (
    failed_sources,
    lock,
    project,
    read_page,
    report_of,
    wheels,
)
from tests.hostile.index_server import Request, serving
from tests.hostile.raw_index import raw_serving

__all__ = ["project", "wheels"]  # fixtures

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _first_fails(action: str, times: int = 1) -> tuple[Counter[str], object]:
    """A plan: each path's first ``times`` requests from agentguard meet ``action``."""
    seen: Counter[str] = Counter()
    lock_ = threading.Lock()

    def plan(r: Request) -> str:
        if not r.from_agentguard:
            return "ok"
        with lock_:
            seen[r.path] += 1
            return action if seen[r.path] <= times else "ok"

    return seen, plan


@pytest.mark.parametrize("action", ["503", "429", "reset", "short", "hang"])
def test_a_fault_that_passes_is_read_through(
    wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str
) -> None:
    monkeypatch.setattr(lock_http, "TIMEOUT", 1.0)
    seen, plan = _first_fails(action)
    with serving(wheels, plan) as index:  # type: ignore[arg-type]
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        assert read_page(client) is None
        page = client.project_page("mcp")
    assert sorted(f.filename for f in page.files) == [
        "mcp-1.0.0-py3-none-any.whl",
        "mcp-2.0.0-py3-none-any.whl",
    ]
    assert seen["/simple/mcp/"] >= 2


@pytest.mark.parametrize("action", ["404", "huge", "garbage"])
def test_an_answer_that_is_no_blip_is_asked_once(wheels: Path, tmp_path: Path, action: str) -> None:
    seen, plan = _first_fails(action, times=99)
    with serving(wheels, plan) as index:  # type: ignore[arg-type]
        exc = read_page(ix.IndexClient([index.url], cache_dir=tmp_path / "cache"))
    assert isinstance(exc, ix.IndexError_)
    assert "attempts" not in str(exc)
    assert seen["/simple/mcp/"] == 1


def test_nothing_listening_is_not_waited_on(tmp_path: Path) -> None:
    client = ix.IndexClient(["http://127.0.0.1:9/simple"], cache_dir=tmp_path / "cache")
    start = time.monotonic()
    exc = read_page(client)
    assert isinstance(exc, ix.IndexError_)
    assert (exc.code, "attempts" in str(exc)) == ("index-unreachable", False)
    assert time.monotonic() - start < http_retry.BACKOFF[0]


def test_the_run_budget_caps_retries_across_gets() -> None:
    retries = Retries(Deadline.start(60), budget=3)
    paused = [retries.pause(1), retries.pause(2), retries.pause(1), retries.pause(1)]
    assert paused == [True, True, True, False]  # three retries in all, then none
    assert Retries(Deadline.start(60)).pause(len(http_retry.BACKOFF) + 1) is False


def test_no_pause_outlasts_the_deadline() -> None:
    retries = Retries(Deadline.start(http_retry.BACKOFF[0] / 2))
    start = time.monotonic()
    assert retries.pause(1) is False
    assert time.monotonic() - start < http_retry.BACKOFF[0] / 2


def test_a_failing_index_costs_a_bounded_number_of_requests(
    wheels: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(http_retry, "BACKOFF", (0.01, 0.01))
    monkeypatch.setattr(http_retry, "BUDGET", 2)
    with serving(wheels, lambda _r: "503") as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        errors = [read_page(client) for _ in range(4)]
        asked = len(index.log)
    assert [str(e).endswith("(after 3 attempts)") for e in errors] == [True, False, False, False]
    assert asked == 3 + 1 + 1 + 1


def test_a_lock_run_through_a_blip_on_every_page_is_complete(wheels: Path, project: Path) -> None:
    """Each of agentguard's own page reads meets a reset once (uv reads well): the
    analysis is complete and the lock written, where before it was exit 3."""
    seen, plan = _first_fails("503")
    with serving(wheels, plan) as index:  # type: ignore[arg-type]
        run = lock(project, index.url)
    report = report_of(run)
    assert failed_sources(report) == []
    assert run.code in (0, 1)
    assert (project / "requirements.lock").exists()
    assert {p for p, n in seen.items() if p.startswith("/simple/")} == {
        "/simple/agent-sdk/",
        "/simple/mcp/",
    }
    assert all(n == 2 for p, n in seen.items() if p.startswith("/simple/"))


@pytest.mark.parametrize("through_proxy", [False, True])
def test_an_answer_that_is_no_http_is_not_tried_again(
    monkeypatch: pytest.MonkeyPatch, through_proxy: bool
) -> None:
    """A status line that is no HTTP is what this index sends, not a blip: the GET is not
    tried again (only the one resend of a kept-alive connection), directly or via a proxy."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)

    def answer(sock: socket.socket, _line: str) -> bool:
        sock.sendall(b"NOT HTTP AT ALL\r\n")
        return False

    with raw_serving(answer) as server:
        url = server.url("/simple/a/")
        if through_proxy:
            monkeypatch.setenv("HTTP_PROXY", server.url("/"))
            url = "http://127.0.0.1:9/simple/a/"  # (only the proxy answers)
        with pytest.raises(ix.IndexError_) as caught:
            Http().get(url)
        asked = len(server.requests)
    assert str(caught.value) == f"{url}: connection failed (not an HTTP/1 answer)"
    assert asked <= 2

"""Attacks on the retry of agentguard's own index client (agentguard.lock.http_retry), each
counted on a server of 127.0.0.1: what a failing index may cost, and what the run says."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agentguard.lock import http as lock_http
from agentguard.lock import http_retry
from agentguard.lock.deadline import Deadline
from agentguard.lock.http import Http
from agentguard.lock.pages import IndexError_
from tests.hostile.index_helpers import UV_FAST, raised_in_a_fresh_thread
from tests.hostile.index_server import serving
from tests.hostile.promises import run_agentguard
from tests.hostile.test_index_from_the_user import _uv_project, sdk_wheels

__all__ = ["sdk_wheels"]  # fixtures

pytestmark = pytest.mark.usefixtures("isolated_cache")

PROXY_VARS = ("http_proxy", "https_proxy", "all_proxy", "no_proxy")


def _get(http: Http, url: str) -> IndexError_:
    exc = raised_in_a_fresh_thread(lambda: http.get(url))
    assert isinstance(exc, IndexError_)
    return exc


@pytest.fixture()
def fast(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(http_retry, "BACKOFF", (0.01, 0.01))
    monkeypatch.setattr(lock_http, "TIMEOUT", 0.5)
    for name in PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


@pytest.mark.usefixtures("fast")
@pytest.mark.parametrize("action", ["reset", "close"])
def test_a_new_connection_that_breaks_is_asked_three_times_not_six(
    tmp_path: Path, action: str
) -> None:
    """Broke before the fix: every attempt sent the request once more on a second new
    connection (the resend meant for a kept-alive connection the server closed while idle),
    so "(after 3 attempts)" was 6 requests and 6 connections, and a redirect chain ending
    in a reset cost 3 x 7. Fixed: only a kept-alive connection is sent on once more."""
    with serving(tmp_path, lambda _r: action) as index:
        exc = _get(Http(deadline=Deadline.start(30)), index.url + "/mcp/")
        asked, connections = len(index.log), len(index.connections)
    assert str(exc).endswith("(after 3 attempts)")
    assert (asked, connections) == (3, 3)


@pytest.mark.usefixtures("fast")
@pytest.mark.parametrize(
    ("action", "reason"),
    [
        ("reset", "connection failed ([Errno 104] Connection reset by peer)"),
        ("close", "connection failed (Remote end closed connection without response)"),
        ("hang", "unreachable (timed out)"),
    ],
)
def test_through_a_proxy_a_broken_connection_is_tried_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, action: str, reason: str
) -> None:
    """Broke before the fix: through a plain proxy (a CI runner's), urllib3 names a reset, a
    close or a head that never came "Unable to connect to proxy" (ProxyError) or a read
    timeout, and neither was tried again: one request, and a reason saying the proxy could
    not be reached when it had taken the request. The direct path tried each three times."""
    with serving(tmp_path, lambda _r: action) as proxy:  # the proxy itself misbehaves
        monkeypatch.setenv("http_proxy", proxy.url.rsplit("/", 1)[0])
        exc = _get(Http(deadline=Deadline.start(30)), "http://index.invalid/simple/mcp/")
        asked = len(proxy.log)
    assert (exc.code, exc.retryable) == ("index-unreachable", True)
    assert str(exc) == f"http://index.invalid/simple/mcp/: {reason} (after 3 attempts)"
    assert asked == 3


@pytest.mark.usefixtures("fast")
def test_a_proxy_that_cannot_be_reached_is_not_waited_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("http_proxy", "http://127.0.0.1:9")
    exc = _get(Http(deadline=Deadline.start(30)), "http://index.invalid/simple/mcp/")
    assert (
        str(exc)
        == "http://index.invalid/simple/mcp/: unreachable (proxy: Unable to connect to proxy)"
    )


@pytest.mark.parametrize("check", [(), ("--check",)])
def test_a_uv_lock_run_ends_near_its_timeout_when_the_index_hangs(
    tmp_path: Path, sdk_wheels: Path, check: tuple[str, ...]
) -> None:
    """`lock` of a uv project analysed uv.lock with index clients made without the run's
    deadline (analyse_existing, refresh_released): each read waited its per-read timeout
    (30 s), tried three times. With --timeout 4 and an index that takes agentguard's
    requests and never answers, the run took 185 s (62 s before the retries)."""
    with serving(sdk_wheels, lambda r: "hang" if r.from_agentguard else "ok") as index:
        project = _uv_project(tmp_path, index.url)
        start = time.monotonic()
        run = run_agentguard(
            "lock", *check, str(project), "--index-url", index.url, "--timeout", "4",
            "--format", "json", env=UV_FAST, timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - start
    run.check_no_crash()
    assert run.code == 3
    assert elapsed < 4 + 15, elapsed
    failed = [s for s in json.loads(run.stdout)["sources"] if s["status"] == "failed"]
    assert failed
    assert {s["error_code"] for s in failed} == {"deadline-exceeded"}


def test_check_reports_its_other_steps_when_the_index_hangs(
    tmp_path: Path, sdk_wheels: Path
) -> None:
    """`check --timeout`: the lock step's index reads end at a share of the run's timeout, so
    a hanging index is a failed source of that step and the project's own findings are still
    reported. The run's timer alone reported nothing ("it did not look everywhere")."""
    with serving(sdk_wheels, lambda r: "hang" if r.from_agentguard else "ok") as index:
        project = _uv_project(tmp_path, index.url)
        (project / "Dockerfile").write_text("FROM python:3.12-slim\nRUN pip install mcp\n")
        start = time.monotonic()
        run = run_agentguard(
            "check", str(project), "--timeout", "8", "--format", "json",
            env={**UV_FAST, "UV_INDEX_URL": index.url}, timeout=60,
        )  # fmt: skip
        elapsed = time.monotonic() - start
    run.check_no_crash()
    assert run.code == 3
    assert elapsed < 8 + 5, elapsed
    report = json.loads(run.stdout)
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert failed
    assert {s["error_code"] for s in failed} == {"deadline-exceeded"}
    assert {s["kind"] for s in failed} != {"run"}
    assert any(f["rule_id"] == "AG120" for f in report["findings"])  # the Dockerfile's own

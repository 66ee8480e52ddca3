"""The index client's direct path (``http.client``, no proxy) and the proxied one (urllib3):
which one a URL takes, kept-alive connections, and a body cut short."""

from __future__ import annotations

import http.client
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from packaging.version import Version

from agentguard.lock import index as ix
from tests.hostile.index_helpers import wheels
from tests.hostile.index_server import Request, serving

__all__ = ["wheels"]  # fixtures

pytestmark = pytest.mark.usefixtures("isolated_cache")


@pytest.fixture()
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def _versions(client: ix.IndexClient, name: str) -> list[str]:
    return sorted(str(v) for v in client.project_page(name).versions())


@pytest.mark.usefixtures("no_proxy_env")
def test_pages_share_one_kept_alive_connection(wheels: Path, tmp_path: Path) -> None:
    with serving(wheels) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        assert _versions(client, "mcp") == ["1.0.0", "2.0.0"]
        assert _versions(client, "agent-sdk") == ["1.0.0"]
        pages = [r for r, _ in index.log if r.is_page]
    assert len(pages) == 2
    assert len(index.connections) == 1  # the second page on the first one's connection


@pytest.mark.usefixtures("no_proxy_env")
def test_a_kept_alive_connection_the_server_closed_is_replaced(
    wheels: Path, tmp_path: Path
) -> None:
    """The server hangs up on the kept-alive connection when the second request comes: the
    request is sent once more, on a new connection, and the page is read."""
    answers = iter(["ok", "close", "ok"])

    def plan(_r: Request) -> str:
        return next(answers)

    with serving(wheels, plan) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        assert _versions(client, "mcp") == ["1.0.0", "2.0.0"]
        assert _versions(client, "agent-sdk") == ["1.0.0"]
        actions = [a for _, a in index.log]
    assert actions == ["ok", "close", "ok"]
    assert len(index.connections) == 2


class _Proxy:
    """A plain HTTP forward proxy on 127.0.0.1 that notes every URL it is asked for."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def do_GET(self) -> None:
                proxy.seen.append(self.path)
                target = http.client.HTTPConnection(self.path.split("/")[2], timeout=10)
                path = "/" + self.path.split("/", 3)[3]
                target.request("GET", path, headers=dict(self.headers.items()))
                resp = target.getresponse()
                body = resp.read()
                self.send_response(resp.status)
                for key, value in resp.getheaders():
                    if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                target.close()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def forward_proxy(no_proxy_env: None) -> Iterator[_Proxy]:
    proxy = _Proxy()
    try:
        yield proxy
    finally:
        proxy.stop()


def test_a_proxy_in_the_environment_carries_the_page_reads(
    wheels: Path, tmp_path: Path, forward_proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", forward_proxy.url)
    with serving(wheels) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        assert _versions(client, "mcp") == ["1.0.0", "2.0.0"]
        assert [r.path for r, _ in index.log] == ["/simple/mcp/"]
    assert forward_proxy.seen == [f"{index.url}/mcp/"]


def test_no_proxy_sends_the_page_reads_straight_to_the_index(
    wheels: Path, tmp_path: Path, forward_proxy: _Proxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HTTP_PROXY", forward_proxy.url)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    with serving(wheels) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        assert _versions(client, "mcp") == ["1.0.0", "2.0.0"]
        assert [r.path for r, _ in index.log] == ["/simple/mcp/"]
    assert forward_proxy.seen == []


@pytest.mark.usefixtures("no_proxy_env")
def test_nothing_listening_is_named_as_such(tmp_path: Path) -> None:
    """A refused connection says so (it was "timed out" through urllib3, whose refusal is a
    kind of connect timeout)."""
    with socket.socket() as held:  # a port nothing listens on (bound, never listening)
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}/simple"
        client = ix.IndexClient([url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
    assert caught.value.code == "index-unreachable" and caught.value.retryable
    assert str(caught.value) == f"{url}/mcp/: unreachable ([Errno 111] Connection refused)"


@pytest.mark.parametrize(
    ("url", "came_from", "refused"),
    [
        ("https://203.0.113.5:8443/simple/mcp/", "https://203.0.113.5/simple/", True),
        ("https://203.0.113.5/files/mcp.whl", "https://203.0.113.5/simple/mcp/", False),
        ("https://203.0.113.9:444/f.whl", "https://203.0.113.9/f.whl", True),  # a CDN's other port
        ("https://203.0.113.9/f.whl", "https://203.0.113.5/simple/mcp/", False),  # a CDN
        ("https://203.0.113.9:444/f.whl", "https://203.0.113.5/simple/mcp/", False),
    ],
)
def test_another_port_of_a_host_read_from_is_refused(
    url: str, came_from: str, refused: bool
) -> None:
    """The policy's promise: never another port of the same host (logins are found by host,
    as netrc keys them; another port is another service)."""
    from agentguard.lock.urls import UrlPolicy, origin

    index = origin("https://203.0.113.5/simple/")
    assert index is not None
    why = UrlPolicy(frozenset({index})).refusal(url, came_from)
    assert (why is not None) == refused, why
    if refused:
        assert why is not None and "another port" in why


@pytest.mark.usefixtures("no_proxy_env")
def test_a_tls_handshake_dripping_in_stops_at_the_deadline() -> None:
    """A server that answers the TLS hello with a record header announcing 16 KB and then a
    byte every 0.2 s (each read inside the per-read timeout) is cut at the run's deadline:
    the socket's timeout, never more than what is left of the run, bounds the whole
    handshake (Python's ssl module), not each read of it. (A guard: held before.)"""
    from agentguard.lock.deadline import Deadline
    from agentguard.lock.http import Http
    from agentguard.lock.pages import IndexError_

    stop = threading.Event()
    server = socket.create_server(("127.0.0.1", 0))

    def drip() -> None:
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)  # the client's hello
            conn.sendall(b"\x16\x03\x03\x40\x00")  # a handshake record of 16 KB, coming...
            while not stop.wait(0.2):
                try:
                    conn.sendall(b"\x00")
                except OSError:
                    return

    threading.Thread(target=drip, daemon=True).start()
    url = f"https://127.0.0.1:{server.getsockname()[1]}/simple/mcp/"
    start = time.monotonic()
    try:
        with pytest.raises(IndexError_) as caught:
            Http(deadline=Deadline.start(2)).get(url)
    finally:
        stop.set()
        server.close()
    elapsed = time.monotonic() - start
    assert caught.value.code == "deadline-exceeded", str(caught.value)
    assert elapsed < 6, elapsed


@pytest.mark.usefixtures("no_proxy_env")
def test_a_body_cut_short_through_a_proxy_is_a_failed_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through urllib3 too (a proxy), a body shorter than its declared length is a failed
    read naming it, not a truncated page (or metadata file) taken as data."""

    class Short(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            return

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
            self.send_header("Content-Length", "1000")
            self.end_headers()
            self.wfile.write(b'{"files": [')
            self.close_connection = True

    proxy = ThreadingHTTPServer(("127.0.0.1", 0), Short)
    proxy.daemon_threads = True
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.server_address[1]}")
        url = "http://127.0.0.1:9/simple"  # (only the proxy answers)
        client = ix.IndexClient([url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
    finally:
        proxy.shutdown()
        proxy.server_close()
    assert caught.value.code == "index-unreachable"
    assert str(caught.value) == (
        f"{url}/mcp/: connection failed (IncompleteRead(11 bytes read, 989 more expected))"
        " (after 3 attempts)"  # (a body cut short is tried again, through a proxy too)
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://a..b/simple/",  # an empty label: IDNA cannot encode it (UnicodeError)
        "https://" + "a" * 64 + ".invalid/simple/",  # a label over 63 characters
        "http://a b/simple/",  # a host http.client refuses (InvalidURL)
        "https://[::1/simple/",  # an IPv6 literal left open
        "https://index.invalid:port/simple/",  # a port that is no number
    ],
)
def test_an_index_url_that_cannot_be_reached_is_a_named_failure(url: str, tmp_path: Path) -> None:
    """(Each of these escaped the direct path as its own exception, an internal error, where
    urllib3 had said "unreachable": a mistyped index is a failed read that says why.)"""
    client = ix.IndexClient([url], cache_dir=tmp_path / "cache")
    with pytest.raises(ix.IndexError_) as caught:
        client.project_page("mcp")
    assert caught.value.code in ("index-unreachable", "index-bad-url"), caught.value.code


def test_a_file_url_that_does_not_parse_is_refused_not_raised(tmp_path: Path) -> None:
    """A page is the index's: a file URL in it that does not parse (`https://[::1/...`) is
    a refused read of that file, never a ValueError through the lock's analysis."""
    page = "https://203.0.113.5/simple/mcp/"
    client = ix.IndexClient(["https://203.0.113.5/simple/"], cache_dir=tmp_path / "cache")
    bad = ix.IndexFile(
        filename="mcp-1.0-py3-none-any.whl",
        url="https://[::1/mcp-1.0-py3-none-any.whl",
        version=Version("1.0"),
        sha256=None,
        size=None,
        upload_time=None,
        requires_python=None,
        yanked=False,
        has_metadata=False,
        page_url=page,
    )
    with pytest.raises(ix.IndexError_) as caught:
        client.requires_dist(bad)
    assert caught.value.code == "index-bad-url"

"""A hostile index against the lock's own HTTP client (:mod:`agentguard.lock.http`), byte by
byte: what comes after an answer on a kept-alive connection, interim (1xx) answers, the
framing of a body (Content-Length, chunks, trailers), answers that are not a page, heads
that drip in, redirects to URLs that cannot be requested.

The promises: one answer is never read as another's (another package's page); a failed
read is a failed source (an :class:`IndexError_` with its code), never an empty or partial
page taken as data, never another exception; the deadline and the caps hold from the
request's first byte to the answer's last, on both paths (straight and through a proxy).
"""

from __future__ import annotations

import socket
import threading
import time

import pytest

from agentguard.lock.deadline import Deadline
from agentguard.lock.http import Http
from agentguard.lock.pages import IndexError_
from tests.hostile.raw_index import Answer, page, path_of, raw_serving


@pytest.fixture(autouse=True)
def no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def _then_close(data: bytes) -> Answer:
    """Send ``data`` to every request, then close the connection."""

    def answer(sock: socket.socket, _line: str) -> bool:
        sock.sendall(data)
        return False

    return answer


def _failed(http: Http, url: str, limit: int | None = None) -> IndexError_:
    with pytest.raises(IndexError_) as caught:
        if limit is None:
            http.get(url)
        else:
            http.get(url, limit=limit)
    return caught.value


# -- one answer is never read as another's ---------------------------------------------


def test_bytes_after_an_answer_never_become_the_next_answer() -> None:
    """The index sends, after the page for `a` and a moment later, a whole second answer on
    the kept-alive connection: the next read (for `b`, by another run's client) must not
    take it as `b`'s page."""

    def answer(sock: socket.socket, line: str) -> None:
        sock.sendall(page(b"<a>" + path_of(line) + b"</a>"))
        if "/a/" in line:
            time.sleep(0.2)
            sock.sendall(page(b"<a>/simple/b/ SMUGGLED</a>"))

    with raw_serving(answer) as index:
        assert Http().get(index.url("/simple/a/"))[0] == b"<a>/simple/a/</a>"
        time.sleep(0.5)
        assert Http().get(index.url("/simple/b/"))[0] == b"<a>/simple/b/</a>"
        assert index.connections == 2


@pytest.mark.parametrize("interim", [b"102 Processing", b"103 Early Hints"])
def test_interim_answers_are_skipped_never_taken_for_the_answer(interim: bytes) -> None:
    """http.client hands a 102/103 back as the answer (no body), and leaves the real answer
    on the connection, where the next request (another package) reads it as its own."""

    def answer(sock: socket.socket, line: str) -> None:
        sock.sendall(b"HTTP/1.1 " + interim + b"\r\nLink: </x>; rel=preload\r\n\r\n")
        time.sleep(0.05)
        sock.sendall(page(b"<a>" + path_of(line) + b"</a>"))

    http = Http()
    with raw_serving(answer) as index:
        for name in ("a", "b", "c"):
            assert http.get(index.url(f"/simple/{name}/"))[0] == f"<a>/simple/{name}/</a>".encode()


def test_sixteen_readers_at_once_each_get_their_own_answer() -> None:
    """The prefetch's 16 workers share the pool of kept-alive connections (guard)."""

    def answer(sock: socket.socket, line: str) -> None:
        sock.sendall(page(b"<a>" + path_of(line) + b"</a>" * 50))

    http = Http()
    wrong: list[str] = []

    def read(worker: int) -> None:
        for n in range(20):
            path = f"/simple/p{worker}-{n}/"
            body = http.get(index.url(path))[0]
            if not body.startswith(f"<a>{path}</a>".encode()):
                wrong.append(path)

    with raw_serving(answer) as index:
        threads = [threading.Thread(target=read, args=(w,)) for w in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert len(index.requests) == 320
    assert wrong == []


# -- answers that are not a whole page -------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 201 Created\r\nContent-Length: 12\r\n\r\n<a>page</a>\n",
        b"HTTP/1.1 204 No Content\r\n\r\n",
        b"HTTP/1.1 206 Partial Content\r\nContent-Length: 5\r\n\r\n<a>pa",
        b"HTTP/1.1 300 Multiple Choices\r\nContent-Length: 12\r\n\r\n<a>page</a>\n",
        b"HTTP/1.1 302 Found\r\nContent-Length: 12\r\n\r\n<a>page</a>\n",  # no Location
        b"HTTP/1.1 304 Not Modified\r\n\r\n",
    ],
    ids=["201", "204", "206", "300", "302-without-location", "304"],
)
def test_an_answer_that_is_not_a_page_is_a_failed_read(head: bytes) -> None:
    with raw_serving(lambda sock, _line: sock.sendall(head)) as index:
        url = index.url("/simple/a/")
        error = _failed(Http(), url)
    status = head.split(b" ")[1].decode()
    assert (error.code, error.retryable) == ("index-http-error", False)
    assert str(error) == f"{url}: HTTP {status} (not an answer with a page)"


# -- framing -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n<a>x</a>",
        b"HTTP/1.1 200 OK\r\nContent-Length: 1_0\r\n\r\n<a>12345</a>",
        b"HTTP/1.1 200 OK\r\nContent-Length: +8\r\n\r\n<a>x</a>",
        b"HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n<a>x</a>",
        b"HTTP/1.1 200 OK\r\nContent-Length: 8\r\nContent-Length: 3\r\n\r\n<a>x</a>",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n-5\r\n<a>x<\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0x5\r\n<a>x<\r\n0\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nfffffffffffffffffff\r\n<a>",
    ],
    ids=["cl-negative", "cl-underscore", "cl-plus", "cl-text", "cl-twice", "chunk-negative",
         "chunk-0x", "chunk-huge"],
)  # fmt: skip
def test_a_body_framed_ambiguously_is_a_failed_read(head: bytes) -> None:
    with raw_serving(_then_close(head)) as index:
        error = _failed(Http(), index.url("/simple/a/"))
    assert (error.code, error.retryable) == ("index-unreachable", True)


def test_length_and_chunks_together_are_read_as_chunks_on_a_connection_never_reused() -> None:
    both = (
        b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"8\r\n<a>x</a>\r\n0\r\n\r\n"
    )
    http = Http()
    with raw_serving(lambda sock, _line: sock.sendall(both)) as index:
        assert http.get(index.url("/simple/a/"))[0] == b"<a>x</a>"
        assert http.get(index.url("/simple/b/"))[0] == b"<a>x</a>"
        assert index.connections == 2


@pytest.mark.parametrize(
    "head",
    [
        b"HTTP/1.1 200 OK\r\n" + b"X-Bomb: y\r\n" * 200 + b"Content-Length: 3\r\n\r\n<a>",
        b"HTTP/1.1 200 OK\r\nX-Bomb: " + b"y" * 70_000 + b"\r\nContent-Length: 3\r\n\r\n<a>",
        b"<a>an HTTP/0.9 answer</a>",
    ],
    ids=["many-headers", "long-header", "http-0.9"],
)
def test_a_head_bomb_or_no_head_is_a_failed_read(head: bytes) -> None:
    """(guard)"""
    with raw_serving(_then_close(head)) as index:
        error = _failed(Http(), index.url("/simple/a/"))
    assert (error.code, error.retryable) == ("index-unreachable", True)


def test_an_http_1_0_answer_ends_with_its_connection_never_reused() -> None:
    """(guard) An answer without a length, ended by the server closing the connection."""
    http = Http()
    with raw_serving(_then_close(b"HTTP/1.0 200 OK\r\n\r\n<a>ten</a>")) as index:
        assert http.get(index.url("/simple/a/"))[0] == b"<a>ten</a>"
        assert http.get(index.url("/simple/b/"))[0] == b"<a>ten</a>"
        assert index.connections == 2


def test_the_index_bytes_of_a_bad_status_line_are_not_echoed() -> None:
    with raw_serving(_then_close(b"ECHOED \x1b]0;x\x07 line\r\n")) as index:
        url = index.url("/simple/a/")
        error = _failed(Http(), url)
    assert str(error) == f"{url}: connection failed (not an HTTP/1 answer)"


# -- caps and the deadline, from the first byte -----------------------------------------


@pytest.mark.parametrize(
    ("head", "piece"),
    [
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n", b"1;" + b"e" * 60_000 + b"\r\n<\r\n"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\n<a>\r\n0\r\n", b"X-T: y\r\n" * 500),
        (b"", b"HTTP/1.1 100 Continue\r\n\r\n" * 50),
        (b"", b"HTTP/1.1 103 Early Hints\r\nLink: </x>\r\n\r\n" * 50),
    ],
    ids=["chunk-extensions", "endless-trailer", "100-flood", "103-flood"],
)  # fmt: skip
def test_an_answer_endless_outside_its_body_stops_at_once(head: bytes, piece: bytes) -> None:
    """A body under its cap in a million chunk lines, an endless trailer, endless interim
    answers: http.client reads each without end (the deadline, 30 min by default, was all
    that stopped them)."""

    sent = [0]

    def answer(sock: socket.socket, _line: str) -> bool:
        sock.sendall(head)
        ends = time.monotonic() + 8
        while time.monotonic() < ends and not index.stop.is_set():
            sock.sendall(piece)
            sent[0] += len(piece)
        return False

    with raw_serving(answer) as index:
        started = time.monotonic()
        error = _failed(Http(deadline=Deadline.start(30)), index.url("/simple/a/"), limit=1024)
        took = time.monotonic() - started
    assert error.code in ("index-too-large", "index-unreachable")
    assert took < 4
    assert sent[0] < 16 * 1024 * 1024  # (the cap: 330 kB; the rest sat in socket buffers)


@pytest.mark.parametrize(
    "drip",
    [b"X-Slow: y\r\n", b"HTTP/1.1 100 Continue\r\n\r\n"],
    ids=["header-lines", "interim-answers"],
)
def test_a_head_dripping_in_stops_at_the_deadline(drip: bytes) -> None:
    """A header line (or an interim answer) every 0.3 s never trips the per-read timeout:
    the watchdog shuts the socket from the request on, not from the body on."""

    def answer(sock: socket.socket, _line: str) -> bool:
        if not drip.startswith(b"HTTP/"):
            sock.sendall(b"HTTP/1.1 200 OK\r\n")
        ends = time.monotonic() + 20
        while time.monotonic() < ends and not index.stop.is_set():
            sock.sendall(drip)
            time.sleep(0.3)
        return False

    with raw_serving(answer) as index:
        started = time.monotonic()
        error = _failed(Http(deadline=Deadline.start(2)), index.url("/simple/a/"))
        took = time.monotonic() - started
    assert error.code == "deadline-exceeded"
    assert took < 4


# -- redirects the client cannot follow ------------------------------------------------


@pytest.mark.parametrize(
    "location",
    [b"http://[::1/simple/a/", b"http://[zz]/simple/a/", b"/simple/\xff\xfe/", b"/a b/"],
    ids=["open-bracket", "bad-ip-literal", "non-ascii", "space"],
)
def test_a_redirect_to_a_url_that_cannot_be_requested_is_a_failed_read(location: bytes) -> None:
    def answer(sock: socket.socket, _line: str) -> None:
        sock.sendall(
            b"HTTP/1.1 302 Found\r\nLocation: " + location + b"\r\nContent-Length: 0\r\n\r\n"
        )

    with raw_serving(answer) as index:
        error = _failed(Http(), index.url("/simple/a/"))
    assert (error.code, error.retryable) == ("index-bad-url", False)


# -- through a proxy ---------------------------------------------------------------------


def test_a_head_dripping_in_through_a_proxy_stops_at_the_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Through urllib3 too, the deadline holds from the status line on (it held from the
    body on: a head dripping in went on for as long as the proxy liked)."""

    def answer(sock: socket.socket, _line: str) -> bool:
        sock.sendall(b"HTTP/1.1 200 OK\r\n")
        ends = time.monotonic() + 20
        while time.monotonic() < ends and not proxy.stop.is_set():
            sock.sendall(b"X-Slow: y\r\n")
            time.sleep(0.3)
        return False

    with raw_serving(answer) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        started = time.monotonic()
        error = _failed(Http(deadline=Deadline.start(2)), "http://index.invalid/simple/a/")
        took = time.monotonic() - started
    assert error.code == "deadline-exceeded"
    assert took < 4


def test_an_ambiguous_length_through_a_proxy_is_a_failed_read(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    with raw_serving(
        _then_close(b"HTTP/1.1 200 OK\r\nContent-Length: 1_0\r\n\r\n<a>12345</a>")
    ) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        error = _failed(Http(), "http://index.invalid/simple/a/")
    assert (error.code, error.retryable) == ("index-unreachable", True)


def test_interim_answers_through_a_proxy_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """The proxied path (urllib3) reads its answers with the same rules."""

    def answer(sock: socket.socket, line: str) -> None:
        sock.sendall(b"HTTP/1.1 103 Early Hints\r\n\r\n")
        time.sleep(0.05)
        sock.sendall(page(b"<a>" + path_of(line) + b"</a>"))

    with raw_serving(answer) as proxy:
        monkeypatch.setenv("HTTP_PROXY", f"http://127.0.0.1:{proxy.port}")
        http = Http()
        for name in ("a", "b"):
            url = f"http://index.invalid/simple/{name}/"
            assert http.get(url)[0] == f"<a>{url}</a>".encode()

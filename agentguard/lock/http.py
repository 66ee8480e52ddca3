"""GET over http(s) for the index client: straight to the index with ``http.client``
(:mod:`agentguard.lock.http_direct`), or through a proxy with urllib3
(:mod:`agentguard.lock.http_proxied`).

What is agentguard's own: every answer is capped (and an error body is never read whole),
every read is bounded by the run's :class:`Deadline` as well as a per-read timeout (a
server sending a byte every few seconds is cut off at the deadline), a body shorter than
its declared length is a failed read, each redirect is checked against the
:class:`UrlPolicy`, a login goes only to its own origin, and every message names the URL
without its secrets.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
import time
import urllib.parse
import urllib.request
from typing import TYPE_CHECKING

from agentguard.lock import http_answer, http_direct
from agentguard.lock.credentials import Credentials
from agentguard.lock.deadline import DEADLINE_CODE, NO_DEADLINE, Deadline
from agentguard.lock.http_answer import AnswerTooLarge, wire_cap
from agentguard.lock.http_retry import Retries, Transient
from agentguard.lock.pages import MAX_PAGE_BYTES, IndexError_
from agentguard.lock.urls import UrlPolicy, clean_url, origin

if TYPE_CHECKING:
    import urllib3

TIMEOUT = 30.0
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "agentguard (+lock)"
PAGE_STATUSES = (200, 203)  # the answers whose body is the page (no 204, 206, 3xx...)


def _why(exc: BaseException) -> str:
    """A short reason for a failed request on the direct path (no object reprs, no URLs)."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, http.client.RemoteDisconnected):
        return str(exc) or "Remote end closed connection without response"
    if isinstance(exc, http.client.BadStatusLine):  # (its text is the index's bytes)
        return "not an HTTP/1 answer"
    if isinstance(exc, OSError) and type(exc).__module__ == "ssl":
        return f"TLS: {exc}"
    return str(exc) or type(exc).__name__


class Http:
    """GETs for one run: its logins, its URL policy, its deadline."""

    def __init__(
        self,
        credentials: Credentials | None = None,
        policy: UrlPolicy | None = None,
        deadline: Deadline = NO_DEADLINE,
    ) -> None:
        self.credentials = credentials or Credentials()
        self.policy = policy
        self.deadline = deadline
        self._watchdog = _Watchdog(deadline)
        self._retries = Retries(deadline)
        self._proxies: dict[str, str] | None = None
        self._bypass: dict[str, bool] = {}

    def _deadline_error(self, url: str) -> IndexError_:
        return IndexError_(
            f"{clean_url(url)}: {self.deadline.describe()}", code=DEADLINE_CODE, retryable=True
        )

    def get(
        self, url: str, accept: str | None = None, limit: int = MAX_PAGE_BYTES
    ) -> tuple[bytes, str]:
        """The page's bytes and content type; a transient failure is tried again
        (:mod:`agentguard.lock.http_retry`)."""
        attempt = 1
        while True:
            try:
                return self._get(url, accept, limit)
            except Transient as exc:
                if not self._retries.pause(attempt):
                    raise exc.after(attempt) from None
                attempt += 1

    def _get(self, url: str, accept: str | None, limit: int) -> tuple[bytes, str]:
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if accept:
            headers["Accept"] = accept
        for _ in range(MAX_REDIRECTS + 1):
            status, location, ctype, body = self._once(url, headers, limit)
            if status in (301, 302, 303, 307, 308) and location:
                try:
                    target = urllib.parse.urljoin(url, location)
                    refusal = self.policy.refusal(target, url) if self.policy else None
                except ValueError:  # (an IPv6 literal left open, or not an address)
                    refusal = "names a URL that cannot be read"
                if refusal is not None:
                    raise IndexError_(
                        f"{clean_url(url)}: redirect refused: {refusal}",
                        code="index-bad-url",
                        retryable=False,
                    )
                url = target
                continue
            shown = clean_url(url)
            if status == 404:
                raise IndexError_(
                    f"{shown}: not found (404)", code="index-not-found", retryable=False
                )
            if status in (401, 403):
                raise IndexError_(
                    f"{shown}: HTTP {status} (the index wants credentials, or refused them)",
                    code="index-auth-failed",
                    retryable=False,
                )
            if status >= 400:
                again = status >= 500 or status == 429
                raise (Transient if again else IndexError_)(
                    f"{shown}: HTTP {status}", code="index-http-error", retryable=again
                )
            if status not in PAGE_STATUSES:  # not a whole page: a failed read, never data
                raise IndexError_(
                    f"{shown}: HTTP {status} (not an answer with a page)",
                    code="index-http-error",
                    retryable=False,
                )
            if len(body) > limit:
                raise _too_large(url, limit)
            return body, ctype
        raise IndexError_(
            f"{clean_url(url)}: more than {MAX_REDIRECTS} redirects",
            code="index-http-error",
            retryable=False,
        )

    def _proxy(self, parts: urllib.parse.SplitResult) -> str:
        """The proxy the environment names for this URL ("": none), as urllib reads the
        environment, once per run (reading it per request cost 18 ms on 271 pages)."""
        if self._proxies is None:
            self._proxies = urllib.request.getproxies()
        proxy = self._proxies.get(parts.scheme, "")
        host = parts.hostname or ""
        if proxy:
            bypass = self._bypass.get(host)
            if bypass is None:
                bypass = self._bypass[host] = bool(urllib.request.proxy_bypass(host))
            if bypass:
                return ""
        return proxy

    def _once(
        self, url: str, headers: dict[str, str], limit: int
    ) -> tuple[int, str | None, str, bytes]:
        """One request (sent again once, on a new connection, when a kept-alive one fails
        before the answer: the server may have closed it meanwhile; a new connection that
        fails is the caller's to try again, after a pause, within the run's bounds)."""
        where = origin(url)  # (None: no http(s) URL, or one that does not parse)
        if where is None:
            raise IndexError_(
                f"{clean_url(url)}: unsupported URL", code="index-bad-url", retryable=False
            )
        parts = urllib.parse.urlsplit(url)
        sent = {**headers, **self.credentials.header(url)}
        proxy = self._proxy(parts)
        if proxy:
            return self._once_proxied(url, proxy, sent, limit)
        http_answer.expect(wire_cap(max(limit, MAX_ERROR_BODY_BYTES)))
        target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        for attempt in (0, 1):
            if self.deadline.passed:
                raise self._deadline_error(url)
            conn: http.client.HTTPConnection | None = None
            kept = False
            try:
                conn = http_direct.take(*where, self.deadline.bound(TIMEOUT))
                kept = conn.sock is not None
                if not kept:
                    conn.connect()
            # refused, no such host, TLS, a connect that timed out; a host name IDNA cannot
            # encode (UnicodeError) or http.client refuses (InvalidURL): unreachable, named
            except (OSError, UnicodeError, http.client.HTTPException) as exc:
                if conn is not None:
                    conn.close()
                raise self._failed(url, "unreachable", exc) from None
            # the deadline holds from the request on: a status line, headers or interim
            # answers dripping in never trip the per-read timeout either
            sock = conn.sock
            self._watchdog.watch(sock)
            try:
                resp = self._exchange(conn, url, target, sent, attempt == 0 and kept)
                if resp is None:
                    continue
                body = self._read(resp, url, limit if resp.status < 300 else MAX_ERROR_BODY_BYTES)
            except BaseException:
                conn.close()
                raise
            finally:
                self._watchdog.unwatch(sock)
            if resp.isclosed() and not resp.will_close:
                http_direct.give_back(*where, conn)
            else:
                conn.close()
            return resp.status, resp.getheader("Location"), resp.getheader("Content-Type", ""), body
        raise AssertionError("unreachable")  # pragma: no cover

    def _exchange(
        self,
        conn: http.client.HTTPConnection,
        url: str,
        target: str,
        sent: dict[str, str],
        kept: bool,
    ) -> http.client.HTTPResponse | None:
        """The request sent and the answer's head read (None: send it again, once, as the
        connection was a kept-alive one, ``kept``, and failed before a byte of answer)."""
        try:
            conn.request("GET", target, headers=sent)
            return conn.getresponse()
        except (UnicodeError, http.client.InvalidURL):  # a redirect's path http can't carry
            raise IndexError_(
                f"{clean_url(url)}: unsupported URL", code="index-bad-url", retryable=False
            ) from None
        except AnswerTooLarge:
            raise _too_large(url, MAX_ERROR_BODY_BYTES) from None
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            if kept and not isinstance(exc, TimeoutError) and not self.deadline.passed:
                return None
            what = "unreachable" if isinstance(exc, TimeoutError) else "connection failed"
            # (a connection that broke may not break again; an answer that is no HTTP will)
            again = isinstance(exc, OSError)
            raise self._failed(url, what, exc, transient=again) from None

    def _failed(
        self,
        url: str,
        what: str,
        exc: BaseException,
        why: str | None = None,
        *,
        transient: bool = False,
    ) -> IndexError_:
        if self.deadline.passed:
            return self._deadline_error(url)
        return _unreachable(url, what, _why(exc) if why is None else why, transient)

    def _read(self, resp: http.client.HTTPResponse, url: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes. Each read waits no longer than the per-read timeout,
        and the whole exchange no longer than the deadline (the caller's watchdog shuts the
        socket). The caller closes a connection whose answer was not read to its end (its
        rest is never the next answer)."""
        if _declared_over(resp.getheader("Content-Length", ""), resp.status, url, limit):
            return b""
        try:
            # identity was asked for: the bytes as sent
            body = resp.read(limit + 1)
        except AnswerTooLarge:
            raise _too_large(url, limit) from None
        except (http.client.HTTPException, OSError, ValueError) as exc:
            if self.deadline.passed:
                raise self._deadline_error(url) from None
            # (a connection that broke or cut the body short may not again; a chunked body
            # that does not parse, ValueError or a line too long, is what the index sends)
            again = isinstance(exc, (OSError, http.client.IncompleteRead))
            raise _unreachable(url, "connection failed", _why(exc), again) from None
        if self.deadline.passed:
            raise self._deadline_error(url)
        _whole(url, body, resp.length, limit)
        return body

    # -- through a proxy (urllib3) ---------------------------------------------------------
    def _once_proxied(
        self, url: str, proxy: str, sent: dict[str, str], limit: int
    ) -> tuple[int, str | None, str, bytes]:
        try:
            return self._proxied(url, proxy, sent, limit)
        finally:
            for sock in http_answer.watched():
                self._watchdog.unwatch(sock)

    def _proxied(
        self, url: str, proxy: str, sent: dict[str, str], limit: int
    ) -> tuple[int, str | None, str, bytes]:
        from agentguard.lock import http_proxied as px

        # the watchdog watches each answer's socket from its status line on
        http_answer.expect(wire_cap(max(limit, MAX_ERROR_BODY_BYTES)), self._watchdog.watch)
        for attempt in (0, 1):
            if self.deadline.passed:
                raise self._deadline_error(url)
            bound = self.deadline.bound(TIMEOUT)
            try:
                resp = px.manager(proxy).urlopen(
                    "GET",
                    url,
                    headers=sent,
                    preload_content=False,
                    redirect=False,
                    retries=False,
                    timeout=px.timeout(bound),
                )
            except px.ProtocolError as exc:
                if px.too_large(exc):
                    raise _too_large(url, MAX_ERROR_BODY_BYTES) from None
                if attempt == 0 and not self.deadline.passed:
                    continue
                raise self._failed(
                    url, "connection failed", exc, px.why(exc), transient=px.broken(exc)
                ) from None
            except px.HTTPError as exc:
                if self.deadline.passed:
                    raise self._deadline_error(url) from None
                why = px.why(exc)
                if px.broken(exc):  # (sent, then no head came, or the connection broke)
                    what = "unreachable" if why == "timed out" else "connection failed"
                    raise _unreachable(url, what, why, True) from None
                raise _unreachable(url, "unreachable", why) from None
            try:
                body = self._read_proxied(
                    resp, url, limit if resp.status < 300 else MAX_ERROR_BODY_BYTES
                )
            finally:
                resp.release_conn()
            return (
                resp.status,
                resp.headers.get("Location"),
                resp.headers.get("Content-Type", ""),
                body,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    def _read_proxied(self, resp: urllib3.BaseHTTPResponse, url: str, limit: int) -> bytes:
        """:meth:`_read` for an answer through urllib3."""
        from agentguard.lock import http_proxied as px

        if _declared_over(resp.headers.get("Content-Length", ""), resp.status, url, limit):
            resp.close()
            return b""
        try:  # (the socket is watched since the answer's status line)
            body = resp.read(limit + 1, decode_content=False)
        except (px.HTTPError, OSError, ValueError) as exc:
            resp.close()
            if px.too_large(exc):
                raise _too_large(url, limit) from None
            if self.deadline.passed:
                raise self._deadline_error(url) from None
            raise _unreachable(url, "connection failed", px.why(exc), True) from None
        if self.deadline.passed:
            resp.close()
            raise self._deadline_error(url)
        if len(body) > limit:
            resp.close()
        _whole(url, body, resp.length_remaining, limit)
        return body


def _declared_over(declared: str, status: int, url: str, limit: int) -> bool:
    """The answer declares more than ``limit`` bytes: a page is refused (too large), an
    error's body is not read (True: the caller closes the connection)."""
    if declared.isdigit() and int(declared) > limit:
        if status < 300:
            raise _too_large(url, limit)
        return True
    return False


def _whole(url: str, body: bytes, left: int | None, limit: int) -> None:
    """A body the connection ended before its declared length (``left`` bytes still to
    come) is a failed read, never data: a metadata file cut short lists fewer requirements."""
    if left and len(body) <= limit:
        raise _unreachable(
            url,
            "connection failed",
            f"IncompleteRead({len(body)} bytes read, {left} more expected)",
            True,
        )


def _unreachable(url: str, what: str, why: str, transient: bool = False) -> IndexError_:
    return (Transient if transient else IndexError_)(
        f"{clean_url(url)}: {what} ({why})", code="index-unreachable", retryable=True
    )


def _too_large(url: str, limit: int) -> IndexError_:
    return IndexError_(
        f"{clean_url(url)}: answer larger than {limit} bytes",
        code="index-too-large",
        retryable=False,
    )


def _shut(sock: socket.socket) -> None:
    with contextlib.suppress(OSError):
        sock.shutdown(socket.SHUT_RDWR)


class _Watchdog:
    """One sleeping thread per run: when the deadline passes it shuts every socket being
    read (a body trickling in never trips a per-read timeout), and any socket after."""

    def __init__(self, deadline: Deadline) -> None:
        self.deadline = deadline
        self._socks: set[socket.socket] = set()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._fired = False

    def watch(self, sock: socket.socket) -> None:
        with self._lock:
            if self._fired:
                _shut(sock)
                return
            self._socks.add(sock)
            if self._thread is None and self.deadline.left() < float("inf"):
                self._thread = threading.Thread(target=self._run, daemon=True)
                self._thread.start()

    def unwatch(self, sock: socket.socket) -> None:
        with self._lock:
            self._socks.discard(sock)

    def _run(self) -> None:
        while not self.deadline.passed:
            time.sleep(min(self.deadline.left(), 60.0) + 0.001)
        with self._lock:
            self._fired = True
            for sock in self._socks:
                _shut(sock)
            self._socks.clear()

"""GET over http(s) for the index client, through urllib3 (pooling, TLS, proxies).

What is agentguard's own: every answer is capped (and an error body is never read whole),
every read is bounded by the run's :class:`Deadline` as well as a per-read timeout (a
server sending a byte every few seconds is cut off at the deadline), each redirect is
checked against the :class:`UrlPolicy`, a login goes only to its own origin, and every
message names the URL without its secrets.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import threading
import time
import urllib.parse
import urllib.request

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    SSLError,
    TimeoutError,
)

from agentguard.lock.credentials import Credentials
from agentguard.lock.deadline import DEADLINE_CODE, NO_DEADLINE, Deadline
from agentguard.lock.pages import MAX_PAGE_BYTES, IndexError_
from agentguard.lock.urls import UrlPolicy, clean_url

TIMEOUT = 30.0
MAX_ERROR_BODY_BYTES = 64 * 1024
MAX_REDIRECTS = 5
USER_AGENT = "agentguard (+lock)"

_MANAGERS: dict[str, urllib3.PoolManager] = {}
_MANAGERS_LOCK = threading.Lock()


def _ssl_context() -> ssl.SSLContext:
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"):
        cafile = os.environ.get(name)
        if cafile and os.path.isfile(cafile):
            return ssl.create_default_context(cafile=cafile)
    return ssl.create_default_context()


_DNS: dict[tuple[str, int], str] = {}
_DNS_LOCKS: dict[tuple[str, int], threading.Lock] = {}


def _address(host: str, port: int) -> str:
    """Each host is looked up once per process: the 16 workers opening their connections at
    once would otherwise send a burst of look-ups, and a resolver that rate-limits them
    stalls for 5 s (measured here: a cold lock took 6 s instead of 1.5 s)."""
    key = (host, port)
    with _MANAGERS_LOCK:
        lock = _DNS_LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _DNS:
            info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            _DNS[key] = str(info[0][4][0])
        return _DNS[key]


class _CachedDNS(HTTPConnection):
    def _new_conn(self) -> socket.socket:
        name = self._dns_host
        with contextlib.suppress(OSError, UnicodeError):  # else urllib3 names the failure
            self._dns_host = _address(name.rstrip("."), self.port)
        try:
            return super()._new_conn()
        finally:
            self._dns_host = name


class _Connection(_CachedDNS):
    pass


class _TLSConnection(_CachedDNS, HTTPSConnection):
    pass


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


def _manager(url: str) -> urllib3.PoolManager:
    """One pool per proxy (none: ""), shared by every thread: 16 connections per host, as
    many as the analysis has workers. Proxies as urllib reads them from the environment."""
    host = urllib.parse.urlsplit(url).hostname or ""
    proxies = urllib.request.getproxies()
    proxy = proxies.get(urllib.parse.urlsplit(url).scheme, "")
    if proxy and urllib.request.proxy_bypass(host):
        proxy = ""
    with _MANAGERS_LOCK:
        if proxy not in _MANAGERS:
            options = {"num_pools": 16, "maxsize": 16, "retries": False}
            context = _ssl_context()
            manager = (
                urllib3.ProxyManager(proxy, ssl_context=context, **options)  # type: ignore[arg-type]
                if proxy
                else urllib3.PoolManager(ssl_context=context, **options)  # type: ignore[arg-type]
            )
            manager.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
            _MANAGERS[proxy] = manager
        return _MANAGERS[proxy]


def _why(exc: BaseException) -> str:
    """A short reason for a failed request (no object reprs, no URLs)."""
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, NewConnectionError):
        return str(exc).rsplit("new connection: ", 1)[-1]
    if isinstance(exc, ProtocolError) and len(exc.args) > 1:
        inner = exc.args[1]
        return str(inner) or type(inner).__name__
    if isinstance(exc, SSLError):
        return f"TLS: {exc}"
    if isinstance(exc, ProxyError):
        return f"proxy: {exc.args[0] if exc.args else exc}"
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

    def _deadline_error(self, url: str) -> IndexError_:
        return IndexError_(
            f"{clean_url(url)}: {self.deadline.describe()}", code=DEADLINE_CODE, retryable=True
        )

    def get(
        self, url: str, accept: str | None = None, limit: int = MAX_PAGE_BYTES
    ) -> tuple[bytes, str]:
        headers = {"User-Agent": USER_AGENT, "Accept-Encoding": "identity"}
        if accept:
            headers["Accept"] = accept
        for _ in range(MAX_REDIRECTS + 1):
            status, location, ctype, body = self._once(url, headers, limit)
            if status in (301, 302, 303, 307, 308) and location:
                target = urllib.parse.urljoin(url, location)
                refusal = self.policy.refusal(target, url) if self.policy else None
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
                raise IndexError_(
                    f"{shown}: HTTP {status}",
                    code="index-http-error",
                    retryable=status >= 500 or status == 429,
                )
            if len(body) > limit:
                raise IndexError_(
                    f"{shown}: answer larger than {limit} bytes",
                    code="index-too-large",
                    retryable=False,
                )
            return body, ctype
        raise IndexError_(
            f"{clean_url(url)}: more than {MAX_REDIRECTS} redirects",
            code="index-http-error",
            retryable=False,
        )

    def _once(
        self, url: str, headers: dict[str, str], limit: int
    ) -> tuple[int, str | None, str, bytes]:
        """One request (sent again once when a kept-alive connection turns out closed)."""
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise IndexError_(
                f"{clean_url(url)}: unsupported URL", code="index-bad-url", retryable=False
            )
        sent = {**headers, **self.credentials.header(url)}
        for attempt in (0, 1):
            if self.deadline.passed:
                raise self._deadline_error(url)
            timeout = urllib3.Timeout(
                connect=self.deadline.bound(TIMEOUT), read=self.deadline.bound(TIMEOUT)
            )
            try:
                resp = _manager(url).urlopen(
                    "GET",
                    url,
                    headers=sent,
                    preload_content=False,
                    redirect=False,
                    retries=False,
                    timeout=timeout,
                )
            except ProtocolError as exc:
                if attempt == 0:
                    continue
                raise self._unreachable(url, "connection failed", exc) from None
            except HTTPError as exc:
                if isinstance(exc, TimeoutError) and self.deadline.passed:
                    raise self._deadline_error(url) from None
                raise self._unreachable(url, "unreachable", exc) from None
            try:
                body = self._read(resp, url, limit if resp.status < 300 else MAX_ERROR_BODY_BYTES)
            finally:
                resp.release_conn()
            return (
                resp.status,
                resp.headers.get("Location"),
                resp.headers.get("Content-Type", ""),
                body,
            )
        raise AssertionError("unreachable")  # pragma: no cover

    @staticmethod
    def _unreachable(url: str, what: str, exc: BaseException) -> IndexError_:
        return IndexError_(
            f"{clean_url(url)}: {what} ({_why(exc)})", code="index-unreachable", retryable=True
        )

    def _read(self, resp: urllib3.BaseHTTPResponse, url: str, limit: int) -> bytes:
        """At most ``limit + 1`` bytes. Each read waits no longer than the per-read timeout,
        and the whole body no longer than the deadline (the watchdog shuts the socket).
        A body not read to its end closes the connection (its rest is never the next answer)."""
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > limit:
            resp.close()
            if resp.status < 300:
                raise IndexError_(
                    f"{clean_url(url)}: answer larger than {limit} bytes",
                    code="index-too-large",
                    retryable=False,
                )
            return b""
        sock = _socket_of(resp)
        if sock is not None:
            self._watchdog.watch(sock)
        try:
            # identity was asked for: the bytes as sent (no decoder copies on the way)
            body = resp.read(limit + 1, decode_content=False)
        except (HTTPError, OSError) as exc:
            resp.close()
            if self.deadline.passed:
                raise self._deadline_error(url) from None
            raise self._unreachable(url, "connection failed", exc) from None
        finally:
            if sock is not None:
                self._watchdog.unwatch(sock)
        if self.deadline.passed:
            resp.close()
            raise self._deadline_error(url)
        if len(body) > limit:
            resp.close()
        return body


def _socket_of(resp: urllib3.BaseHTTPResponse) -> socket.socket | None:
    """The socket a body is read from. An answer that closes its connection (HTTP/1.0, or
    `Connection: close`) keeps the socket only in the response's file: the connection has
    let go of it, and a watchdog that looked only there would never shut a slow drip."""
    sock = getattr(getattr(resp, "connection", None), "sock", None)
    if sock is None:
        fp = getattr(getattr(resp, "_fp", None), "fp", None)  # http.client's buffered file
        sock = getattr(getattr(fp, "raw", None), "_sock", None)
    return sock if isinstance(sock, socket.socket) else None


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

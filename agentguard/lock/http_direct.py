"""Connections straight to an index (no proxy): ``http.client`` over a pool of kept-alive
connections per origin, shared by every thread of the run.

A re-lock reads every locked package's page while the resolver runs, and on two cores the
CPU it spends there is taken from the resolver: urllib3's layers (pool manager, timeouts,
retries, response wrapper) cost about 0.6 ms of CPU per request on top of ``http.client``,
which it uses underneath (271 pages of a 272-pin stack: 0.38-0.43 s of CPU through
urllib3, 0.22-0.25 s through ``http.client`` alone; importing urllib3: 30 ms). A URL that
goes through a proxy still goes through urllib3 (:mod:`agentguard.lock.http`), which
speaks every kind of proxy.

What :mod:`agentguard.lock.http` promises holds on this path too: it only connects,
sends and hands back the answer; the caps, the deadline, redirects and logins are the
caller's.
"""

from __future__ import annotations

import http.client
import os
import select
import socket
import ssl
import threading

from agentguard.lock.http_answer import Answer

MAX_IDLE = 16  # kept-alive connections per origin (as many as the page readers)

_LOCK = threading.Lock()
_IDLE: dict[tuple[str, str, int, int], list[http.client.HTTPConnection]] = {}
_CONTEXTS: dict[str, ssl.SSLContext] = {}
_DNS: dict[tuple[str, int], str] = {}
_DNS_LOCKS: dict[tuple[str, int], threading.Lock] = {}


def ssl_context() -> ssl.SSLContext:
    """The TLS context for the CA bundle the environment names (as pip and requests read
    it), or the system's; made once per bundle per process (loading one costs 20-40 ms)."""
    cafile = ""
    for name in ("SSL_CERT_FILE", "REQUESTS_CA_BUNDLE", "PIP_CERT"):
        value = os.environ.get(name)
        if value and os.path.isfile(value):
            cafile = value
            break
    with _LOCK:
        context = _CONTEXTS.get(cafile)
        if context is None:
            context = ssl.create_default_context(cafile=cafile or None)
            _CONTEXTS[cafile] = context
        return context


def address(host: str, port: int) -> str:
    """Each host is looked up once per process: the 16 workers opening their connections at
    once would otherwise send a burst of look-ups, and a resolver that rate-limits them
    stalls for 5 s (measured here: a cold lock took 6 s instead of 1.5 s)."""
    key = (host, port)
    with _LOCK:
        lock = _DNS_LOCKS.setdefault(key, threading.Lock())
    with lock:
        if key not in _DNS:
            info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
            _DNS[key] = str(info[0][4][0])
        return _DNS[key]


def _connect(
    where: tuple[str, int], timeout: float | None = None, source: tuple[str, int] | None = None
) -> socket.socket:
    host, port = where
    try:
        ip = address(host.rstrip("."), port)
    except (OSError, UnicodeError):  # the connection looks it up again, and names the failure
        ip = host
    return socket.create_connection((ip, port), timeout, source)


def _new(scheme: str, host: str, port: int, timeout: float) -> http.client.HTTPConnection:
    conn: http.client.HTTPConnection
    if scheme == "https":
        conn = http.client.HTTPSConnection(host, port, timeout=timeout, context=ssl_context())
    else:
        conn = http.client.HTTPConnection(host, port, timeout=timeout)
    conn._create_connection = _connect  # type: ignore[attr-defined]  # (http.client's hook)
    conn.response_class = Answer
    return conn


def _key(scheme: str, host: str, port: int) -> tuple[str, str, int, int]:
    return (scheme, host, port, id(ssl_context()) if scheme == "https" else 0)


def take(scheme: str, host: str, port: int, timeout: float) -> http.client.HTTPConnection:
    """A connection to ``scheme://host:port`` whose every read waits at most ``timeout``:
    one kept alive from an earlier answer (which the server may have closed since: a
    request that meets that is sent again), or a new one, not yet connected. An idle
    connection on which anything came meanwhile is closed, never used."""
    key = _key(scheme, host, port)
    while True:
        with _LOCK:
            idle = _IDLE.get(key)
            conn = idle.pop() if idle else None
        if conn is None:
            return _new(scheme, host, port, timeout)
        if not _has_input(conn.sock):
            break
        conn.close()
    conn.timeout = timeout
    if conn.sock is not None:
        conn.sock.settimeout(timeout)
    return conn


def _has_input(sock: socket.socket | None) -> bool:
    """Something came on an idle connection: bytes no request asked for (the rest of an
    answer, an answer sent ahead), or the server closing it. Such a connection is never
    used again: what it holds would be read as the answer to the next request."""
    if sock is None:
        return False
    if isinstance(sock, ssl.SSLSocket) and sock.pending():
        return True
    try:
        if hasattr(select, "poll"):
            poll = select.poll()
            poll.register(sock, select.POLLIN | select.POLLPRI)
            return bool(poll.poll(0))
        return bool(select.select([sock], [], [], 0)[0])
    except (OSError, ValueError):
        return True


def give_back(scheme: str, host: str, port: int, conn: http.client.HTTPConnection) -> None:
    """Keep ``conn`` for the next request to its origin (its answer was read to the end and
    did not say it closes), or close it when enough are kept."""
    key = _key(scheme, host, port)
    with _LOCK:
        idle = _IDLE.setdefault(key, [])
        if len(idle) < MAX_IDLE:
            idle.append(conn)
            return
    conn.close()

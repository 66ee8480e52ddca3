"""Requests through a proxy, with urllib3 (which speaks every kind of proxy: plain, CONNECT
tunnels, TLS to the proxy). Imported only when a proxy applies to a URL: the direct path
(:mod:`agentguard.lock.http_direct`) is ``http.client`` alone."""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    HTTPError,
    NewConnectionError,
    ProtocolError,
    ProxyError,
    ReadTimeoutError,
    SSLError,
    TimeoutError,
)

from agentguard.lock.http_answer import Answer, AnswerTooLarge
from agentguard.lock.http_direct import address, ssl_context

__all__ = [
    "HTTPError",
    "ProtocolError",
    "TimeoutError",
    "broken",
    "manager",
    "timeout",
    "too_large",
    "why",
]

_MANAGERS: dict[str, urllib3.PoolManager] = {}
_MANAGERS_LOCK = threading.Lock()


class _CachedDNS(HTTPConnection):
    response_class = Answer  # (urllib3 reads the answer with http.client's getresponse)

    def _new_conn(self) -> socket.socket:
        name = self._dns_host
        with contextlib.suppress(OSError, UnicodeError):  # else urllib3 names the failure
            self._dns_host = address(name.rstrip("."), self.port)
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


def manager(proxy: str) -> urllib3.PoolManager:
    """One pool per proxy, shared by every thread: 16 connections per host, as many as the
    analysis has workers."""
    with _MANAGERS_LOCK:
        if proxy not in _MANAGERS:
            options = {"num_pools": 16, "maxsize": 16, "retries": False}
            made = urllib3.ProxyManager(proxy, ssl_context=ssl_context(), **options)  # type: ignore[arg-type]
            made.pool_classes_by_scheme = {"http": _Pool, "https": _TLSPool}
            _MANAGERS[proxy] = made
        return _MANAGERS[proxy]


def too_large(exc: BaseException) -> bool:
    """The answer passed its cap on the wire (urllib3 wraps the error it met)."""
    return isinstance(exc, AnswerTooLarge) or any(
        isinstance(arg, AnswerTooLarge) for arg in getattr(exc, "args", ())
    )


def broken(exc: BaseException) -> bool:
    """The request was sent and the connection then failed: no answer's head within the
    read timeout, or the connection closed, reset or cut short; such a failure may not
    recur. urllib3 names every failure on a connection to a plain proxy "Unable to connect
    to proxy", the ones after the request too (a failed connect is a NewConnectionError or
    a ConnectTimeoutError in it; a tunnel the proxy refused, an OSError without an errno,
    is its answer, not a break), and wraps one during the answer's head in a ProtocolError.
    An answer that is no HTTP (a bad status line, a line too long) is what the index sends,
    not a break."""
    if isinstance(exc, (ProxyError, ProtocolError)) and len(exc.args) > 1:
        exc = exc.args[1]
    if isinstance(
        exc, (ReadTimeoutError, http.client.RemoteDisconnected, http.client.IncompleteRead)
    ):
        return True
    return isinstance(exc, OSError) and exc.errno is not None


def timeout(seconds: float) -> urllib3.Timeout:
    return urllib3.Timeout(connect=seconds, read=seconds)


def why(exc: BaseException) -> str:
    """A short reason for a failed request (no object reprs, no URLs)."""
    if isinstance(exc, NewConnectionError):
        return str(exc).rsplit("new connection: ", 1)[-1]
    if isinstance(exc, TimeoutError):
        return "timed out"
    if isinstance(exc, ProtocolError) and len(exc.args) > 1:
        inner = exc.args[1]
        if isinstance(inner, http.client.BadStatusLine) and not isinstance(
            inner, http.client.RemoteDisconnected
        ):
            return "not an HTTP/1 answer"  # (its text is the index's bytes)
        return str(inner) or type(inner).__name__
    if isinstance(exc, SSLError):
        return f"TLS: {exc}"
    if isinstance(exc, ProxyError) and broken(exc):
        inner = exc.args[1]
        return (
            "timed out" if isinstance(inner, TimeoutError) else str(inner) or type(inner).__name__
        )
    if isinstance(exc, ProxyError):
        return f"proxy: {exc.args[0] if exc.args else exc}"
    return str(exc) or type(exc).__name__

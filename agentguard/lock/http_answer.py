"""One HTTP answer read off a connection: ``http.client``'s response, stricter where a
hostile index could make it take one answer for another, or read without end. Used by
both paths (:mod:`agentguard.lock.http_direct`, :mod:`agentguard.lock.http_proxied`).

- Interim answers (``1xx``) are skipped, at most :data:`MAX_INTERIM` of them.
  ``http.client`` skips ``100 Continue`` without end, and hands a ``102``/``103`` back as
  *the* answer (status 103, no body) while the real answer waits on the connection for the
  next request, which then reads it as its own (another package's page).
- ``Content-Length`` is one plain decimal number, or the answer is a failed read
  (``http.client`` takes ``-5``, ``+5``, ``1_0``); an answer framed both by a length and by
  chunks is read as chunks and its connection is never used again.
- A chunk size is hex digits (``http.client`` takes ``-5``, which then fails outside its own
  errors, and ``0x5``, ``1_0``).
- No answer is more than its cap on the wire, status line, headers, interim answers, chunk
  lines and trailers included (a body under its cap could come in a million chunk lines of
  60 kB each, or after an endless trailer).
"""

from __future__ import annotations

import http.client
import io
import re
import socket
import threading
from collections.abc import Callable

MAX_INTERIM = 8
_MAX_LINE = 65536  # as http.client
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}")
_local = threading.local()
DEFAULT_CAP = 2 * 1024 * 1024 * 1024


class AnswerTooLarge(http.client.HTTPException):
    """The answer passed its cap on the wire."""


def wire_cap(limit: int) -> int:
    """The bytes an answer whose body may have ``limit`` bytes may take on the wire: the
    body, chunk framing (a few bytes per chunk of kilobytes) and headers."""
    return limit + limit // 16 + 256 * 1024


def expect(cap: int, watch: Callable[[socket.socket], None] | None = None) -> None:
    """The cap on the wire of the next answers read by this thread, and who watches their
    sockets from the status line on (each thread reads one answer at a time; urllib3 makes
    the answer where the caller cannot pass either)."""
    _local.cap = cap
    _local.watch = watch
    _local.socks = []


def watched() -> list[socket.socket]:
    """The sockets handed to ``watch`` since :func:`expect` (to unwatch them)."""
    socks: list[socket.socket] = getattr(_local, "socks", [])
    return socks


class _Counted(io.RawIOBase):
    def __init__(self, raw: io.RawIOBase, cap: int) -> None:
        super().__init__()
        self._raw = raw
        self._cap = cap
        self._total = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview | bytearray) -> int | None:  # type: ignore[override]
        n = self._raw.readinto(buffer)
        if n:
            self._total += n
            if self._total > self._cap:
                raise AnswerTooLarge(f"answer larger than {self._cap} bytes on the wire")
        return n

    def close(self) -> None:
        try:
            self._raw.close()
        finally:
            super().close()


class Answer(http.client.HTTPResponse):
    def __init__(
        self, sock: socket.socket, debuglevel: int = 0, method: str | None = None, url: None = None
    ) -> None:
        super().__init__(sock, debuglevel, method, url)
        watch = getattr(_local, "watch", None)
        if watch is not None:
            _local.socks.append(sock)
            watch(sock)
        raw = self.fp.detach()  # (detached: the buffered file given up never closes it)
        self.fp = io.BufferedReader(_Counted(raw, getattr(_local, "cap", DEFAULT_CAP)))

    def _read_status(self) -> tuple[str, int, str]:
        for _ in range(MAX_INTERIM + 1):
            version, status, reason = super()._read_status()  # type: ignore[misc]
            if not 100 <= status < 200:
                return str(version), int(status), str(reason)
            if status == 101:
                raise http.client.HTTPException("the index switched protocols (101)")
            http.client.parse_headers(self.fp)  # an interim answer's headers, dropped
        raise http.client.HTTPException(f"more than {MAX_INTERIM} interim answers (1xx)")

    def begin(self) -> None:
        super().begin()
        lengths = self.headers.get_all("Content-Length") or []
        if lengths:
            value = lengths[0].strip()
            if len(lengths) > 1 or not (value.isascii() and value.isdigit()):
                raise http.client.HTTPException("Content-Length is not one number")
            if self.chunked:
                self.will_close = True

    def _read_next_chunk_size(self) -> int:
        line = self.fp.readline(_MAX_LINE + 1)
        if len(line) > _MAX_LINE:
            raise http.client.LineTooLong("chunk size")
        size = line.split(b";", 1)[0].strip(b" \t\r\n")
        if not _HEX.fullmatch(size):
            raise ValueError("bad chunk size")  # (http.client: an IncompleteRead)
        return int(size, 16)

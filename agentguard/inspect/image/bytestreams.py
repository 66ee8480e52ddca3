"""Forward-only byte sources for walking tarballs: file regions, streams, gzip, zstd.

Layers are never buffered whole: a source hands out chunks, a :class:`ByteReader` keeps at
most one chunk and skips file bodies (by moving an offset on seekable plain data, by reading
and discarding otherwise). Digests are computed beside the walk (:mod:`.hashing`).
"""

from __future__ import annotations

import os
import zlib
from typing import IO, BinaryIO, Protocol, cast

import zstandard

from agentguard.inspect.image.limits import ReadFailure, cap_hit, truncated

RAW_CHUNK = 1 << 20  # compressed input / stream reads
PLAIN_CHUNK = 1 << 16  # seekable plain regions: small, because bodies are skipped by offset
OUT_CHUNK = 1 << 18  # decompressed output per call (bounds memory against bombs)

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def sniff_compression(head: bytes) -> str:
    """Compression by magic bytes (never by name or media type): "gzip", "zstd" or "none"."""
    if head.startswith(GZIP_MAGIC):
        return "gzip"
    if head.startswith(ZSTD_MAGIC):
        return "zstd"
    return "none"


class ChunkSource(Protocol):
    def chunk(self, size: int) -> bytes:
        """Up to ``size`` bytes; ``b""`` only at the end."""
        ...

    def skip(self, n: int) -> int:
        """Move forward up to ``n`` bytes; returns how far it moved (less only at the end)."""
        ...


class Feedable(Protocol):
    def feed(self, data: bytes) -> None: ...


class Budget:
    """Bytes a whole image may make us traverse (decompressed); shared by its layers."""

    def __init__(
        self, limit: int | None, cap: str = "image-bytes", what: str = "layer data"
    ) -> None:
        self.limit = limit
        self.used = 0
        self.cap = cap
        self.what = what

    def charge(self, n: int) -> None:
        self.used += n
        if self.limit is not None and self.used > self.limit:
            field = "max_" + self.cap.replace("-", "_")
            raise cap_hit(
                self.cap, f"more than {self.limit} bytes of {self.what} (the {field} cap)"
            )


class FdRegion:
    """Bytes ``[start, start + size)`` of an open file, read with ``pread`` (no shared offset)."""

    def __init__(self, fd: int, start: int, size: int) -> None:
        self._fd = fd
        self._pos = start
        self._end = start + size

    def chunk(self, size: int) -> bytes:
        n = min(size, self._end - self._pos)
        if n <= 0:
            return b""
        try:
            data = os.pread(self._fd, n, self._pos)
        except OSError as exc:
            raise ReadFailure("read-error", f"reading failed: {exc}") from exc
        if not data:
            self._end = self._pos  # the file is shorter than declared
        self._pos += len(data)
        return data

    def skip(self, n: int) -> int:
        n = max(0, min(n, self._end - self._pos))
        self._pos += n
        return n


class StreamSource:
    """A non-seekable file object (e.g. the engine's ``image.save()`` chunks)."""

    def __init__(self, fileobj: BinaryIO) -> None:
        self._f = fileobj

    def chunk(self, size: int) -> bytes:
        try:
            data = self._f.read(size)
        except ReadFailure:
            raise
        except Exception as exc:  # whatever the stream raises is a failed read, recorded
            raise ReadFailure(
                "stream-read-error", f"reading the stream failed: {type(exc).__name__}: {exc}"
            ) from exc
        return bytes(data) if data else b""

    def skip(self, n: int) -> int:
        return _skip_by_reading(self, n, RAW_CHUNK)


class SubSource:
    """The next ``size`` bytes of a :class:`ByteReader` (a member of an outer tar stream)."""

    def __init__(self, outer: ByteReader, size: int, head: bytes = b"") -> None:
        self._outer = outer
        self._left = size
        self._head = head

    def chunk(self, size: int) -> bytes:
        if self._head:
            data, self._head = self._head, b""
            return data
        n = min(size, self._left)
        if n <= 0:
            return b""
        data = self._outer.read_some(n)
        self._left -= len(data)
        return data

    def skip(self, n: int) -> int:
        return _skip_by_reading(self, n, RAW_CHUNK)

    def drain(self) -> None:
        while self.chunk(RAW_CHUNK):
            pass


class HashingSource:
    """Passes chunks through and feeds them to a hasher; skipping must read to hash."""

    def __init__(self, inner: ChunkSource, hasher: Feedable) -> None:
        self._inner = inner
        self._hasher = hasher

    def chunk(self, size: int) -> bytes:
        data = self._inner.chunk(size)
        if data:
            self._hasher.feed(data)
        return data

    def skip(self, n: int) -> int:
        return _skip_by_reading(self, n, RAW_CHUNK)


class GzipSource:
    """gzip (multi-member) decompressed with ``zlib.decompressobj(31)``, output bounded per call."""

    def __init__(self, raw: ChunkSource) -> None:
        self._raw = raw
        self._d = zlib.decompressobj(31)
        self._input = b""
        self._finished = False

    def chunk(self, size: int) -> bytes:
        size = min(size, OUT_CHUNK)
        while not self._finished:
            d = self._d
            if d.eof:
                rest = d.unused_data or self._raw.chunk(RAW_CHUNK)
                if not rest:
                    self._finished = True
                elif not rest.strip(b"\0"):
                    self._drain_padding()
                else:  # another gzip member follows
                    self._d = zlib.decompressobj(31)
                    self._input = rest
                continue
            data = d.unconsumed_tail or self._input or self._raw.chunk(RAW_CHUNK)
            self._input = b""
            if not data:
                raise truncated("the gzip stream ends before its end marker")
            try:
                out = d.decompress(data, size)
            except zlib.error as exc:
                raise ReadFailure("corrupt-gzip", f"gzip data is corrupt: {exc}") from exc
            if out:
                return out
        return b""

    def _drain_padding(self) -> None:
        """Zero padding after the last member is allowed; anything else after it is not."""
        while True:
            more = self._raw.chunk(RAW_CHUNK)
            if not more:
                self._finished = True
                return
            if more.strip(b"\0"):
                raise ReadFailure("corrupt-gzip", "data after the gzip stream's zero padding")

    def skip(self, n: int) -> int:
        return _skip_by_reading(self, n, OUT_CHUNK)


class _RawFile:
    """The minimal file interface zstandard's stream reader calls."""

    def __init__(self, raw: ChunkSource) -> None:
        self._raw = raw

    def read(self, size: int = -1) -> bytes:
        return self._raw.chunk(RAW_CHUNK if size < 0 else size)


class ZstdSource:
    """zstd frames (all of them) through zstandard's stream reader."""

    def __init__(self, raw: ChunkSource, max_window: int) -> None:
        dctx = zstandard.ZstdDecompressor(max_window_size=max_window)
        self._reader = dctx.stream_reader(
            cast("IO[bytes]", _RawFile(raw)), read_size=RAW_CHUNK, read_across_frames=True
        )

    def chunk(self, size: int) -> bytes:
        try:
            data: bytes = self._reader.read(min(size, OUT_CHUNK))
        except zstandard.ZstdError as exc:
            raise ReadFailure("corrupt-zstd", f"zstd data is corrupt: {exc}") from exc
        return data

    def skip(self, n: int) -> int:
        return _skip_by_reading(self, n, OUT_CHUNK)


def _skip_by_reading(src: ChunkSource, n: int, step: int) -> int:
    done = 0
    while done < n:
        data = src.chunk(min(step, n - done))
        if not data:
            break
        done += len(data)
    return done


class ByteReader:
    """Exact reads and skips over a chunk source, holding at most one chunk."""

    def __init__(self, source: ChunkSource, budget: Budget, chunk_size: int) -> None:
        self._src = source
        self._budget = budget
        self._chunk = chunk_size
        self._buf = b""
        self._pos = 0
        self.offset = 0  # bytes consumed so far

    def read(self, n: int) -> bytes:
        pos = self._pos
        end = pos + n
        if end <= len(self._buf):
            self._pos = end
            self.offset += n
            return self._buf[pos:end]
        parts = [self._buf[pos:]]
        have = len(parts[0])
        self._buf, self._pos = b"", 0
        while have < n:
            data = self._pull(max(self._chunk, n - have))
            if not data:
                self.offset += have
                raise truncated(f"the data ends {n - have} bytes short")
            take = n - have
            if len(data) > take:
                parts.append(data[:take])
                self._buf, self._pos = data, take
            else:
                parts.append(data)
            have += min(len(data), take)
        self.offset += n
        return b"".join(parts)

    def read_some(self, n: int) -> bytes:
        """Between 1 and ``n`` bytes, ``b""`` at the end."""
        avail = len(self._buf) - self._pos
        if avail <= 0:
            data = self._pull(max(n, self._chunk))
            if not data:
                return b""
            self._buf, self._pos, avail = data, 0, len(data)
        take = min(n, avail)
        out = self._buf[self._pos : self._pos + take]
        self._pos += take
        self.offset += take
        if self._pos >= len(self._buf):
            self._buf, self._pos = b"", 0
        return out

    def skip(self, n: int) -> None:
        avail = len(self._buf) - self._pos
        if n <= avail:
            self._pos += n
            self.offset += n
            return
        self._buf, self._pos = b"", 0
        self.offset += avail
        need = n - avail
        self._budget.charge(need)
        moved = self._src.skip(need)
        self.offset += moved
        if moved < need:
            raise truncated(f"the data ends {need - moved} bytes short")

    def at_end(self) -> bool:
        if self._pos < len(self._buf):
            return False
        data = self._pull(self._chunk)
        if not data:
            return True
        self._buf, self._pos = data, 0
        return False

    def _pull(self, size: int) -> bytes:
        data = self._src.chunk(size)
        if data:
            self._budget.charge(len(data))
        return data

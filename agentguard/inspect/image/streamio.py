"""A file-like view of an iterator of byte chunks (docker-py's ``image.save()`` generator)."""

from __future__ import annotations

import io
from collections.abc import Iterable, Iterator


class IterStream(io.RawIOBase):
    """Non-seekable, read-only; holds at most one chunk of the iterator."""

    def __init__(self, chunks: Iterable[bytes]) -> None:
        super().__init__()
        self._it: Iterator[bytes] = iter(chunks)
        self._buf = b""

    def readable(self) -> bool:
        return True

    def readinto(self, b: bytearray | memoryview) -> int:  # type: ignore[override]
        while not self._buf:
            try:
                self._buf = bytes(next(self._it))
            except StopIteration:
                return 0
        n = min(len(b), len(self._buf))
        b[:n] = self._buf[:n]
        self._buf = self._buf[n:]
        return n

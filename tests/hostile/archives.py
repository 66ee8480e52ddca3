"""Hostile tarballs written byte by byte: what ``tarfile`` would refuse or tidy up.

Names are raw bytes (non-UTF-8, ``..``, absolute, NUL-free but otherwise anything), sizes
may be declared larger than the data (octal or GNU base-256), links may point anywhere,
and bombs are built from repeated compressed frames, so a few hundred kilobytes inflate
to gigabytes without the test ever holding the inflated bytes.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

import zstandard

BLOCK = 512
END = bytes(2 * BLOCK)

TYPES = {
    "file": b"0",
    "hardlink": b"1",
    "symlink": b"2",
    "chr": b"3",
    "blk": b"4",
    "dir": b"5",
    "fifo": b"6",
    "longname": b"L",
    "longlink": b"K",
    "pax": b"x",
    "sparse": b"S",
    "unknown": b"Z",  # no such type: readers must skip its body by its size
}


BODY_KINDS = frozenset({"file", "longname", "unknown"})  # the others are header-only


def _octal(value: int, width: int) -> bytes:
    if value >= 8 ** (width - 1):  # GNU base-256 for what octal cannot hold
        return bytes([0x80]) + value.to_bytes(width - 1, "big")
    return f"{value:0{width - 1}o}".encode() + b"\0"


def header(
    name: bytes,
    *,
    kind: str = "file",
    size: int = 0,
    link: bytes = b"",
    mode: int = 0o644,
    devmajor: int = 0,
    devminor: int = 0,
    magic: bytes = b"ustar\x0000",
) -> bytes:
    """One 512-byte header. ``name``/``link`` are cut at 100 bytes (use a long-name entry)."""
    h = bytearray(BLOCK)
    h[0:100] = name[:100].ljust(100, b"\0")
    h[100:108] = _octal(mode, 8)
    h[108:116] = _octal(0, 8)
    h[116:124] = _octal(0, 8)
    h[124:136] = _octal(size, 12)
    h[136:148] = _octal(1_700_000_000, 12)
    h[156:157] = TYPES[kind]
    h[157:257] = link[:100].ljust(100, b"\0")
    h[257:265] = magic
    h[329:337] = _octal(devmajor, 8)
    h[337:345] = _octal(devminor, 8)
    h[148:156] = b" " * 8
    h[148:156] = f"{sum(h):06o}".encode() + b"\0 "
    return bytes(h)


def pad(data: bytes) -> bytes:
    return data + bytes(-len(data) % BLOCK)


@dataclass(frozen=True)
class Raw:
    """One hostile entry: raw name and link, a declared size and the body actually written."""

    name: bytes
    kind: str = "file"
    body: bytes = b""
    link: bytes = b""
    declared: int | None = None  # None: len(body)
    long_name: bool = False  # write the name as a GNU long-name ('L') entry first
    devmajor: int = 0
    devminor: int = 0

    def encode(self) -> bytes:
        out = b""
        if self.long_name or len(self.name) > 100:
            out += header(b"././@LongLink", kind="longname", size=len(self.name) + 1)
            out += pad(self.name + b"\0")
        size = len(self.body) if self.declared is None else self.declared
        out += header(
            self.name,
            kind=self.kind,
            size=size,
            link=self.link,
            devmajor=self.devmajor,
            devminor=self.devminor,
        )
        if self.kind in BODY_KINDS:
            out += pad(self.body)
        return out

    @property
    def honest(self) -> bool:
        """Whether a correct reader sees the next entry where it was written (a body kind's
        declared size matches its body; header-only kinds have no body whatever they say)."""
        return self.kind not in BODY_KINDS or self.declared in (None, len(self.body))


def raw_tar(entries: Iterable[Raw], *, end: bool = True) -> bytes:
    data = b"".join(e.encode() for e in entries)
    return data + END if end else data


# -- bombs ---------------------------------------------------------------------------------


def zstd_bomb(files: int, each: int, *, trailing: int = 0) -> bytes:
    """A zstd layer of ``files`` files of ``each`` zero bytes (declared honestly), then
    ``trailing`` zero bytes hidden after the end marker. Frames concatenate, so one
    compressed frame of zeros is repeated: a few kilobytes per inflated gigabyte."""
    z = zstandard.ZstdCompressor(level=3)
    return _bomb(z.compress, files, each, trailing)


def gzip_bomb(files: int, each: int, *, trailing: int = 0) -> bytes:
    """The same as a multi-member gzip layer (deflate tops out near 1:1000)."""
    return _bomb(_gzip, files, each, trailing)


def _gzip(data: bytes) -> bytes:
    co = zlib.compressobj(9, zlib.DEFLATED, 31)
    return co.compress(data) + co.flush()


_ZEROS_STEP = 1 << 26  # 64 MiB of zeros per repeated frame


def _zeros(compress: Callable[[bytes], bytes], n: int) -> list[bytes]:
    if n <= 0:
        return []
    full, rest = divmod(n, _ZEROS_STEP)
    out = [compress(bytes(_ZEROS_STEP))] * full if full else []
    if rest:
        out.append(compress(bytes(rest)))
    return out


def _bomb(compress: Callable[[bytes], bytes], files: int, each: int, trailing: int) -> bytes:
    zeros = _zeros(compress, each)
    parts: list[bytes] = []
    for i in range(files):
        parts.append(compress(header(f"app/bomb-{i}.bin".encode(), size=each)))
        parts += zeros
        if each % BLOCK:
            parts.append(compress(bytes(-each % BLOCK)))
    parts.append(compress(END))
    parts += _zeros(compress, trailing)
    return b"".join(parts)


def entries_bomb(count: int) -> bytes:
    """A zstd layer of ``count`` empty files (one repeated compressed block of headers)."""
    z = zstandard.ZstdCompressor(level=3)
    per = 4096
    block = b"".join(header(f"x/{i:07d}".encode()) for i in range(per))
    frame = z.compress(block)
    full, rest = divmod(count, per)
    parts = [frame] * full
    if rest:
        parts.append(z.compress(block[: rest * BLOCK]))
    parts.append(z.compress(END))
    return b"".join(parts)


def names(entries: Sequence[Raw]) -> list[bytes]:
    return [e.name for e in entries]

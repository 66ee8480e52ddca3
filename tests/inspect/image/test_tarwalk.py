"""The header walker reads what GNU tar and the engine read, and rejects what they must not."""

from __future__ import annotations

import io
import tarfile

import pytest

from agentguard.inspect.image.bytestreams import Budget, ByteReader, StreamSource
from agentguard.inspect.image.limits import ReadFailure
from agentguard.inspect.image.tarwalk import TarWalker, display, normalise
from tests.inspect.image.tarballs import E, d, f, hard, layer, sym

Row = tuple[str | None, str, int, str | None]


def walk(data: bytes, *, max_entries: int = 1000, max_header: int = 1 << 20) -> list[Row]:
    reader = ByteReader(StreamSource(io.BytesIO(data)), Budget(None), 4096)
    walker = TarWalker(reader, max_entries=max_entries, max_header_bytes=max_header)
    return [(e.name, e.kind, e.size, e.link) for e in walker]


def patch(data: bytes, at: int, field: bytes) -> bytes:
    """Overwrite header bytes at ``at`` and fix the header's checksum."""
    block = (at // 512) * 512
    buf = bytearray(data)
    buf[at : at + len(field)] = field
    header = buf[block : block + 512]
    header[148:156] = b" " * 8
    buf[block + 148 : block + 156] = b"%06o\0 " % sum(header)
    return bytes(buf)


def test_gnu_long_names_and_long_link_targets() -> None:
    long_dir = "app/" + "/".join(["deep-folder-name"] * 8)
    data = layer([f(long_dir + "/CLAUDE.md", "x"), sym("app/link", "/" + long_dir + "/CLAUDE.md")])
    assert walk(data) == [
        (long_dir + "/CLAUDE.md", "file", 1, None),
        ("app/link", "symlink", 0, "/" + long_dir + "/CLAUDE.md"),
    ]


def test_pax_path_linkpath_and_non_ascii_names() -> None:
    long_target = "/opt/" + "t" * 200
    data = layer([f("app/notes-ü.md", "hi"), hard("app/h", long_target)], tarfile.PAX_FORMAT)
    assert walk(data) == [
        ("app/notes-ü.md", "file", 2, None),
        ("app/h", "hardlink", 0, long_target),
    ]


def test_ustar_prefix_field_joins_the_name() -> None:
    name = "srv/" + "p" * 90 + "/" + "q" * 60 + "/file.py"
    data = layer([f(name, "1")], tarfile.USTAR_FORMAT)
    assert walk(data) == [(name, "file", 1, None)]


def test_base256_size_is_read() -> None:
    data = layer([f("a.bin", b"z" * 700), f("b.txt", "ok")], tarfile.GNU_FORMAT)
    size_field = b"\x80" + (700).to_bytes(11, "big")
    assert walk(patch(data, 124, size_field)) == [
        ("a.bin", "file", 700, None),
        ("b.txt", "file", 2, None),
    ]


def test_header_only_types_have_no_body_whatever_their_size_field_says() -> None:
    # Go's archive/tar (the engine) reads no body for dirs, links, devices and fifos.
    data = layer([d("app"), f("app/x", "1")])
    assert walk(patch(data, 124, b"%011o\0" % 512)) == [
        ("app", "dir", 0, None),
        ("app/x", "file", 1, None),
    ]


def test_devices_and_fifos_are_other() -> None:
    data = layer([E("dev/null", kind="chr"), E("run/pipe", kind="fifo")])
    assert walk(data) == [("dev/null", "other", 0, None), ("run/pipe", "other", 0, None)]


def test_names_are_normalised_and_escapes_rejected() -> None:
    assert normalise("./app/./x//y/") == ("app/x/y", None)
    assert normalise("/etc/passwd") == ("etc/passwd", None)
    assert normalise("app/../etc/shadow") == ("etc/shadow", None)
    assert normalise("./") == ("", None)
    assert normalise("foo..bar/baz..") == ("foo..bar/baz..", None)
    assert normalise("../../etc/passwd") == (None, "the name escapes the image root with '..'")
    assert normalise("app/../../x") == (None, "the name escapes the image root with '..'")
    assert normalise("a\x00b") == (None, "the name contains a NUL byte")


def test_non_utf8_names_are_kept_exact_and_displayed_escaped() -> None:
    info = tarfile.TarInfo("x")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT) as tar:
        info.name = b"app/caf\xe9.txt".decode("utf-8", "surrogateescape")
        tar.addfile(info)
    rows = walk(buf.getvalue())
    assert rows == [("app/caf\udce9.txt", "file", 0, None)]
    assert display(rows[0][0] or "") == "app/caf\\xe9.txt"


def test_missing_end_marker_is_truncation_not_a_clean_end() -> None:
    data = layer([f("a", "1"), f("b", "2")])
    cut = data[: 512 * 4]  # both entries, no zero blocks
    with pytest.raises(ReadFailure) as err:
        walk(cut)
    assert (err.value.code, err.value.reason) == (
        "truncated",
        "the tar data ends after 2 entries, inside or before a header, without the "
        "end-of-archive marker",
    )


def test_body_cut_short_is_truncation() -> None:
    data = layer([f("big", b"x" * 5000)])
    with pytest.raises(ReadFailure) as err:
        walk(data[:3000])
    assert err.value.code == "truncated"


def test_a_lone_zero_block_at_the_end_is_accepted() -> None:
    data = layer([f("a", "1")])
    assert walk(data[: 512 * 3]) == [("a", "file", 1, None)]


def test_zero_block_followed_by_data_is_corrupt() -> None:
    data = layer([f("a", "1")])
    broken = data[:1024] + bytes(512) + data[:512] + bytes(1024)
    with pytest.raises(ReadFailure) as err:
        walk(broken)
    assert err.value.code == "corrupt-tar"


def test_garbage_without_ustar_magic_fails_the_checksum() -> None:
    with pytest.raises(ReadFailure) as err:
        walk(b"\x01" * 2048)
    assert (err.value.code, err.value.reason) == (
        "corrupt-tar",
        "not a tar header (bad checksum) after 0 entries",
    )


def test_v7_header_with_a_valid_checksum_is_read() -> None:
    data = layer([f("old.txt", "v7")])
    v7 = patch(data, 257, bytes(8))  # no magic, version: a pre-POSIX header
    assert walk(v7) == [("old.txt", "file", 2, None)]


def test_extension_header_larger_than_the_cap_is_a_named_cap() -> None:
    data = layer([f("p" * 3000, "x")], tarfile.PAX_FORMAT)
    with pytest.raises(ReadFailure) as err:
        walk(data, max_header=1024)
    assert err.value.code == "cap-header-bytes"


def test_entries_per_layer_cap() -> None:
    data = layer([f(f"f{i}", "x") for i in range(5)])
    with pytest.raises(ReadFailure) as err:
        walk(data, max_entries=3)
    assert (err.value.code, err.value.reason) == (
        "cap-entries-per-layer",
        "more than 3 entries in one layer",
    )

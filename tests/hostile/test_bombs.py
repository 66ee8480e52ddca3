"""Decompression and entry bombs: a small file that inflates to many gigabytes is stopped at
a cap, the cap is named in a failed source, and time and memory stay bounded.

The bombs are generated here from repeated compressed frames (a few hundred kilobytes on
disk). Where the default caps would take long to reach, the test lowers the cap through
:class:`Limits`; the CLI runs use the defaults and measure the child's peak memory.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from pathlib import Path

import pytest

from agentguard.findings import Source
from agentguard.inspect.image import Limits, read_image_archive, read_image_stream
from tests.hostile.archives import END, entries_bomb, gzip_bomb, header, zstd_bomb
from tests.hostile.promises import failed, only, run_agentguard, within
from tests.inspect.image.tarballs import OneWay, config, tar_members

MiB = 1 << 20
GiB = 1 << 30
CAP_REMEDY = (
    "Treat the input as hostile, or trim it: agentguard stops at this cap to bound time and "
    "memory, and did not read past it."
)
FAKE_DIFF_ID = "sha256:" + "0" * 64  # the bombs' real diff_ids would take gigabytes to hash


def saved_with(blob: bytes, *, tag: str = "bomb:1") -> tuple[bytes, str]:
    """A docker-save tarball around one (compressed) layer blob; returns it and the layer path."""
    cfg = config([FAKE_DIFF_ID])
    name = hashlib.sha256(cfg).hexdigest() + ".json"
    layer_path = "0" * 64 + "/layer.tar"
    manifest = json.dumps([{"Config": name, "RepoTags": [tag], "Layers": [layer_path]}]).encode()
    return tar_members([("manifest.json", manifest), (name, cfg), (layer_path, blob)]), layer_path


def cap_source(layer_path: str, code: str, reason: str) -> Source:
    return Source.failed(
        "image-layer",
        f"layer 0 {FAKE_DIFF_ID}",
        f"layer 0 ({layer_path}): {reason}",
        error_code=code,
        retryable=False,
    )


def test_zstd_bomb_of_16_gib_stops_at_the_default_image_cap_through_the_cli(tmp_path: Path) -> None:
    data, layer_path = saved_with(zstd_bomb(1, 16 * GiB))
    path = tmp_path / "bomb.tar"
    path.write_bytes(data)
    assert path.stat().st_size < MiB
    run = run_agentguard("inspect", str(path), "--format", "json", "--no-lock", cwd=tmp_path)
    run.check_no_crash()
    assert run.code == 3
    report = json.loads(run.stdout)
    [problem] = [s for s in report["sources"] if s["status"] == "failed"]
    assert problem == {
        "kind": "image-layer",
        "name": f"layer 0 {FAKE_DIFF_ID}",
        "status": "failed",
        "reason": f"layer 0 ({layer_path}): more than 8589934592 bytes of layer data "
        "(the max_image_bytes cap)",
        "error_code": "cap-image-bytes",
        "retryable": False,
        "remedy": CAP_REMEDY,
    }
    assert run.seconds < 60 and run.max_rss_mib < 400, (run.seconds, run.max_rss_mib)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bomb.tar"]


def test_gzip_bomb_inflating_file_by_file_stops_at_the_cap(tmp_path: Path) -> None:
    """Eight honest 64 MiB files: the reader must inflate to skip them, and stops at 192 MiB."""
    data, layer_path = saved_with(gzip_bomb(8, 64 * MiB))
    path = tmp_path / "bomb.tar"
    path.write_bytes(data)
    limits = Limits(max_image_bytes=192 * MiB)
    start = time.monotonic()
    with within(60):
        read = read_image_archive(path, target="bomb.tar", limits=limits)
        stream = read_image_stream(OneWay(data), target="bomb", limits=limits)  # type: ignore[arg-type]
    expected = cap_source(
        layer_path,
        "cap-image-bytes",
        f"more than {192 * MiB} bytes of layer data (the max_image_bytes cap)",
    )
    assert failed(read.sources) == [expected]
    assert failed(stream.sources) == [expected]
    assert time.monotonic() - start < 30


def test_gigabytes_hidden_after_the_end_marker_count_against_the_cap(tmp_path: Path) -> None:
    """The tar ends after one small file; 16 GiB of zeros follow inside the same zstd layer.
    Hashing them for the diff_id once cost 22 s uncapped; now they are charged to the cap."""
    data, layer_path = saved_with(zstd_bomb(1, 100, trailing=16 * GiB))
    path = tmp_path / "bomb.tar"
    path.write_bytes(data)
    limits = Limits(max_image_bytes=256 * MiB)
    with within(30):
        read = read_image_archive(path, target="bomb.tar", limits=limits)
        stream = read_image_stream(OneWay(data), target="bomb", limits=limits)  # type: ignore[arg-type]
    expected = cap_source(
        layer_path,
        "cap-image-bytes",
        f"more than {256 * MiB} bytes of layer data (the max_image_bytes cap)",
    )
    assert failed(read.sources) == [expected]
    assert failed(stream.sources) == [expected]


def test_entry_bomb_stops_at_the_entry_caps(tmp_path: Path) -> None:
    data, layer_path = saved_with(entries_bomb(300_000))
    path = tmp_path / "bomb.tar"
    path.write_bytes(data)
    with within(60):
        per_layer = read_image_archive(
            path, target="bomb.tar", limits=Limits(max_entries_per_layer=50_000)
        )
        per_image = read_image_archive(
            path, target="bomb.tar", limits=Limits(max_entries_per_image=20_000)
        )
    assert failed(per_layer.sources) == [
        cap_source(layer_path, "cap-entries-per-layer", "more than 50000 entries in one layer")
    ]
    assert failed(per_image.sources) == [
        cap_source(layer_path, "cap-entries-per-image", "more than 20000 entries in the image")
    ]


def test_compressed_saved_tarball_skipping_a_huge_member_stops_at_the_stream_cap(
    tmp_path: Path,
) -> None:
    """A zstd-compressed `docker save` whose one member (of an unknown kind, so only skipped)
    claims and holds 256 GiB of zeros: 8 MB on disk once took 17 s, and grew linearly."""
    import zstandard

    z = zstandard.ZstdCompressor(level=3)
    zeros = z.compress(bytes(GiB))
    head = header(b"junk", kind="unknown", size=256 * GiB)
    blob = z.compress(head) + zeros * 256 + z.compress(END)
    path = tmp_path / "image.tar.zst"
    path.write_bytes(blob)
    assert path.stat().st_size < 16 * MiB
    run = run_agentguard(
        "inspect", str(path), "--kind", "archive", "--format", "json", "--no-lock", cwd=tmp_path
    )
    run.check_no_crash()
    assert run.code == 3
    report = json.loads(run.stdout)
    problems = [
        (s["kind"], s["error_code"], s["reason"])
        for s in report["sources"]
        if s["status"] == "failed"
    ]
    assert problems == [
        (
            "image-archive",
            "cap-stream-bytes",
            "more than 17179869184 bytes of the saved image stream (the max_stream_bytes cap)",
        ),
        (
            "image-layout",
            "layout-unknown",
            "neither index.json nor manifest.json found: not a docker save tarball or OCI layout",
        ),
    ]
    assert run.seconds < 30, run.seconds


def test_layers_before_the_config_stop_at_the_cap_and_leave_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In a stream, a layer that comes before any config must be remembered until the
    config arrives; a bomb there stops at the image cap, and nothing is left on disk.
    (The reader's temporary folder is this test's own: the shared one also holds what
    tests running beside it make, a lock's scratch folder among them.)"""
    private = tmp_path / "tmp"
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    cfg = config([FAKE_DIFF_ID])
    name = hashlib.sha256(cfg).hexdigest() + ".json"
    layer_path = "a" * 64 + "/layer.tar"
    manifest = json.dumps([{"Config": name, "RepoTags": ["x:1"], "Layers": [layer_path]}]).encode()
    big = header(b"app/big.bin", size=200 * MiB) + bytes(200 * MiB) + END
    data = tar_members([(layer_path, big), (name, cfg), ("manifest.json", manifest)])
    with within(60):
        read = read_image_stream(
            OneWay(data, step=1 << 20),  # type: ignore[arg-type]
            target="stream",
            limits=Limits(max_image_bytes=64 * MiB),
        )
    assert failed(read.sources) == [
        cap_source(
            layer_path.replace("0" * 64, "a" * 64),
            "cap-image-bytes",
            f"more than {64 * MiB} bytes of layer data (the max_image_bytes cap)",
        )
    ]
    assert os.listdir(private) == []
    assert only([s for s in read.sources if s.kind == "image-config"]).status.value == "ok"

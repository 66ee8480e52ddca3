"""Property-based: generated hostile layers and OCI layouts never crash the reader, never
write anything, stay within time, and every failure is a well-formed failed source.

Unlike the byte-damage property of the image-reader tests, these generators know the
formats: they build tar entries with escaping and non-UTF-8 names, links to anywhere,
device and unknown entry types, sizes declared far beyond the data, compressed and cut
layers; and OCI layouts with nested, missing, forged and ill-typed documents.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agentguard.findings import SourceStatus
from agentguard.inspect.image import ImageRead, Limits, read_image_archive, read_image_stream
from agentguard.inspect.image.tarwalk import normalise
from tests.hostile.archives import TYPES, Raw, raw_tar
from tests.hostile.profiles import hostile
from tests.hostile.promises import failed, snapshot, within
from tests.inspect.image.tarballs import OneWay, compress, config, docker_save, tar_members

pytestmark = pytest.mark.fuzz

# Small caps so that every example finishes fast, whatever it claims.
LIMITS = Limits(
    max_image_bytes=8 << 20,
    max_stream_bytes=16 << 20,
    max_entries_per_layer=2000,
    max_header_bytes=64 << 10,
    max_file_bytes=4096,
)
SEGMENTS = [
    "app",
    "..",
    ".",
    "",
    "etc",
    "usr",
    "lib",
    "site-packages",
    "x-1.dist-info",
    "METADATA",
    "CLAUDE.md",
    ".mcp.json",
    ".claude",
    "settings.json",
    "docker.sock",
    ".wh.app",
    ".wh..wh..opq",
    "a" * 120,
    "\udcff\udcfe",  # non-UTF-8 bytes (surrogate-escaped)
    "\u00e9t\u00e9",
    "agent.py",
]


@st.composite
def raw_names(draw: st.DrawFn) -> bytes:
    parts = draw(st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=6))
    lead = draw(st.sampled_from(["", "/", "./", "../", "//"]))
    text = lead + "/".join(parts) + draw(st.sampled_from(["", "/"]))
    return text.encode("utf-8", "surrogateescape").replace(b"\0", b"") or b"x"


@st.composite
def entries(draw: st.DrawFn) -> Raw:
    kind = draw(st.sampled_from(sorted(set(TYPES) - {"longname", "longlink", "pax", "sparse"})))
    body = draw(st.binary(max_size=300)) if kind in ("file", "unknown") else b""
    declared = draw(st.sampled_from([None, None, None, 0, 1, 511, 513, 1 << 20, 1 << 33, 1 << 62]))
    return Raw(
        name=draw(raw_names()),
        kind=kind,
        body=body,
        link=draw(raw_names()) if kind in ("symlink", "hardlink") else b"",
        declared=declared,
        long_name=draw(st.booleans()),
        devmajor=draw(st.integers(0, 300)),
    )


def check_read(read: ImageRead) -> None:
    failures = failed(read.sources)  # each one checked against the promise
    for code in sorted({s.error_code or "" for s in failures}):
        event(f"failed: {code}")
    if not failures:
        event("read completely")
    for s in read.sources:
        assert s.status in (SourceStatus.OK, SourceStatus.FAILED, SourceStatus.SKIPPED)
    if read.facts is None:
        assert failures, "no facts and no failed source: an empty result"


def read_both(path: Path, data: bytes) -> list[ImageRead]:
    """The seekable reader and the one-pass stream reader over the same bytes."""
    with within(20):
        reads = [
            read_image_archive(path, target="generated", limits=LIMITS),
            read_image_stream(OneWay(data, step=4096), target="generated", limits=LIMITS),  # type: ignore[arg-type]
        ]
    for read in reads:
        check_read(read)
    return reads


@hostile("layer-entries")
@given(
    items=st.lists(entries(), max_size=12),
    how=st.sampled_from(["none", "gzip", "zstd"]),
    end=st.booleans(),
    cut=st.one_of(st.none(), st.integers(0, 4000)),
)
def test_hostile_layer_entries(
    tmp_path: Path, items: list[Raw], how: str, end: bool, cut: int | None
) -> None:
    tar = raw_tar(items, end=end)
    saved = docker_save([tar], compression=[how])  # diff_id of the tar as generated
    members = saved.members
    if cut is not None:
        members = [(n, b[:cut] if n.endswith("layer.tar") else b) for n, b in members]
    data = tar_members(members)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    path = work / "image.tar"
    path.write_bytes(data)
    before = snapshot(tmp_path)
    reads = read_both(path, data)
    assert snapshot(tmp_path) == before
    honest = all(x.honest for x in items)  # else an entry may sit inside another's body
    escaping = [
        e.name for e in items if normalise(e.name.decode("utf-8", "surrogateescape"))[0] is None
    ]
    for read in reads:
        if not honest:
            continue
        if read.complete:  # never lies: a complete read saw no name leaving the root
            assert not escaping, escaping


# -- OCI layouts ---------------------------------------------------------------------------

JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=10), inner, max_size=3)
    ),
    max_leaves=10,
)
MEDIA = [
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.layer.v1.tar+gzip",
    "text/plain",
    None,
]
PLATFORMS = [
    None,
    {"os": "linux", "architecture": "amd64"},
    {"os": "linux", "architecture": "arm64", "variant": "v8"},
    {"os": "unknown", "architecture": "unknown"},
    {"os": 5, "architecture": ["x"]},
    "linux/amd64",
]


class Layout:
    """Blobs by digest plus the documents that name them (possibly wrongly)."""

    def __init__(self) -> None:
        self.files: dict[str, bytes] = {}

    def put(self, data: bytes, *, store: bool = True, forge: bool = False) -> str:
        digest = "sha256:" + hashlib.sha256(data).hexdigest()
        if store:
            self.files["blobs/sha256/" + digest[7:]] = data + (b" " if forge else b"")
        return digest


@st.composite
def layouts(draw: st.DrawFn) -> dict[str, bytes]:
    lay = Layout()

    def descriptor(doc: bytes, depth: int) -> Any:
        choice = draw(st.sampled_from(["ok", "ok", "missing", "forged", "junk"]))
        if choice == "junk":
            return draw(JSONISH)
        digest = lay.put(doc, store=choice != "missing", forge=choice == "forged")
        desc: dict[str, Any] = {"digest": digest, "size": len(doc)}
        media = draw(st.sampled_from(MEDIA))
        if media is not None:
            desc["mediaType"] = media
        platform = draw(st.sampled_from(PLATFORMS))
        if platform is not None:
            desc["platform"] = platform
        return desc

    def layer_blob() -> bytes:
        tar = raw_tar(draw(st.lists(entries(), max_size=4)))
        return compress(tar, draw(st.sampled_from(["none", "gzip", "zstd"])))

    def manifest(depth: int) -> bytes:
        if depth < 6 and draw(st.integers(0, 3)) == 0:  # a nested index
            inner = [
                descriptor(manifest(depth + 1), depth + 1) for _ in range(draw(st.integers(0, 3)))
            ]
            return json.dumps({"schemaVersion": 2, "manifests": inner}).encode()
        if draw(st.integers(0, 6)) == 0:
            return json.dumps(draw(JSONISH)).encode()
        layers = [layer_blob() for _ in range(draw(st.integers(0, 3)))]
        cfg = config(
            ["sha256:" + hashlib.sha256(b).hexdigest() for b in layers],
            workdir=draw(st.sampled_from(["/app", "", "/", "../../etc", "app", "/app/../.."])),
            user=draw(st.sampled_from(["", "root", "1000", "$UID"])),
        )
        if draw(st.integers(0, 5)) == 0:
            cfg = json.dumps(draw(JSONISH)).encode()
        return json.dumps(
            {
                "schemaVersion": 2,
                "config": descriptor(cfg, depth),
                "layers": [descriptor(b, depth) for b in layers],
            }
        ).encode()

    top = [descriptor(manifest(0), 0) for _ in range(draw(st.integers(0, 3)))]
    lay.files["index.json"] = json.dumps({"schemaVersion": 2, "manifests": top}).encode()
    lay.files["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
    return lay.files


@hostile("oci-layouts")
@given(files=layouts(), platform=st.sampled_from([None, "linux/amd64", "linux/arm64", "x"]))
def test_generated_oci_layouts(
    tmp_path: Path, files: dict[str, bytes], platform: str | None
) -> None:
    root = tmp_path / "layout"
    for name, data in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(data)
    tar = tmp_path / "layout.tar"
    data = tar_members(sorted(files.items()))
    tar.write_bytes(data)
    before = snapshot(tmp_path)
    with within(20):
        for target in (root, tar):
            check_read(
                read_image_archive(target, target="generated", platform=platform, limits=LIMITS)
            )
        stream = OneWay(data, step=8192)
        check_read(
            read_image_stream(stream, target="generated", platform=platform, limits=LIMITS)  # type: ignore[arg-type]
        )
    assert snapshot(tmp_path) == before

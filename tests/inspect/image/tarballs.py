"""Writers for the tarballs the image-reader tests read: layers, docker save, OCI layouts.

Everything is built in memory or in the test's tmp_path; layer bytes are exact, so tests can
truncate, corrupt or reorder them at will.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard

OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
OCI_INDEX = "application/vnd.oci.image.index.v1+json"
OCI_CONFIG = "application/vnd.oci.image.config.v1+json"
LAYER_TYPES = {
    "none": "application/vnd.oci.image.layer.v1.tar",
    "gzip": "application/vnd.oci.image.layer.v1.tar+gzip",
    "zstd": "application/vnd.oci.image.layer.v1.tar+zstd",
}


def sha(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class E:
    """One layer entry. ``kind``: file, dir, symlink, hardlink, chr, fifo."""

    name: str
    data: bytes = b""
    kind: str = "file"
    link: str = ""
    mode: int | None = None


def f(name: str, data: str | bytes = b"", mode: int | None = None) -> E:
    return E(name, data.encode() if isinstance(data, str) else data, "file", mode=mode)


def d(name: str) -> E:
    return E(name, kind="dir")


def sym(name: str, target: str) -> E:
    return E(name, kind="symlink", link=target)


def hard(name: str, target: str) -> E:
    return E(name, kind="hardlink", link=target)


_TYPES = {
    "file": tarfile.REGTYPE,
    "dir": tarfile.DIRTYPE,
    "symlink": tarfile.SYMTYPE,
    "hardlink": tarfile.LNKTYPE,
    "chr": tarfile.CHRTYPE,
    "fifo": tarfile.FIFOTYPE,
}


def layer(entries: Iterable[E], fmt: int = tarfile.GNU_FORMAT) -> bytes:
    """A plain layer tar (with the end-of-archive marker, padded as tarfile pads)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt, encoding="utf-8") as tar:
        for e in entries:
            info = tarfile.TarInfo(e.name)
            info.type = _TYPES[e.kind]
            info.mode = e.mode if e.mode is not None else (0o755 if e.kind == "dir" else 0o644)
            info.mtime = 1_700_000_000
            info.linkname = e.link
            if e.kind == "file":
                info.size = len(e.data)
                tar.addfile(info, io.BytesIO(e.data))
            else:
                tar.addfile(info)
    return buf.getvalue()


def compress(data: bytes, how: str) -> bytes:
    if how == "gzip":
        return gzip.compress(data, compresslevel=1, mtime=0)
    if how == "zstd":
        return zstandard.ZstdCompressor().compress(data)
    return data


def metadata(name: str, version: str, requires: Sequence[str] = ()) -> bytes:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return ("\n".join(lines) + "\n\nA long description.\n").encode()


def config(
    diff_ids: Sequence[str],
    *,
    workdir: str = "/app",
    user: str = "",
    env: Sequence[str] = ("PATH=/usr/bin:/bin",),
    history: Sequence[str | None] | None = None,
    arch: str = "amd64",
    os: str = "linux",
    variant: str | None = None,
    cmd: Sequence[str] | None = None,
) -> bytes:
    """An image config; ``history`` gives created_by per layer (None: an empty-layer step)."""
    hist: list[dict[str, Any]] = []
    for step in history if history is not None else [f"step {i}" for i in range(len(diff_ids))]:
        hist.append(
            {"created_by": "ENV X=1", "empty_layer": True} if step is None else {"created_by": step}
        )
    doc: dict[str, Any] = {
        "architecture": arch,
        "os": os,
        "config": {"User": user, "WorkingDir": workdir, "Env": list(env)},
        "history": hist,
        "rootfs": {"type": "layers", "diff_ids": list(diff_ids)},
    }
    if variant:
        doc["variant"] = variant
    if cmd is not None:
        doc["config"]["Cmd"] = list(cmd)
    return json.dumps(doc).encode()


def tar_members(
    members: Sequence[tuple[str, bytes]], *, links: Sequence[tuple[str, str]] = ()
) -> bytes:
    """An outer tarball with the members in the given order (and symlink members)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return buf.getvalue()


@dataclass
class Saved:
    """A classic ``docker save`` image: what was written and the digests tests assert."""

    tar: bytes
    config: bytes
    diff_ids: list[str]
    layer_paths: list[str]
    members: list[tuple[str, bytes]] = field(default_factory=list)

    @property
    def image_id(self) -> str:
        return sha(self.config)

    def write(self, path: Path) -> Path:
        path.write_bytes(self.tar)
        return path


def docker_save(
    layers: Sequence[bytes],
    *,
    compression: Sequence[str] | None = None,
    order: str = "lexical",
    tags: Sequence[str] = ("demo:1",),
    **config_kw: Any,
) -> Saved:
    """Classic layout. ``order="lexical"`` sorts members by name as the engine's save does
    (so the config lands among the layers); ``"manifest-first"`` puts the JSON first."""
    diff_ids = [sha(x) for x in layers]
    cfg = config(diff_ids, **config_kw)
    cfg_name = hashlib.sha256(cfg).hexdigest() + ".json"
    members: list[tuple[str, bytes]] = []
    paths: list[str] = []
    for i, data in enumerate(layers):
        layer_id = hashlib.sha256(f"layer-{i}-{diff_ids[i]}".encode()).hexdigest()
        how = compression[i] if compression else "none"
        members.append((f"{layer_id}/VERSION", b"1.0"))
        members.append((f"{layer_id}/layer.tar", compress(data, how)))
        paths.append(f"{layer_id}/layer.tar")
    manifest = json.dumps([{"Config": cfg_name, "RepoTags": list(tags), "Layers": paths}]).encode()
    members += [(cfg_name, cfg), ("manifest.json", manifest)]
    if order == "lexical":
        members.sort(key=lambda m: m[0])
    else:
        members.sort(key=lambda m: (not m[0].endswith(".json"), m[0]))
    return Saved(tar_members(members), cfg, diff_ids, paths, members)


@dataclass
class Oci:
    """An OCI image layout: blobs by path plus ``index.json`` and ``oci-layout``."""

    files: dict[str, bytes] = field(default_factory=dict)
    manifests: list[dict[str, Any]] = field(default_factory=list)

    def blob(self, data: bytes) -> str:
        digest = sha(data)
        self.files["blobs/sha256/" + digest.split(":")[1]] = data
        return digest

    def image(
        self,
        layers: Sequence[bytes],
        compression: Sequence[str] | None = None,
        *,
        platform: dict[str, str] | None = None,
        annotations: dict[str, str] | None = None,
        **config_kw: Any,
    ) -> dict[str, Any]:
        """Add an image; returns its manifest descriptor (also listed in index.json)."""
        descs = []
        for i, data in enumerate(layers):
            how = compression[i] if compression else "none"
            blob = compress(data, how)
            descs.append(
                {"mediaType": LAYER_TYPES[how], "digest": self.blob(blob), "size": len(blob)}
            )
        cfg = config([sha(x) for x in layers], **config_kw)
        manifest = {
            "schemaVersion": 2,
            "mediaType": OCI_MANIFEST,
            "config": {"mediaType": OCI_CONFIG, "digest": self.blob(cfg), "size": len(cfg)},
            "layers": descs,
        }
        data = json.dumps(manifest).encode()
        desc: dict[str, Any] = {
            "mediaType": OCI_MANIFEST,
            "digest": self.blob(data),
            "size": len(data),
        }
        if platform:
            desc["platform"] = platform
        if annotations:
            desc["annotations"] = annotations
        self.manifests.append(desc)
        return desc

    def index_blob(self, descriptors: Sequence[dict[str, Any]]) -> dict[str, Any]:
        """A nested index holding ``descriptors``; returns its descriptor."""
        data = json.dumps(
            {"schemaVersion": 2, "mediaType": OCI_INDEX, "manifests": list(descriptors)}
        ).encode()
        return {"mediaType": OCI_INDEX, "digest": self.blob(data), "size": len(data)}

    def finish(self, top: Sequence[dict[str, Any]] | None = None) -> dict[str, bytes]:
        index = {
            "schemaVersion": 2,
            "mediaType": OCI_INDEX,
            "manifests": list(top or self.manifests),
        }
        self.files["index.json"] = json.dumps(index).encode()
        self.files["oci-layout"] = b'{"imageLayoutVersion": "1.0.0"}'
        return self.files

    def write_dir(self, root: Path, top: Sequence[dict[str, Any]] | None = None) -> Path:
        for name, data in self.finish(top).items():
            (root / name).parent.mkdir(parents=True, exist_ok=True)
            (root / name).write_bytes(data)
        return root

    def write_tar(
        self, path: Path, top: Sequence[dict[str, Any]] | None = None, *, index_first: bool = False
    ) -> Path:
        files = self.finish(top)
        names = sorted(files, key=lambda n: (not (index_first and n == "index.json"), n))
        path.write_bytes(tar_members([(n, files[n]) for n in names]))
        return path


class OneWay:
    """A non-seekable reader over bytes, handing out short reads (as a socket does)."""

    def __init__(self, data: bytes, step: int = 65_536) -> None:
        self._data = memoryview(data)
        self._pos = 0
        self._step = step

    def read(self, n: int = -1) -> bytes:
        n = self._step if n < 0 else min(n, self._step)
        out = bytes(self._data[self._pos : self._pos + n])
        self._pos += len(out)
        return out

    def seekable(self) -> bool:
        return False

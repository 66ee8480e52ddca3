"""Write small OCI image layouts (folder) for tests: one manifest per platform, gzip/zstd layers."""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import zstandard


@dataclass
class Platform:
    os: str
    architecture: str
    layers: Sequence[tuple[Mapping[str, str], str]]  # (files, "gzip" | "zstd" | "none")
    config: Mapping[str, Any] = field(default_factory=dict)


def _layer_tar(files: Mapping[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for rel, text in sorted(files.items()):
            data = text.encode()
            info = tarfile.TarInfo(rel)
            info.size = len(data)
            info.mode = 0o644
            tf.addfile(info, io.BytesIO(data))
    return buf.getvalue()


class _Blobs:
    def __init__(self, root: Path) -> None:
        self.dir = root / "blobs" / "sha256"
        self.dir.mkdir(parents=True, exist_ok=True)

    def put(self, data: bytes, media_type: str) -> dict[str, Any]:
        digest = hashlib.sha256(data).hexdigest()
        (self.dir / digest).write_bytes(data)
        return {"mediaType": media_type, "digest": f"sha256:{digest}", "size": len(data)}


def write_layout(root: Path, platforms: Sequence[Platform]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    blobs = _Blobs(root)
    manifests = []
    for p in platforms:
        layers, diff_ids = [], []
        for files, compression in p.layers:
            raw = _layer_tar(files)
            diff_ids.append(f"sha256:{hashlib.sha256(raw).hexdigest()}")
            if compression == "gzip":
                layers.append(
                    blobs.put(
                        gzip.compress(raw, mtime=0), "application/vnd.oci.image.layer.v1.tar+gzip"
                    )
                )
            elif compression == "zstd":
                layers.append(
                    blobs.put(
                        zstandard.ZstdCompressor().compress(raw),
                        "application/vnd.oci.image.layer.v1.tar+zstd",
                    )
                )
            else:
                layers.append(blobs.put(raw, "application/vnd.oci.image.layer.v1.tar"))
        config = {
            "architecture": p.architecture,
            "os": p.os,
            "config": dict(p.config),
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
            "history": [{"created_by": f"COPY layer {i}"} for i in range(len(layers))],
        }
        cfg = blobs.put(json.dumps(config).encode(), "application/vnd.oci.image.config.v1+json")
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": cfg,
            "layers": layers,
        }
        desc = blobs.put(
            json.dumps(manifest).encode(), "application/vnd.oci.image.manifest.v1+json"
        )
        desc["platform"] = {"os": p.os, "architecture": p.architecture}
        manifests.append(desc)
    index = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.index.v1+json",
        "manifests": manifests,
    }
    (root / "index.json").write_text(json.dumps(index))
    return root

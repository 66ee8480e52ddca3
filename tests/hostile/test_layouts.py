"""Hostile OCI layouts: nesting, thousands of candidates, missing and forged blobs, broken JSON.

Digests are verified wherever the format gives one (manifests, configs and blobs always;
layers by their blob digest), and a blob that does not match is refused by name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentguard.inspect.image import read_image_archive
from tests.hostile.promises import failed, within
from tests.inspect.image.tarballs import Oci, f, layer

AMD64 = {"os": "linux", "architecture": "amd64"}


def _image(oci: Oci) -> dict[str, Any]:
    return oci.image(
        [layer([f("app/a.py", "a = 1\n")]), layer([f("app/b.py", "b = 2\n")])],
        ["gzip", "none"],
        platform=AMD64,
    )


def _blob(digest: str) -> str:
    return "blobs/sha256/" + digest.split(":")[1]


def problems(path: Path) -> list[tuple[str, str | None, str | None]]:
    with within(20):
        read = read_image_archive(path, target=path.name)
    return [(s.kind, s.error_code, s.reason) for s in failed(read.sources)]


def test_indexes_nested_past_the_cap_are_a_named_failure(tmp_path: Path) -> None:
    oci = Oci()
    desc = _image(oci)
    for _ in range(12):
        desc = oci.index_blob([desc])
    assert problems(oci.write_tar(tmp_path / "deep.tar", [desc])) == [
        ("image-layout", "cap-index-depth", "OCI indexes nested deeper than 4")
    ]


def test_thousands_of_candidates_are_never_resolved_by_taking_the_first(tmp_path: Path) -> None:
    oci = Oci()
    descs = [
        {
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "digest": f"sha256:{i:064x}",
            "size": 10,
            "platform": AMD64,
        }
        for i in range(3000)
    ]
    [(kind, code, reason)] = problems(oci.write_tar(tmp_path / "wide.tar", descs))
    assert (kind, code) == ("image-platform", "platform-ambiguous")
    assert reason is not None
    assert reason.startswith("3000 images match platform linux/amd64 (the default): ")
    assert reason.endswith(", ... and 2990 more; not choosing one")  # one readable line
    assert len(reason) < 2000


def test_missing_and_forged_blobs(tmp_path: Path) -> None:
    oci = Oci()
    desc = _image(oci)
    manifest = json.loads(oci.finish()[_blob(desc["digest"])])
    layer0, layer1 = (_blob(x["digest"]) for x in manifest["layers"])
    config = _blob(manifest["config"]["digest"])

    root = oci.write_dir(tmp_path / "missing-layer")
    (root / layer0).unlink()
    [(kind, code, reason)] = problems(root)
    assert (kind, code, reason) == (
        "image-layer",
        "blob-missing",
        f"layer 0 ({layer0}): {layer0} is not in the folder",
    )

    root = oci.write_dir(tmp_path / "forged-layer")
    (root / layer1).write_bytes((root / layer1).read_bytes().replace(b"b = 2", b"b = 3"))
    [(kind, code, reason)] = problems(root)
    assert (kind, code) == ("image-layer", "digest-mismatch")
    assert reason is not None and reason.startswith(f"layer 1 ({layer1}): {layer1} has digest ")

    root = oci.write_dir(tmp_path / "missing-config")
    (root / config).unlink()
    assert problems(root) == [
        (
            "image-config",
            "blob-missing",
            f"the config {manifest['config']['digest']} is not in the archive",
        )
    ]

    root = oci.write_dir(tmp_path / "forged-manifest")
    blob = root / _blob(desc["digest"])
    blob.write_bytes(blob.read_bytes().replace(b'"schemaVersion": 2', b'"schemaVersion": 3'))
    [(kind, code, reason)] = problems(root)
    assert (kind, code) == ("image-manifest", "digest-mismatch")
    assert reason is not None and reason.endswith(f"expected {desc['digest']}")

    root = oci.write_dir(tmp_path / "missing-manifest")
    (root / _blob(desc["digest"])).unlink()
    assert problems(root) == [
        (
            "image-manifest",
            "blob-missing",
            f"manifest {desc['digest']} is not in the archive",
        )
    ]


def test_broken_index_json(tmp_path: Path) -> None:
    cases = {
        "not-utf8": b"\xff{not json",
        "deep": b"[" * 100_000 + b"]" * 100_000,
        "no-manifests": b'{"schemaVersion": 2}',
        "manifests-not-objects": b'{"manifests": [1, "x", null, []]}',
        "digest-not-a-string": b'{"manifests": [{"digest": 5, "platform": {"os": "linux", "architecture": "amd64"}}]}',
    }
    got = {}
    for name, data in cases.items():
        root = Oci().write_dir(tmp_path / name)
        (root / "index.json").write_bytes(data)
        got[name] = [(k, c) for k, c, _ in problems(root)]
    assert got == {
        "not-utf8": [("image-layout", "invalid-json")],
        "deep": [("image-layout", "invalid-json")],
        "no-manifests": [("image-layout", "invalid-index")],
        "manifests-not-objects": [("image-platform", "no-image")],
        "digest-not-a-string": [("image-manifest", "invalid-manifest")],
    }

"""OCI layouts (folder and tar), gzip and zstd layers, platform choice, nested indexes."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.facts import FileContent, LayerInfo
from agentguard.inspect.image import ImageRead, Limits, read_image_archive
from tests.inspect.image.tarballs import Oci, d, docker_save, f, layer, sha, tar_members

BASE = layer([d("app"), f("app/CLAUDE.md", "base"), f("app/old.txt", "old")])
TOP = layer([f("app/.wh.old.txt"), f("app/.mcp.json", "{}")])
AMD = {"os": "linux", "architecture": "amd64"}
ARM = {"os": "linux", "architecture": "arm64", "variant": "v8"}


def failed(read: ImageRead) -> list[tuple[str, str | None, str | None]]:
    return [
        (s.kind, s.error_code, s.reason) for s in read.sources if s.status is SourceStatus.FAILED
    ]


def test_oci_folder_with_gzip_and_zstd_layers(tmp_path: Path) -> None:
    oci = Oci()
    desc = oci.image(
        [BASE, TOP], ["gzip", "zstd"], platform=AMD, history=["COPY . /app", "RUN rm old.txt"]
    )
    read = read_image_archive(oci.write_dir(tmp_path / "layout"), target="layout")
    manifest = json.loads(oci.files["blobs/sha256/" + desc["digest"].split(":")[1]])
    blobs = [x["digest"] for x in manifest["layers"]]
    assert read.sources == (
        Source.ok("image-archive", "layout", "OCI image layout folder"),
        Source.ok(
            "image-manifest",
            desc["digest"],
            f"oci layout: {desc['digest']} (linux/amd64), 2 layers",
        ),
        Source.ok("image-config", manifest["config"]["digest"], "working directory /app"),
        Source.ok(
            "image-layer",
            f"layer 0 {sha(BASE)}",
            f"3 entries, gzip (blobs/sha256/{blobs[0][7:]}), blob digest verified",
        ),
        Source.ok(
            "image-layer",
            f"layer 1 {sha(TOP)}",
            f"2 entries, zstd (blobs/sha256/{blobs[1][7:]}), blob digest verified",
        ),
    )
    assert read.facts is not None
    assert read.facts.layers == (
        LayerInfo(
            0, sha(BASE), "COPY . /app", "application/vnd.oci.image.layer.v1.tar+gzip", "gzip", 3
        ),
        LayerInfo(
            1, sha(TOP), "RUN rm old.txt", "application/vnd.oci.image.layer.v1.tar+zstd", "zstd", 2
        ),
    )
    assert [e.path for e in read.facts.workdir_entries] == [
        "/app",
        "/app/.mcp.json",
        "/app/CLAUDE.md",
    ]
    assert read.facts.contents == (
        FileContent("/app/.mcp.json", sha(TOP), b"{}"),
        FileContent("/app/CLAUDE.md", sha(BASE), b"base"),
    )
    assert (read.layout, read.manifest_digest, read.platform) == (
        "oci",
        desc["digest"],
        "linux/amd64",
    )


def test_oci_tar_reads_like_the_folder(tmp_path: Path) -> None:
    oci = Oci()
    oci.image([BASE, TOP], ["zstd", "none"], platform=AMD)
    folder = read_image_archive(oci.write_dir(tmp_path / "layout"), target="t")
    tar = read_image_archive(oci.write_tar(tmp_path / "layout.tar"), target="t")
    assert tar.facts == folder.facts
    assert tar.complete and folder.complete


def test_compressed_saved_tarball_goes_through_the_stream_reader(tmp_path: Path) -> None:
    saved = docker_save([BASE, TOP])
    plain = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    path = tmp_path / "i.tar.gz"
    path.write_bytes(gzip.compress(saved.tar))
    packed = read_image_archive(path, target="i")
    assert packed.facts == plain.facts
    assert packed.complete


def multi_platform(tmp_path: Path, *platforms: dict[str, str]) -> tuple[Path, list[str]]:
    """A tar with one nested index holding an image per platform plus an attestation."""
    oci = Oci()
    digests = []
    for p in platforms:
        digests.append(
            oci.image([BASE], platform=p, arch=p["architecture"], variant=p.get("variant"))[
                "digest"
            ]
        )
    # buildx attaches attestation manifests: never candidates
    att = oci.image(
        [layer([f("sbom.json", "{}")])], platform={"os": "unknown", "architecture": "unknown"}
    )
    att["annotations"] = {"vnd.docker.reference.type": "attestation-manifest"}
    nested = oci.index_blob(oci.manifests)
    return oci.write_tar(tmp_path / "multi.tar", [nested]), digests


def test_multi_platform_index_picks_amd64_by_default_and_arm64_on_request(tmp_path: Path) -> None:
    path, _ = multi_platform(tmp_path, AMD, ARM)
    default = read_image_archive(path, target="m")
    arm = read_image_archive(path, target="m", platform="linux/arm64")
    arm_v8 = read_image_archive(path, target="m", platform="linux/arm64/v8")
    assert (default.platform, arm.platform, arm_v8.platform) == (
        "linux/amd64",
        "linux/arm64/v8",
        "linux/arm64/v8",
    )
    assert default.facts is not None and default.facts.config.architecture == "amd64"
    assert arm.facts is not None and arm.facts.config.architecture == "arm64"
    assert default.complete and arm.complete


def test_platform_not_found_names_the_candidates(tmp_path: Path) -> None:
    path, (amd, arm) = multi_platform(tmp_path, AMD, ARM)
    read = read_image_archive(path, target="m", platform="linux/s390x")
    assert read.facts is None
    assert failed(read) == [
        (
            "image-platform",
            "platform-not-found",
            f"no image for platform linux/s390x; candidates: {amd} (linux/amd64), {arm} (linux/arm64/v8)",
        )
    ]


def test_two_images_for_one_platform_are_ambiguous_never_the_first(tmp_path: Path) -> None:
    oci = Oci()
    one = oci.image([BASE], platform=AMD, annotations={"org.opencontainers.image.ref.name": "one"})
    two = oci.image([TOP], platform=AMD, annotations={"org.opencontainers.image.ref.name": "two"})
    read = read_image_archive(oci.write_dir(tmp_path / "l"), target="l")
    assert read.facts is None
    assert one["digest"] != two["digest"]
    assert failed(read) == [
        (
            "image-platform",
            "platform-ambiguous",
            "2 images match platform linux/amd64 (the default): one (linux/amd64), two (linux/amd64); not choosing one",
        )
    ]


def test_a_single_image_of_another_platform_is_read_by_default(tmp_path: Path) -> None:
    oci = Oci()
    oci.image([BASE], platform=ARM, arch="arm64", variant="v8")
    read = read_image_archive(oci.write_dir(tmp_path / "l"), target="l")
    assert (read.platform, read.complete) == ("linux/arm64/v8", True)
    wrong = read_image_archive(oci.write_dir(tmp_path / "l"), target="l", platform="linux/amd64")
    assert [c for _, c, _ in failed(wrong)] == ["platform-not-found"]


def test_nested_indexes_past_the_depth_cap_fail(tmp_path: Path) -> None:
    oci = Oci()
    top = [oci.index_blob([oci.index_blob([oci.image([BASE], platform=AMD)])])]
    path = oci.write_dir(tmp_path / "l", top)
    assert read_image_archive(path, target="l").complete
    read = read_image_archive(path, target="l", limits=Limits(max_index_depth=1))
    assert failed(read) == [
        ("image-layout", "cap-index-depth", "OCI indexes nested deeper than 1"),
    ]


def test_newer_engine_save_with_index_json_and_manifest_json(tmp_path: Path) -> None:
    # Engines 25+ write an OCI layout plus a classic manifest.json pointing into blobs/.
    oci = Oci()
    desc = oci.image(
        [BASE, TOP],
        platform=AMD,
        annotations={"io.containerd.image.name": "docker.io/library/demo:1"},
    )
    files = oci.finish()
    manifest = json.loads(files["blobs/sha256/" + desc["digest"].split(":")[1]])
    files["manifest.json"] = json.dumps(
        [
            {
                "Config": "blobs/sha256/" + manifest["config"]["digest"][7:],
                "RepoTags": ["demo:1"],
                "Layers": ["blobs/sha256/" + x["digest"][7:] for x in manifest["layers"]],
            }
        ]
    ).encode()
    path = tmp_path / "new.tar"
    path.write_bytes(tar_members(sorted(files.items())))
    read = read_image_archive(path, target="new.tar")
    assert (read.layout, read.repo_tags, read.complete) == (
        "oci",
        ("docker.io/library/demo:1",),
        True,
    )
    # Without index.json the classic manifest.json (blob paths, digests checked) is used.
    del files["index.json"]
    path.write_bytes(tar_members(sorted(files.items())))
    classic = read_image_archive(path, target="new.tar")
    assert (classic.layout, classic.repo_tags, classic.complete) == (
        "docker-save",
        ("demo:1",),
        True,
    )
    assert classic.facts is not None and read.facts is not None
    assert classic.facts.workdir_entries == read.facts.workdir_entries
    assert [s.reason for s in classic.sources if s.kind == "image-layer"] == [
        f"3 entries, none (blobs/sha256/{manifest['layers'][0]['digest'][7:]}), blob digest verified, diff_id verified",
        f"2 entries, none (blobs/sha256/{manifest['layers'][1]['digest'][7:]}), blob digest verified, diff_id verified",
    ]


def test_missing_and_tampered_blobs(tmp_path: Path) -> None:
    oci = Oci()
    desc = oci.image([BASE, TOP], ["gzip", "none"], platform=AMD)
    manifest = json.loads(oci.files["blobs/sha256/" + desc["digest"][7:]])
    gz, plain = (x["digest"] for x in manifest["layers"])
    root = oci.write_dir(tmp_path / "l")
    (root / "blobs/sha256" / plain[7:]).write_bytes(TOP.replace(b"{}", b"[]"))
    (root / "blobs/sha256" / gz[7:]).unlink()
    read = read_image_archive(root, target="l")
    assert failed(read) == [
        (
            "image-layer",
            "blob-missing",
            f"layer 0 (blobs/sha256/{gz[7:]}): blobs/sha256/{gz[7:]} is not in the folder",
        ),
        (
            "image-layer",
            "digest-mismatch",
            f"layer 1 (blobs/sha256/{plain[7:]}): blobs/sha256/{plain[7:]} has digest "
            f"{sha(TOP.replace(b'{}', b'[]'))}, the manifest says {plain}",
        ),
    ]


def test_folder_symlink_out_of_the_layout_is_refused(tmp_path: Path) -> None:
    oci = Oci()
    desc = oci.image([BASE], platform=AMD)
    root = oci.write_dir(tmp_path / "l")
    manifest = json.loads(oci.files["blobs/sha256/" + desc["digest"][7:]])
    blob = root / "blobs/sha256" / manifest["layers"][0]["digest"][7:]
    outside = tmp_path / "outside.tar"
    outside.write_bytes(blob.read_bytes())
    blob.unlink()
    os.symlink(outside, blob)
    read = read_image_archive(root, target="l")
    assert [(k, c) for k, c, _ in failed(read)] == [("image-layer", "link-outside-image")]

"""Hand-made hostile images: each is read safely, and every problem is a named failed source.

The archives are generated here (never committed): names that escape the root, absolute
names, links that loop or leave the image, device files, duplicate entries, sizes declared
far beyond the data, non-UTF-8 names, and a real CLI run over each to prove that nothing is
written outside and that the exit code says "incomplete".
"""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

from agentguard.findings import Source
from agentguard.inspect.facts import FileContent, FileEntry
from agentguard.inspect.image import read_image_archive, read_image_stream
from tests.hostile.archives import Raw, raw_tar
from tests.hostile.promises import failed, run_agentguard, snapshot, within
from tests.inspect.image.tarballs import Oci, OneWay, docker_save, f, layer, tar_members

HOSTILE_ENTRY = (
    "Treat the image as hostile (an entry leads outside the image root) and rebuild it from "
    "a Dockerfile you trust."
)


def _entry(path: str, digest: str, kind: str, size: int = 0, link: str | None = None) -> FileEntry:
    return FileEntry(path, 0, digest, kind, size, 0o644, link)


def test_escaping_names_links_devices_and_duplicates_in_one_layer(tmp_path: Path) -> None:
    outside = tmp_path / f"outside-{uuid.uuid4().hex[:8]}"
    escape = f"../../../../../../../..{outside}/pwned".encode()
    saved = docker_save(
        [
            raw_tar(
                [
                    Raw(b"app", kind="dir"),
                    Raw(escape, body=b"written outside?"),
                    Raw(b"/app/abs.py", body=b"import os\n"),  # absolute: inside the image
                    Raw(b"app/../../escape", body=b"y"),
                    Raw(b"app/link", kind="symlink", link=b"/etc/shadow"),
                    Raw(b"app/hl", kind="hardlink", link=b"../../etc/passwd"),
                    Raw(b"app/loop", kind="symlink", link=b"loop"),
                    Raw(b"app/sda", kind="blk", devmajor=8, declared=1 << 40),
                    Raw(b"app/fifo", kind="fifo", declared=1 << 30),
                    Raw(b"app/CLAUDE.md", body=b"first"),
                    Raw(b"app/CLAUDE.md", body=b"second"),  # the later entry wins, as applied
                ]
            )
        ]
    )
    image = tmp_path / "image"
    image.mkdir()
    path = saved.write(image / "i.tar")
    before = snapshot(tmp_path)
    read = read_image_archive(path, target="i.tar")
    digest = saved.diff_ids[0]
    where = f"(layer 0 {digest})"
    assert failed(read.sources) == [
        Source.failed(
            "image-file",
            "/" + escape.decode(),
            f"the name escapes the image root with '..' {where}",
            error_code="entry-name-rejected",
            retryable=False,
        ),
        Source.failed(
            "image-file",
            "/app/../../escape",
            f"the name escapes the image root with '..' {where}",
            error_code="entry-name-rejected",
            retryable=False,
        ),
        Source.failed(
            "image-file",
            "/app/hl",
            f"a hard link to '../../etc/passwd' leads outside the image root {where}",
            error_code="link-outside-image",
            retryable=False,
        ),
    ]
    assert failed(read.sources)[0].remedy == HOSTILE_ENTRY
    assert read.facts is not None
    assert read.facts.workdir_entries == (
        _entry("/app", digest, "dir"),
        _entry("/app/CLAUDE.md", digest, "file", 6),
        _entry("/app/abs.py", digest, "file", 10),
        _entry("/app/fifo", digest, "other"),
        _entry("/app/hl", digest, "hardlink", link="../../etc/passwd"),
        _entry("/app/link", digest, "symlink", link="/etc/shadow"),
        _entry("/app/loop", digest, "symlink", link="loop"),
        _entry("/app/sda", digest, "other"),
    )
    assert read.facts.contents == (
        FileContent("/app/CLAUDE.md", digest, b"second"),
        FileContent("/app/abs.py", digest, b"import os\n"),
    )
    assert snapshot(tmp_path) == before  # nothing extracted, nothing written
    assert not outside.exists()

    run = run_agentguard("inspect", str(path), "--format", "json", "--no-lock", cwd=image)
    run.check_no_crash()
    assert run.code == 3
    report = json.loads(run.stdout)
    assert report["complete"] is False
    assert [(s["name"], s["error_code"]) for s in report["sources"] if s["status"] == "failed"] == [
        ("/" + escape.decode(), "entry-name-rejected"),
        ("/app/../../escape", "entry-name-rejected"),
        ("/app/hl", "link-outside-image"),
    ]
    assert sorted(os.listdir(image)) == ["i.tar"]
    assert not outside.exists()


def test_non_utf8_names_are_shown_escaped_and_the_output_stays_utf8(tmp_path: Path) -> None:
    saved = docker_save(
        [
            raw_tar(
                [
                    Raw(b"app", kind="dir"),
                    Raw(b"app/\xff\xfe-agent.py", body=b"x = 1\n"),
                    Raw(b"app/ok", kind="symlink", link=b"\xc3\x28-target"),
                    Raw(b"app/\xe2\x82/../../../x\xff", body=b"escape"),
                ]
            )
        ]
    )
    path = saved.write(tmp_path / "i.tar")
    read = read_image_archive(path, target="i.tar")
    digest = saved.diff_ids[0]
    assert failed(read.sources) == [
        Source.failed(
            "image-file",
            "/app/\\xe2\\x82/../../../x\\xff",
            f"the name escapes the image root with '..' (layer 0 {digest})",
            error_code="entry-name-rejected",
            retryable=False,
        )
    ]
    assert read.facts is not None
    assert [(e.path, e.link_target) for e in read.facts.workdir_entries] == [
        ("/app", None),
        ("/app/ok", "\\xc3(-target"),
        ("/app/\\xff\\xfe-agent.py", None),
    ]
    for fmt in ("json", "text", "sarif"):
        run = run_agentguard("inspect", str(path), "--format", fmt, "--no-lock", cwd=tmp_path)
        run.check_no_crash()  # run_agentguard decodes stdout as strict UTF-8
        assert run.code == 3, (fmt, run.stderr)


def test_link_loops_and_links_out_of_the_saved_tarball_itself(tmp_path: Path) -> None:
    """Members of the saved tarball that are links: followed inside it only, a bounded number
    of hops; a loop or an escape is a missing member, never a hang or a read outside."""
    saved = docker_save([layer([f("app/a.py", "a = 1\n")])])
    members = [(n, b) for n, b in saved.members if n != "manifest.json"]
    manifest = dict(saved.members)["manifest.json"]
    looped = tar_members(
        members, links=[("manifest.json", "m2.json"), ("m2.json", "manifest.json")]
    )
    escaping = tar_members(members, links=[("manifest.json", "../../../../etc/hostname")])
    deep = tar_members(
        [*members, ("m0.json", manifest)],
        links=[("manifest.json", "m20.json")]
        + [(f"m{i}.json", f"m{i - 1}.json") for i in range(20, 0, -1)],
    )
    layout_unknown = Source.failed(
        "image-layout",
        "index.json / manifest.json",
        "neither index.json nor manifest.json found: not a docker save tarball or OCI layout",
        error_code="layout-unknown",
        retryable=False,
    )
    for name, data in (("looped", looped), ("escaping", escaping), ("deep", deep)):
        path = tmp_path / f"{name}.tar"
        path.write_bytes(data)
        with within(10):
            read = read_image_archive(path, target=name)
        assert failed(read.sources) == [layout_unknown], name
        assert read.facts is None


def test_oci_folder_links_outside_and_fifos_are_refused_without_blocking(tmp_path: Path) -> None:
    oci = Oci()
    desc = oci.image(
        [layer([f("app/a.py", "a = 1\n")])], platform={"os": "linux", "architecture": "amd64"}
    )
    root = oci.write_dir(tmp_path / "layout")
    manifest_blob = root / "blobs" / "sha256" / desc["digest"].split(":")[1]
    manifest_blob.unlink()
    manifest_blob.symlink_to("/etc/hostname")  # a blob leading outside the folder
    with within(10):
        read = read_image_archive(root, target="layout")
    assert read.facts is None
    [problem] = failed(read.sources)
    assert (problem.kind, problem.error_code, problem.reason) == (
        "image-manifest",
        "link-outside-image",
        f"blobs/sha256/{desc['digest'].split(':')[1]} links outside the image folder",
    )

    fifo_root = oci.write_dir(tmp_path / "fifo-layout")
    (fifo_root / "index.json").unlink()
    os.mkfifo(fifo_root / "index.json")  # opening a FIFO for reading would block forever
    with within(10):
        read = read_image_archive(fifo_root, target="fifo-layout")
    [problem] = failed(read.sources)
    assert (problem.kind, problem.error_code, problem.reason) == (
        "image-layout",
        "blob-missing",
        "index.json is not a regular file",
    )


def test_sizes_declared_far_beyond_the_data(tmp_path: Path) -> None:
    """A member or an entry that claims exabytes: the cap or the cut is named, nothing is
    allocated for the claim."""
    lay = raw_tar(
        [Raw(b"app", kind="dir"), Raw(b"app/huge.bin", body=b"0123456789", declared=1 << 60)]
    )
    saved = docker_save([lay])
    path = saved.write(tmp_path / "i.tar")
    with within(20):
        read = read_image_archive(path, target="i.tar")
    digest = saved.diff_ids[0]
    assert failed(read.sources) == [
        Source.failed(
            "image-layer",
            f"layer 0 {digest}",
            f"layer 0 ({saved.layer_paths[0]}): more than 8589934592 bytes of layer data "
            "(the max_image_bytes cap)",
            error_code="cap-image-bytes",
            retryable=False,
        )
    ]
    # The saved tarball itself claims a member of 2**40 bytes and ends after 10.
    outer = Raw(b"manifest.json", body=b"[]", declared=1 << 40).encode()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(outer)
    with within(20):
        read = read_image_archive(cut, target="cut.tar")
    assert [(s.kind, s.error_code) for s in failed(read.sources)] == [
        ("image-archive", "truncated"),
        ("image-layout", "cap-json-bytes"),  # the claim is over the cap before it is a cut
    ]
    # The same through the one-pass stream reader.
    with within(20):
        read = read_image_stream(OneWay(outer), target="stream")  # type: ignore[arg-type]
    assert [(s.kind, s.error_code, s.reason) for s in failed(read.sources)] == [
        (
            "image-archive",
            "cap-stream-bytes",
            "more than 17179869184 bytes of the saved image stream (the max_stream_bytes cap)",
        ),
        ("image-layout", "blob-missing", "manifest.json is not in the stream (or not small)"),
        (
            "image-archive",
            "truncated",
            "manifest.json: the stream holds 512 of the member's 1099511627776 bytes",
        ),
    ]


def test_extension_headers_and_long_names_are_capped(tmp_path: Path) -> None:
    long_name = b"app/" + b"n" * (2 << 20)  # a 2 MiB GNU long name: over max_header_bytes
    saved = docker_save([raw_tar([Raw(b"app", kind="dir"), Raw(long_name, body=b"x")])])
    with within(20):
        read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i.tar")
    [problem] = failed(read.sources)
    assert (problem.kind, problem.error_code, problem.reason) == (
        "image-layer",
        "cap-header-bytes",
        f"layer 0 ({saved.layer_paths[0]}): a tar extension header of {len(long_name) + 1} "
        "bytes (max_header_bytes cap)",
    )

"""A failed read is never an empty result: cut, corrupt and hostile images give named failures."""

from __future__ import annotations

from pathlib import Path

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.facts import FileContent
from agentguard.inspect.image import ImageRead, Limits, read_image_archive
from tests.inspect.image.tarballs import Saved, d, docker_save, f, layer, metadata, sym, tar_members


def three_layers(**kw: object) -> Saved:
    return docker_save(
        [
            layer([d("app"), f("app/a.py", "a = 1\n")]),
            layer([f("app/b.py", "b" * 3000), f("app/c.py", "c = 3\n")]),
            layer([f("app/CLAUDE.md", "notes")]),
        ],
        **kw,  # type: ignore[arg-type]
    )


def rewrite(saved: Saved, path: Path, member: str, data: bytes) -> Path:
    members = [(n, data if n == member else b) for n, b in saved.members]
    path.write_bytes(tar_members(members))
    return path


def failed_sources(read: ImageRead) -> list[Source]:
    return [s for s in read.sources if s.status is SourceStatus.FAILED]


def test_truncated_layer_names_the_layer_and_the_others_are_still_read(tmp_path: Path) -> None:
    saved = three_layers()
    cut = dict(saved.members)[saved.layer_paths[1]][:2048]  # b.py's header and part of its body
    read = read_image_archive(
        rewrite(saved, tmp_path / "i.tar", saved.layer_paths[1], cut), target="i"
    )
    ids = saved.diff_ids
    assert failed_sources(read) == [
        Source.failed(
            "image-layer",
            f"layer 1 {ids[1]}",
            # b.py is agent code, so reading its body is what meets the cut
            f"layer 1 ({saved.layer_paths[1]}): the data ends {3000 - 1536} bytes short",
            error_code="truncated",
            retryable=False,
        )
    ]
    assert read.facts is not None
    assert [(i.index, i.entries) for i in read.facts.layers] == [(0, 2), (1, None), (2, 1)]
    # What was read before the cut is kept: the report is incomplete anyway.
    assert [(e.path, e.layer_index) for e in read.facts.workdir_entries] == [
        ("/app", 0),
        ("/app/CLAUDE.md", 2),
        ("/app/a.py", 0),
        ("/app/b.py", 1),
    ]


def test_saved_tarball_cut_short_names_the_member_it_ends_in(tmp_path: Path) -> None:
    saved = three_layers()  # lexical order: manifest.json comes last and is lost
    data = saved.tar
    offset = data.index(dict(saved.members)[saved.layer_paths[1]][:600])
    path = tmp_path / "cut.tar"
    path.write_bytes(data[: offset + 1000])
    read = read_image_archive(path, target="cut.tar")
    assert read.facts is None
    size = len(dict(saved.members)[saved.layer_paths[1]])
    missing = ((size + 511) & ~511) - 1000
    assert read.sources == (
        Source.failed(
            "image-archive",
            "cut.tar",
            f"the archive is cut short inside {saved.layer_paths[1]}: the data ends "
            f"{missing} bytes short",
            error_code="truncated",
            retryable=False,
        ),
        Source.failed(
            "image-layout",
            "index.json / manifest.json",
            "neither index.json nor manifest.json found: not a docker save tarball or OCI layout",
            error_code="layout-unknown",
            retryable=False,
        ),
    )


def test_cut_short_with_the_manifest_first_reads_every_layer_it_can(tmp_path: Path) -> None:
    saved = three_layers(order="manifest-first")
    ids, paths = saved.diff_ids, saved.layer_paths
    last = max(range(3), key=lambda i: [n for n, _ in saved.members].index(paths[i]))
    data = saved.tar
    offset = data.index(dict(saved.members)[paths[last]][:600])
    path = tmp_path / "cut.tar"
    path.write_bytes(data[: offset + 700])
    read = read_image_archive(path, target="cut.tar")
    failed = failed_sources(read)
    assert [(s.kind, s.name, s.error_code) for s in failed] == [
        ("image-archive", "cut.tar", "truncated"),
        ("image-layer", f"layer {last} {ids[last]}", "truncated"),
    ]
    assert read.facts is not None
    assert [i.entries for i in read.facts.layers] == [
        None if i == last else n for i, n in enumerate([2, 2, 1])
    ]


def test_corrupt_gzip_layer_is_a_named_failure(tmp_path: Path) -> None:
    saved = three_layers(compression=["none", "gzip", "none"])
    blob = bytearray(dict(saved.members)[saved.layer_paths[1]])
    blob[30:60] = b"\xff" * 30
    read = read_image_archive(
        rewrite(saved, tmp_path / "i.tar", saved.layer_paths[1], bytes(blob)), target="i"
    )
    [failed] = failed_sources(read)
    assert (failed.name, failed.error_code) == (f"layer 1 {saved.diff_ids[1]}", "corrupt-gzip")
    assert (failed.reason or "").startswith(
        f"layer 1 ({saved.layer_paths[1]}): gzip data is corrupt: "
    )


def test_layer_altered_inside_a_file_body_fails_its_diff_id(tmp_path: Path) -> None:
    saved = three_layers()
    blob = dict(saved.members)[saved.layer_paths[2]].replace(b"notes", b"NOTES")
    read = read_image_archive(
        rewrite(saved, tmp_path / "i.tar", saved.layer_paths[2], blob), target="i"
    )
    from tests.inspect.image.tarballs import sha

    assert failed_sources(read) == [
        Source.failed(
            "image-layer",
            f"layer 2 {saved.diff_ids[2]}",
            f"layer 2 ({saved.layer_paths[2]}): {saved.layer_paths[2]} holds a tar with digest "
            f"{sha(blob)}, the config says {saved.diff_ids[2]}",
            error_code="diff-id-mismatch",
            retryable=False,
        )
    ]


def test_dotdot_entry_is_rejected_recorded_and_the_rest_read(tmp_path: Path) -> None:
    saved = docker_save(
        [layer([d("app"), f("../../etc/cron.d/evil", "* * * * * root sh"), f("app/ok.py", "1")])]
    )
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    assert failed_sources(read) == [
        Source.failed(
            "image-file",
            "/../../etc/cron.d/evil",
            f"the name escapes the image root with '..' (layer 0 {saved.diff_ids[0]})",
            error_code="entry-name-rejected",
            retryable=False,
        )
    ]
    assert read.facts is not None
    assert [e.path for e in read.facts.workdir_entries] == ["/app", "/app/ok.py"]


def test_per_entry_failures_are_summarised_past_their_cap(tmp_path: Path) -> None:
    saved = docker_save([layer([f(f"../x{i}", "1") for i in range(4)])])
    read = read_image_archive(
        saved.write(tmp_path / "i.tar"), target="i", limits=Limits(max_entry_sources=1)
    )
    assert [(s.name, s.error_code, s.reason) for s in failed_sources(read)] == [
        (
            "/../x0",
            "entry-name-rejected",
            f"the name escapes the image root with '..' (layer 0 {saved.diff_ids[0]})",
        ),
        (
            "3 more entries",
            "entry-name-rejected",
            "3 more entries failed with entry-name-rejected (max_entry_sources cap on listing them)",
        ),
    ]


def test_file_and_content_caps_are_failed_sources_naming_the_cap(tmp_path: Path) -> None:
    saved = docker_save(
        [
            layer(
                [
                    f("app/CLAUDE.md", "x" * 40),
                    f("app/.mcp.json", "{}" * 5),
                    f("app/pyproject.toml", "[project]\n"),
                    f("app/a.py", "1"),
                    f("app/b.py", "2"),
                ]
            )
        ]
    )
    limits = Limits(max_file_bytes=16, max_content_bytes=28, max_code_files=1)
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i", limits=limits)
    where = f"(layer 0 {saved.diff_ids[0]})"
    assert [(s.name, s.error_code, s.reason) for s in failed_sources(read)] == [
        (
            "/app/CLAUDE.md",
            "cap-file-bytes",
            f"only the first 16 of 40 bytes read (max_file_bytes cap) {where}",
        ),
        (
            "/app/pyproject.toml",
            "cap-content-bytes",
            f"not read: collected files passed 28 bytes (max_content_bytes cap) {where}",
        ),
        (
            "/app/b.py",
            "cap-code-files",
            f"not read: more than 1 agent code files under the working directory (max_code_files cap) {where}",
        ),
    ]
    assert read.facts is not None
    ids = saved.diff_ids
    assert read.facts.contents == (
        FileContent("/app/.mcp.json", ids[0], b"{}" * 5),
        FileContent("/app/CLAUDE.md", ids[0], b"x" * 16, truncated=True),
        FileContent("/app/a.py", ids[0], b"1"),
    )


def test_entry_and_byte_caps_fail_the_layer_they_are_hit_in_and_every_later_one(
    tmp_path: Path,
) -> None:
    saved = three_layers()
    ids = saved.diff_ids
    read = read_image_archive(
        saved.write(tmp_path / "i.tar"), target="i", limits=Limits(max_entries_per_image=3)
    )
    assert [(s.name, s.error_code, s.reason) for s in failed_sources(read)] == [
        (
            f"layer 1 {ids[1]}",
            "cap-entries-per-image",
            f"layer 1 ({saved.layer_paths[1]}): more than 3 entries in the image",
        ),
        (
            f"layer 2 {ids[2]}",
            "cap-entries-per-image",
            f"layer 2 ({saved.layer_paths[2]}): more than 3 entries in the image",
        ),
    ]
    read = read_image_archive(
        saved.write(tmp_path / "i.tar"), target="i", limits=Limits(max_image_bytes=12000)
    )
    assert [(s.name, s.error_code) for s in failed_sources(read)] == [
        (f"layer 1 {ids[1]}", "cap-image-bytes"),
        (f"layer 2 {ids[2]}", "cap-image-bytes"),
    ]
    assert failed_sources(read)[0].reason == (
        f"layer 1 ({saved.layer_paths[1]}): more than 12000 bytes of layer data (the max_image_bytes cap)"
    )


def test_json_cap_on_manifest_and_listing_cap_on_tracked_entries(tmp_path: Path) -> None:
    saved = three_layers()
    read = read_image_archive(
        saved.write(tmp_path / "i.tar"), target="i", limits=Limits(max_json_bytes=64)
    )
    assert [(s.kind, s.error_code) for s in failed_sources(read)] == [
        ("image-layout", "cap-json-bytes")
    ]
    assert read.facts is None
    read = read_image_archive(
        saved.write(tmp_path / "i.tar"), target="i", limits=Limits(max_tracked_entries=2)
    )
    assert read.facts is not None
    assert read.facts.workdir_entries_truncated is True
    assert read.complete  # a shortened listing is flagged, not a failed read


def test_unreadable_metadata_and_metadata_links_are_named(tmp_path: Path) -> None:
    site = "usr/lib/python3/site-packages"
    saved = docker_save(
        [
            layer(
                [
                    f(
                        f"{site}/broken-1.dist-info/METADATA",
                        "Metadata-Version: 2.1\nName: broken\n\n",
                    ),
                    sym(f"{site}/linked-1.dist-info/METADATA", "/elsewhere/METADATA"),
                    f(f"{site}/fine-1.dist-info/METADATA", metadata("fine", "1")),
                ]
            )
        ]
    )
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    where = f"(layer 0 {saved.diff_ids[0]})"
    assert [(s.name, s.error_code, s.reason) for s in failed_sources(read)] == [
        (
            f"/{site}/broken-1.dist-info/METADATA",
            "metadata-unreadable",
            f"the METADATA file has no single Name and Version {where}",
        ),
        (
            f"/{site}/linked-1.dist-info/METADATA",
            "metadata-link",
            f"METADATA is a symlink to '/elsewhere/METADATA': not read {where}",
        ),
    ]
    assert read.facts is not None
    assert [(i.name, i.version) for i in read.facts.installed] == [("fine", "1")]


def test_a_symlinked_working_directory_is_not_reported_empty(tmp_path: Path) -> None:
    saved = docker_save([layer([d("srv"), f("srv/plan.md", "p"), sym("app", "srv")])])
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    assert [(s.name, s.error_code, s.reason) for s in failed_sources(read)] == [
        (
            "/app",
            "workdir-symlink",
            "/app is a symlink in the image; the engine follows it, this reader does not: the "
            "working directory's entries were not listed (the merged image)",
        )
    ]


def test_config_that_does_not_match_its_digest_is_refused(tmp_path: Path) -> None:
    saved = three_layers()
    name = next(n for n, _ in saved.members if n.endswith(".json") and n != "manifest.json")
    forged = saved.config.replace(b'"User": ""', b'"User": "app"')
    read = read_image_archive(rewrite(saved, tmp_path / "i.tar", name, forged), target="i")
    assert read.facts is None
    [failed] = failed_sources(read)
    assert (failed.kind, failed.name, failed.error_code) == (
        "image-manifest",
        "demo:1 (platform unknown)",
        "digest-mismatch",
    )


def test_missing_and_non_tar_files(tmp_path: Path) -> None:
    read = read_image_archive(tmp_path / "nope.tar", target="nope.tar")
    assert read.sources == (
        Source.failed(
            "image-archive",
            "nope.tar",
            f"cannot open {tmp_path / 'nope.tar'}: No such file or directory",
            error_code="archive-unreadable",
            retryable=False,
        ),
    )
    junk = tmp_path / "junk.tar"
    junk.write_bytes(b"\x01" * 4096)
    read = read_image_archive(junk, target="junk.tar")
    assert [(s.kind, s.error_code) for s in read.sources] == [
        ("image-archive", "corrupt-tar"),
        ("image-layout", "layout-unknown"),
    ]
    assert read.facts is None

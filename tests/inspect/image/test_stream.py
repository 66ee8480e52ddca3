"""One pass over a non-seekable stream gives the same facts as the seekable read."""

from __future__ import annotations

import hashlib
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.image import (
    ImageRead,
    IterStream,
    read_image_archive,
    read_image_stream,
)
from tests.inspect.image.tarballs import (
    Oci,
    OneWay,
    config,
    d,
    docker_save,
    f,
    layer,
    sha,
    tar_members,
)
from tests.inspect.image.test_facts_from_archive import agent_image


def failed(read: ImageRead) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (s.kind, s.name, s.error_code, s.reason)
        for s in read.sources
        if s.status is SourceStatus.FAILED
    ]


@pytest.mark.parametrize("order", ["lexical", "manifest-first"])
def test_stream_of_a_docker_save_matches_the_archive_read(tmp_path: Path, order: str) -> None:
    # lexical: the engine's order, the config sits among the layers (those before it are
    # spooled); manifest-first: every layer is scanned as it passes.
    layers, history = agent_image()
    saved = docker_save(layers, history=history, order=order)
    from_file = read_image_archive(saved.write(tmp_path / "i.tar"), target="img")
    from_stream = read_image_stream(OneWay(saved.tar, step=1000), target="img")  # type: ignore[arg-type]
    assert from_stream.facts == from_file.facts
    assert from_stream.sources[1:] == from_file.sources[1:]
    assert from_stream.sources[0] == Source.ok("image-archive", "img", "8 members")
    assert (from_stream.image_id, from_stream.repo_tags) == (saved.image_id, ("demo:1",))


def test_stream_of_an_oci_tar_with_compressed_layers(tmp_path: Path) -> None:
    oci = Oci()
    base = layer([d("app"), f("app/CLAUDE.md", "hi"), f("app/x.py", "x")])
    top = layer([f("app/.wh.x.py"), f("app/.mcp.json", "{}")])
    oci.image([base, top], ["gzip", "zstd"], platform={"os": "linux", "architecture": "amd64"})
    path = oci.write_tar(tmp_path / "oci.tar", index_first=True)
    from_stream = read_image_stream(OneWay(path.read_bytes()), target="oci")  # type: ignore[arg-type]
    from_file = read_image_archive(path, target="oci")
    assert from_stream.facts == from_file.facts
    assert from_stream.facts is not None
    assert [e.path for e in from_stream.facts.workdir_entries] == [
        "/app",
        "/app/.mcp.json",
        "/app/CLAUDE.md",
    ]
    assert from_stream.complete


class BreaksAfter:
    """A fake stream that fails mid-way: a daemon dying mid-save cannot be caused on cue."""

    def __init__(self, data: bytes, after: int) -> None:
        self._inner = OneWay(data, 4096)
        self._left = after

    def read(self, n: int = -1) -> bytes:
        if self._left <= 0:
            raise ConnectionResetError("the engine went away")
        out = self._inner.read(min(n, self._left))
        self._left -= len(out)
        return out


def test_fake_stream_that_breaks_midway_is_a_retryable_failed_source() -> None:
    layers, history = agent_image()
    saved = docker_save(layers, history=history, order="manifest-first")
    order = [n for n, _ in saved.members if n.endswith("layer.tar")]
    second = saved.tar.index(dict(saved.members)[order[1]][:1024])
    read = read_image_stream(BreaksAfter(saved.tar, second + 100), target="img")  # type: ignore[arg-type]
    index = {path: i for i, path in enumerate(saved.layer_paths)}
    first, broken, never = (index[n] for n in order)
    ids = saved.diff_ids
    assert failed(read) == [
        (
            "image-archive",
            "img",
            "stream-read-error",
            "reading the stream failed: ConnectionResetError: the engine went away",
        ),
        (
            "image-layer",
            f"layer {broken} {ids[broken]}",
            "stream-read-error",
            f"layer {broken} ({order[1]}): reading the stream failed: ConnectionResetError: "
            "the engine went away",
        ),
        (
            "image-layer",
            f"layer {never} {ids[never]}",
            "blob-missing",
            f"layer {never} ({order[2]}): {order[2]} is not in the stream (it ended early)",
        ),
    ]
    assert read.sources[0].retryable is True
    assert read.facts is not None  # the manifest came first: the layer that passed is read
    assert read.facts.layers[first].entries is not None


def test_layers_seen_before_a_late_config_with_another_workdir_are_not_called_clean() -> None:
    # Two images in one save; the arm64 one's config (workdir /srv) arrives after its layer
    # was read for the workdir known then (/app): the reader says so instead of listing nothing.
    app_layer = layer([d("app"), f("app/a.py", "a")])
    srv_layer = layer([d("srv"), f("srv/plan.md", "p")])
    cfg_a = config([sha(app_layer)], workdir="/app")
    cfg_b = config([sha(srv_layer)], workdir="/srv", arch="arm64", variant="v8")
    name = {c: hashlib.sha256(c).hexdigest() + ".json" for c in (cfg_a, cfg_b)}
    manifest = json.dumps(
        [
            {"Config": name[cfg_a], "RepoTags": ["a:1"], "Layers": ["a/layer.tar"]},
            {"Config": name[cfg_b], "RepoTags": ["b:1"], "Layers": ["b/layer.tar"]},
        ]
    ).encode()
    members = [
        (name[cfg_a], cfg_a),
        ("b/layer.tar", srv_layer),
        ("a/layer.tar", app_layer),
        (name[cfg_b], cfg_b),
        ("manifest.json", manifest),
    ]
    data = tar_members(members)
    read = read_image_stream(OneWay(data), target="s", platform="linux/arm64")  # type: ignore[arg-type]
    assert failed(read) == [
        (
            "image-layer",
            f"layer 0 {sha(srv_layer)}",
            "stream-order",
            "layer 0 (b/layer.tar): the layer passed before the config naming working directory "
            "/srv; its working-directory entries were not collected (read the saved file instead "
            "of the stream)",
        )
    ]
    fine = read_image_stream(OneWay(data), target="s", platform="linux/amd64")  # type: ignore[arg-type]
    assert fine.complete and fine.facts is not None
    assert [e.path for e in fine.facts.workdir_entries] == ["/app", "/app/a.py"]


def test_layer_before_the_config_is_replayed_for_the_real_workdir() -> None:
    # In the engine's order the layer comes first; its entries are logged, not copied, and
    # collected once the config names the working directory.
    project = layer([d("srv"), f("srv/CLAUDE.md", "x"), f("srv/.env", "K=v"), f("srv/a.py", "1")])
    saved = docker_save([project], workdir="/srv", order="manifest-first")
    members = sorted(saved.members, key=lambda m: (not m[0].endswith("layer.tar"), m[0]))
    data = tar_members(members)
    read = read_image_stream(OneWay(data), target="s")  # type: ignore[arg-type]
    assert read.complete and read.facts is not None
    assert [e.path for e in read.facts.workdir_entries] == [
        "/srv",
        "/srv/.env",
        "/srv/CLAUDE.md",
        "/srv/a.py",
    ]
    assert [(c.path, c.data) for c in read.facts.contents] == [
        ("/srv/CLAUDE.md", b"x"),
        ("/srv/a.py", b"1"),
    ]


def test_vendored_workdir_files_passed_before_the_config_are_named_not_dropped() -> None:
    # Files in vendored folders are not kept while the working directory is unknown; when it
    # turns out to be inside one, the reader says which files it could not read.
    wd = "opt/node_modules/agent"
    project = layer([d(wd), f(f"{wd}/.mcp.json", "{}"), f(f"{wd}/README.md", "r")])
    saved = docker_save([project], workdir="/" + wd, order="manifest-first")
    members = sorted(saved.members, key=lambda m: (not m[0].endswith("layer.tar"), m[0]))
    read = read_image_stream(OneWay(tar_members(members)), target="s")  # type: ignore[arg-type]
    assert failed(read) == [
        (
            "image-file",
            f"/{wd}/.mcp.json",
            "stream-order",
            "not read: the file passed in the stream before the image config and sits in a "
            "folder whose files are not kept for an unknown working directory (read the saved "
            f"file instead of the stream) (layer 0 {saved.diff_ids[0]})",
        )
    ]
    from_file = read_image_archive_bytes(saved.tar)
    assert from_file.complete and from_file.facts is not None
    assert [c.path for c in from_file.facts.contents] == [f"/{wd}/.mcp.json"]


def read_image_archive_bytes(data: bytes) -> ImageRead:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "i.tar"
        path.write_bytes(data)
        return read_image_archive(path, target="s")


def test_iter_stream_wraps_a_chunk_generator() -> None:
    saved = docker_save([layer([d("app"), f("app/CLAUDE.md", "x")])])

    def chunks() -> Iterator[bytes]:
        for i in range(0, len(saved.tar), 777):
            yield saved.tar[i : i + 777]

    stream = IterStream(chunks())
    read = read_image_stream(io.BufferedReader(stream), target="gen")
    assert read.complete and read.facts is not None
    assert [c.path for c in read.facts.contents] == ["/app/CLAUDE.md"]

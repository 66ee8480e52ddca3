"""The reader against what the real engine writes: `docker build` / `docker import`, then save.

Images are built locally (FROM scratch with Debian's static busybox for RUN steps, or
`docker import` of a tar written here); nothing is pulled. The `docker_client` fixture fails,
never skips, when the engine is missing.
"""

from __future__ import annotations

import contextlib
import io
import json
import shutil
import tarfile
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.facts import FileContent, FileEntry, InstalledDist
from agentguard.inspect.image import IterStream, read_image_archive, read_image_stream
from tests.inspect.image.tarballs import metadata, tar_members

pytestmark = pytest.mark.engine

BUSYBOX = Path("/usr/bin/busybox")
SITE = "usr/local/lib/python3.12/site-packages"
VENV = "opt/venv/lib/python3.12/site-packages"
DOCKERFILE = """\
FROM scratch
COPY busybox /bin/busybox
COPY site/ /usr/local/lib/python3.12/site-packages/
COPY venv/ /opt/venv/lib/python3.12/site-packages/
WORKDIR /app
COPY project/ /app/
RUN ["/bin/busybox", "rm", "/app/docs/old-plan.md"]
USER 1000
ENV TOKEN=
"""
PROJECT = {
    "project/.mcp.json": b'{"mcpServers": {"fs": {"command": "npx"}}}',
    "project/CLAUDE.md": b"Read docs/plan.md before answering.\n",
    "project/.env": b"ANTHROPIC_API_KEY=sk-ant-not-collected\n",
    "project/docs/plan.md": b"# Internal plan\n",
    "project/docs/old-plan.md": b"# Deleted by a later layer\n",
    "project/src/agent.py": b"from claude_agent_sdk import query\n",
    "site/mcp-1.2.0.dist-info/METADATA": metadata("mcp", "1.2.0", ["anyio>=4"]),
    "venv/mcp-2.3.0.dist-info/METADATA": metadata("MCP", "2.3.0"),
}


@pytest.fixture()
def built(docker_client: Any, tmp_path: Path) -> Iterator[Any]:
    context = tmp_path / "context"
    for rel, data in PROJECT.items():
        (context / rel).parent.mkdir(parents=True, exist_ok=True)
        (context / rel).write_bytes(data)
    shutil.copy(BUSYBOX, context / "busybox")
    (context / "Dockerfile").write_text(DOCKERFILE)
    tag = f"agtest-reader-{uuid.uuid4().hex[:8]}:1"
    image, _ = docker_client.images.build(path=str(context), tag=tag, rm=True, forcerm=True)
    yield image
    with contextlib.suppress(Exception):
        docker_client.images.remove(tag, force=True)


def save(image: Any, path: Path) -> Path:
    with path.open("wb") as out:
        for chunk in image.save(named=True):
            out.write(chunk)
    return path


def test_engine_build_saved_to_a_file(built: Any, docker_client: Any, tmp_path: Path) -> None:
    path = save(built, tmp_path / "saved.tar")
    read = read_image_archive(path, target="saved.tar")
    assert [s for s in read.sources if s.status is not SourceStatus.OK] == []
    assert (read.layout, read.image_id, read.repo_tags, read.platform) == (
        "docker-save",
        built.id,
        tuple(built.tags),
        "linux/amd64",
    )
    facts = read.facts
    assert facts is not None
    diff_ids = built.attrs["RootFS"]["Layers"]
    assert [layer.digest for layer in facts.layers] == diff_ids
    created = [layer.created_by or "" for layer in facts.layers]
    # The engine's own history, mapped onto the layers in order.
    assert [c.split(" in ")[-1].strip() if "COPY" in c else c for c in created] == [
        "/bin/busybox",
        "/usr/local/lib/python3.12/site-packages/",
        "/opt/venv/lib/python3.12/site-packages/",
        "/bin/sh -c #(nop) WORKDIR /app",  # the classic builder commits the folder it makes
        "/app/",
        "/bin/busybox rm /app/docs/old-plan.md",
    ]
    project, cleanup = 4, 5
    ids = {i: d for i, d in enumerate(diff_ids)}
    assert (facts.config.user, facts.config.workdir, dict(facts.config.env)["TOKEN"]) == (
        "1000",
        "/app",
        "",
    )

    by_path = {e.path: e for e in facts.workdir_entries}
    assert sorted(by_path) == [
        "/app",
        "/app/.env",
        "/app/.mcp.json",
        "/app/CLAUDE.md",
        "/app/docs",
        "/app/docs/plan.md",
        "/app/src",
        "/app/src/agent.py",
    ]  # old-plan.md is gone: the RUN rm layer's whiteout is honoured
    assert by_path["/app/CLAUDE.md"] == FileEntry(
        "/app/CLAUDE.md", project, ids[project], "file", 36, 0o644
    )
    assert by_path["/app/docs"].layer_index == cleanup  # the rm step rewrote the folder
    assert facts.workdir_entries_truncated is False
    assert facts.contents == (
        FileContent("/app/.mcp.json", ids[project], PROJECT["project/.mcp.json"]),
        FileContent("/app/CLAUDE.md", ids[project], PROJECT["project/CLAUDE.md"]),
        FileContent("/app/src/agent.py", ids[project], PROJECT["project/src/agent.py"]),
        FileContent(
            f"/{VENV}/mcp-2.3.0.dist-info/METADATA",
            ids[2],
            b"Metadata-Version: 2.1\nName: MCP\nVersion: 2.3.0",
        ),
        FileContent(
            f"/{SITE}/mcp-1.2.0.dist-info/METADATA",
            ids[1],
            b"Metadata-Version: 2.1\nName: mcp\nVersion: 1.2.0\nRequires-Dist: anyio>=4",
        ),
    )
    assert facts.installed == (
        InstalledDist(
            "mcp", "2.3.0", f"/{VENV}", f"/{VENV}/mcp-2.3.0.dist-info/METADATA", ids[2], ()
        ),
        InstalledDist(
            "mcp",
            "1.2.0",
            f"/{SITE}",
            f"/{SITE}/mcp-1.2.0.dist-info/METADATA",
            ids[1],
            ("anyio>=4",),
        ),
    )


def test_engine_save_stream_gives_the_same_facts(built: Any, tmp_path: Path) -> None:
    from_file = read_image_archive(save(built, tmp_path / "saved.tar"), target="img")
    stream = io.BufferedReader(IterStream(built.save(named=True)), buffer_size=1 << 16)
    from_stream = read_image_stream(stream, target="img")
    assert from_stream.facts == from_file.facts
    assert from_stream.complete


def members_of(path: Path) -> list[tuple[str, bytes]]:
    with tarfile.open(path) as tar:
        return [(m.name, tar.extractfile(m).read()) for m in tar if m.isfile()]  # type: ignore[union-attr]


def test_engine_save_with_a_truncated_layer_names_that_layer(built: Any, tmp_path: Path) -> None:
    path = save(built, tmp_path / "saved.tar")
    read = read_image_archive(path, target="saved.tar")
    assert read.facts is not None
    project = 4  # COPY project/ /app/
    member = json.loads(dict(members_of(path))["manifest.json"])[0]["Layers"][project]
    members = [(n, b[: len(b) // 2] if n == member else b) for n, b in members_of(path)]
    broken = tmp_path / "broken.tar"
    broken.write_bytes(tar_members(members))
    read = read_image_archive(broken, target="broken.tar")
    failed = [s for s in read.sources if s.status is SourceStatus.FAILED]
    digest = read.facts.layers[project].digest if read.facts else ""
    assert [(s.kind, s.name, s.error_code) for s in failed] == [
        ("image-layer", f"layer {project} {digest}", "truncated")
    ]
    assert (failed[0].reason or "").startswith(f"layer {project} ({member}): ")
    assert read.facts is not None and read.facts.layers[project].entries is None

    cut = tmp_path / "cut.tar"
    data = path.read_bytes()
    cut.write_bytes(data[: data.index(dict(members_of(path))[member][:4096]) + 2048])
    read = read_image_archive(cut, target="cut.tar")
    assert read.facts is None
    assert read.sources[0].kind == "image-archive" and read.sources[0].error_code == "truncated"
    assert (read.sources[0].reason or "").startswith(f"the archive is cut short inside {member}: ")


def test_engine_import_of_a_written_tar(docker_client: Any, tmp_path: Path) -> None:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in [
            ("var/run/docker.sock", b""),
            ("etc/claude-code/managed-settings.json", b'{"permissions": {"defaultMode": "plan"}}'),
            (
                f"{SITE}/claude_agent_sdk-0.2.95.dist-info/METADATA",
                metadata("claude-agent-sdk", "0.2.95", ["mcp>=1.23.0"]),
            ),
        ]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    tag = f"agtest-reader-import-{uuid.uuid4().hex[:8]}"
    docker_client.api.import_image_from_data(
        buf.getvalue(), repository=tag, tag="1", changes=["WORKDIR /srv"]
    )
    try:
        image = docker_client.images.get(f"{tag}:1")
        read = read_image_archive(save(image, tmp_path / "imp.tar"), target="imp.tar")
    finally:
        docker_client.images.remove(f"{tag}:1", force=True)
    assert read.complete and read.facts is not None
    [digest] = [layer.digest for layer in read.facts.layers]
    assert read.facts.config.workdir == "/srv"
    assert read.facts.docker_socket_paths == ("/var/run/docker.sock",)
    assert read.facts.installed == (
        InstalledDist(
            "claude-agent-sdk",
            "0.2.95",
            f"/{SITE}",
            f"/{SITE}/claude_agent_sdk-0.2.95.dist-info/METADATA",
            digest,
            ("mcp>=1.23.0",),
        ),
    )
    assert (
        FileContent(
            "/etc/claude-code/managed-settings.json",
            digest,
            b'{"permissions": {"defaultMode": "plan"}}',
        )
        in read.facts.contents
    )
    # <layer>/, VERSION, json, layer.tar, the config, manifest.json, repositories
    assert read.sources[0] == Source.ok("image-archive", "imp.tar", "7 members")

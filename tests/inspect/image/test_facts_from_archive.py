"""What a saved image yields: the merged working directory, collected files, installs."""

from __future__ import annotations

from pathlib import Path

from agentguard.findings import Source
from agentguard.inspect.facts import FileContent, FileEntry, InstalledDist, LayerInfo
from agentguard.inspect.image import Limits, read_image_archive
from tests.inspect.image.tarballs import E, d, docker_save, f, layer, metadata, sym

SITE = "usr/local/lib/python3.12/site-packages"
VENV = "opt/venv/lib/python3.12/site-packages"
DIST = "usr/lib/python3/dist-packages"


def agent_image() -> tuple[list[bytes], list[str]]:
    base = layer(
        [
            d("usr"),
            f(f"{SITE}/mcp-1.2.0.dist-info/METADATA", metadata("MCP", "1.2.0", ["anyio>=4"])),
            f(f"{DIST}/requests-2.31.0.dist-info/METADATA", metadata("requests", "2.31.0")),
            f(f"{DIST}/gone-1.0.dist-info/METADATA", metadata("gone", "1.0")),
            f("etc/claude-code/managed-settings.json", '{"permissions": {"deny": ["Bash"]}}'),
            E("var/run/docker.sock", kind="fifo"),
        ]
    )
    project = layer(
        [
            d("app"),
            f("app/.mcp.json", '{"mcpServers": {}}'),
            f("app/CLAUDE.md", "Read docs/plan.md"),
            f("app/.claude/settings.json", '{"permissions": {"allow": ["Bash"]}}'),
            f("app/.env", "ANTHROPIC_API_KEY=sk-ant-secret-value"),
            f("app/docs/plan.md", "# plan"),
            f("app/docs/old.md", "# old"),
            f("app/cache/stale.bin", "s"),
            f("app/src/agent.py", "import claude_agent_sdk\n", mode=0o755),
            f("app/requirements-dev.txt", "mcp>=1\n"),
            f("app/node_modules/left-pad/package.json", "{}"),
            f("app/node_modules/left-pad/index.js", "module.exports = 1"),
            sym("app/latest", "docs/plan.md"),
            f(
                f"{VENV}/mcp-2.3.0.dist-info/METADATA",
                metadata("mcp", "2.3.0", ["mcp-types==2.3.0"]),
            ),
        ]
    )
    cleanup = layer(
        [
            d("app/docs"),
            f("app/docs/.wh.old.md"),
            d("app/cache"),
            f("app/cache/.wh..wh..opq"),
            f("app/cache/fresh.bin", "f"),
            f(f"{DIST}/.wh.gone-1.0.dist-info"),
        ]
    )
    history = ["COPY rootfs /", None, "COPY . /app # buildkit", "RUN rm -rf /app/docs/old.md"]
    return [base, project, cleanup], history


def test_docker_save_tarball_gives_the_merged_view(tmp_path: Path) -> None:
    layers, history = agent_image()
    saved = docker_save(layers, history=history, user="", env=["PATH=/bin", "TOKEN="])
    read = read_image_archive(saved.write(tmp_path / "img.tar"), target="img.tar")
    facts = read.facts
    assert facts is not None
    ids = saved.diff_ids

    assert read.sources == (
        Source.ok("image-archive", "img.tar", "8 members"),
        Source.ok("image-manifest", "demo:1", "docker-save layout: demo:1 (linux/amd64), 3 layers"),
        Source.ok("image-config", saved.image_id, "working directory /app"),
        Source.ok(
            "image-layer",
            f"layer 0 {ids[0]}",
            f"6 entries, none ({saved.layer_paths[0]}), diff_id verified",
        ),
        Source.ok(
            "image-layer",
            f"layer 1 {ids[1]}",
            f"14 entries, none ({saved.layer_paths[1]}), diff_id verified",
        ),
        Source.ok(
            "image-layer",
            f"layer 2 {ids[2]}",
            f"6 entries, none ({saved.layer_paths[2]}), diff_id verified",
        ),
    )
    assert (read.layout, read.image_id, read.platform, read.repo_tags) == (
        "docker-save",
        saved.image_id,
        "linux/amd64",
        ("demo:1",),
    )
    assert facts.image_id == saved.image_id
    assert (facts.config.user, facts.config.workdir, facts.config.env) == (
        "",
        "/app",
        (("PATH", "/bin"), ("TOKEN", "")),
    )
    assert facts.layers == (
        LayerInfo(0, ids[0], "COPY rootfs /", None, "none", 6),
        LayerInfo(1, ids[1], "COPY . /app # buildkit", None, "none", 14),
        LayerInfo(2, ids[2], "RUN rm -rf /app/docs/old.md", None, "none", 6),
    )

    def entry(
        path: str,
        layer_index: int,
        kind: str = "file",
        size: int = 0,
        mode: int = 0o644,
        link: str | None = None,
    ) -> FileEntry:
        return FileEntry(path, layer_index, ids[layer_index], kind, size, mode, link)

    # docs/old.md is whited out, cache/stale.bin hidden by the opaque folder.
    assert facts.workdir_entries == (
        entry("/app", 1, "dir", mode=0o755),
        entry("/app/.claude/settings.json", 1, size=36),
        entry("/app/.env", 1, size=37),
        entry("/app/.mcp.json", 1, size=18),
        entry("/app/CLAUDE.md", 1, size=17),
        entry("/app/cache", 2, "dir", mode=0o755),
        entry("/app/cache/fresh.bin", 2, size=1),
        entry("/app/docs", 2, "dir", mode=0o755),
        entry("/app/docs/plan.md", 1, size=6),
        entry("/app/latest", 1, "symlink", link="docs/plan.md"),
        entry("/app/node_modules/left-pad/index.js", 1, size=18),
        entry("/app/node_modules/left-pad/package.json", 1, size=2),
        entry("/app/requirements-dev.txt", 1, size=7),
        entry("/app/src/agent.py", 1, size=24, mode=0o755),
    )
    assert facts.workdir_entries_truncated is False

    # .env is listed, never read; vendored node_modules files are not collected.
    assert facts.contents == (
        FileContent("/app/.claude/settings.json", ids[1], b'{"permissions": {"allow": ["Bash"]}}'),
        FileContent("/app/.mcp.json", ids[1], b'{"mcpServers": {}}'),
        FileContent("/app/CLAUDE.md", ids[1], b"Read docs/plan.md"),
        FileContent("/app/requirements-dev.txt", ids[1], b"mcp>=1\n"),
        FileContent("/app/src/agent.py", ids[1], b"import claude_agent_sdk\n"),
        FileContent(
            "/etc/claude-code/managed-settings.json", ids[0], b'{"permissions": {"deny": ["Bash"]}}'
        ),
        FileContent(
            f"/{VENV}/mcp-2.3.0.dist-info/METADATA",
            ids[1],
            b"Metadata-Version: 2.1\nName: mcp\nVersion: 2.3.0\nRequires-Dist: mcp-types==2.3.0",
        ),
        FileContent(
            f"/{DIST}/requests-2.31.0.dist-info/METADATA",
            ids[0],
            b"Metadata-Version: 2.1\nName: requests\nVersion: 2.31.0",
        ),
        FileContent(
            f"/{SITE}/mcp-1.2.0.dist-info/METADATA",
            ids[0],
            b"Metadata-Version: 2.1\nName: MCP\nVersion: 1.2.0\nRequires-Dist: anyio>=4",
        ),
    )
    # Two installs of one distribution are both kept; the whited-out dist-info is gone.
    assert facts.installed == (
        InstalledDist(
            "mcp",
            "2.3.0",
            f"/{VENV}",
            f"/{VENV}/mcp-2.3.0.dist-info/METADATA",
            ids[1],
            ("mcp-types==2.3.0",),
        ),
        InstalledDist(
            "mcp",
            "1.2.0",
            f"/{SITE}",
            f"/{SITE}/mcp-1.2.0.dist-info/METADATA",
            ids[0],
            ("anyio>=4",),
        ),
        InstalledDist(
            "requests",
            "2.31.0",
            f"/{DIST}",
            f"/{DIST}/requests-2.31.0.dist-info/METADATA",
            ids[0],
            (),
        ),
    )
    assert facts.docker_socket_paths == ("/var/run/docker.sock",)
    assert read.complete


def test_a_file_written_over_a_folder_hides_the_folder(tmp_path: Path) -> None:
    lower = layer([d("app"), d("app/secrets"), f("app/secrets/key.pem", "k")])
    upper = layer([f("app/secrets", "now a file")])
    read = read_image_archive(docker_save([lower, upper]).write(tmp_path / "i.tar"), target="i")
    assert read.facts is not None
    assert [(e.path, e.kind) for e in read.facts.workdir_entries] == [
        ("/app", "dir"),
        ("/app/secrets", "file"),
    ]


def test_duplicate_entries_in_one_layer_last_wins(tmp_path: Path) -> None:
    data = layer([d("app"), f("app/CLAUDE.md", "first"), f("app/CLAUDE.md", "second, longer")])
    read = read_image_archive(docker_save([data]).write(tmp_path / "i.tar"), target="i")
    assert read.facts is not None
    assert [(c.path, c.data) for c in read.facts.contents] == [
        ("/app/CLAUDE.md", b"second, longer")
    ]
    assert [(e.path, e.size) for e in read.facts.workdir_entries] == [
        ("/app", 0),
        ("/app/CLAUDE.md", 14),
    ]


def test_same_layer_whiteout_does_not_hide_its_own_entry(tmp_path: Path) -> None:
    lower = layer([d("app"), f("app/a.md", "lower")])
    upper = layer([f("app/a.md", "upper"), f("app/.wh.a.md")])
    read = read_image_archive(docker_save([lower, upper]).write(tmp_path / "i.tar"), target="i")
    assert read.facts is not None
    assert [(e.path, e.layer_index, e.size) for e in read.facts.workdir_entries] == [
        ("/app", 0, 0),
        ("/app/a.md", 1, 5),
    ]


def test_root_working_directory_lists_shallow_first_and_skips_system_code(tmp_path: Path) -> None:
    files = [f(f"usr/lib/python3.12/m{i}.py", "x") for i in range(30)]
    files += [f("srv/agent.py", "import anthropic"), f("README.md", "# hi"), f("srv/.env", "K=v")]
    saved = docker_save([layer(files)], workdir="")
    limits = Limits(max_workdir_entries=4)
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i", limits=limits)
    assert read.facts is not None
    assert read.facts.config.workdir == ""
    # Notable entries first (agent code, documents, .env), then the shallowest.
    assert [e.path for e in read.facts.workdir_entries] == [
        "/README.md",
        "/srv/.env",
        "/srv/agent.py",
        "/usr/lib/python3.12/m0.py",
    ]
    assert read.facts.workdir_entries_truncated is True
    assert [c.path for c in read.facts.contents] == ["/srv/agent.py"]


def test_history_that_does_not_match_the_layers_leaves_created_by_unknown(tmp_path: Path) -> None:
    saved = docker_save([layer([f("a", "1")]), layer([f("b", "2")])], history=["only one step"])
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    assert read.facts is not None
    assert [layer_.created_by for layer_ in read.facts.layers] == [None, None]
    assert (
        Source.skipped(
            "image-history",
            "history",
            "1 non-empty history entries for 2 layers: created_by left unknown",
        )
        in read.sources
    )
    assert read.complete  # unknown provenance is not a failed read


def test_the_same_layer_content_twice_is_listed_twice(tmp_path: Path) -> None:
    same = layer([d("app"), f("app/x.py", "1")])
    saved = docker_save([same, same])
    read = read_image_archive(saved.write(tmp_path / "i.tar"), target="i")
    assert read.facts is not None
    assert [(i.index, i.digest, i.entries) for i in read.facts.layers] == [
        (0, saved.diff_ids[0], 2),
        (1, saved.diff_ids[0], 2),
    ]
    assert [(e.path, e.layer_index) for e in read.facts.workdir_entries] == [
        ("/app", 1),
        ("/app/x.py", 1),
    ]

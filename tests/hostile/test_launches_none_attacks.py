"""Attacks on `lock`'s shortcut for a folder of build files alone
(``servers._launches_none``): wherever it answers, its answer must be the full scan's
(the servers, and every source: a file not read is never "launches none"). Each folder
here holds only files the walk calls container/build files, written to make the shortcut
answer where the scan would find a launch or a file it could not read."""

from __future__ import annotations

import codecs
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.facts.agents import McpServer
from agentguard.findings import Source
from agentguard.inspect.project import servers as servers_module
from agentguard.inspect.project.scan import collect_folder
from agentguard.inspect.project.servers import project_servers
from agentguard.inspect.project.walk import walk

MCP_JSON = '{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}'
HEREDOC = (
    "FROM node:22-slim\n"
    "RUN mkdir -p /root/.claude && cat > /app/.mcp.json <<'JSON'\n" + MCP_JSON + "\nJSON\n"
)
ESCAPED = HEREDOC.replace("mcpServers", "mcp\\u0053ervers")
CLAUDE_ENTRY = 'FROM node:22\nENTRYPOINT ["claude", "--mcp-config", "/app/mcp.json", "-p"]\n'
COMPOSE_NPX = (
    "services:\n  fs:\n    image: node:22\n"
    "    command: npx -y @modelcontextprotocol/server-filesystem /data\n"
)
COMPOSE_CODEX = "services:\n  agent:\n    image: node:22\n    command: codex exec --full-auto\n"
DEVCONTAINER = (
    '{"name": "x", "postCreateCommand": "claude mcp add fetch -- uvx mcp-server-fetch"}\n'
)
SETUP_SH = "#!/bin/sh\ngemini mcp add fetch uvx mcp-server-fetch\n"


def _old_project_servers(
    root: Path, exclude: Sequence[str] = ()
) -> tuple[tuple[McpServer, ...], tuple[Source, ...]]:
    """``project_servers`` as it was before the shortcut: every folder through the scan."""
    col = collect_folder(root, exclude=exclude)
    servers = [m for o in col.outcomes for m in o.mcp_servers]
    configs = [c for o in col.outcomes for c in o.configs]
    if col.loader is not None and configs:
        from agentguard.inspect.project.python_imports import resolve_configs

        servers += resolve_configs(configs, col.loader)[1]
    sources = [*col.sources, *(s for o in col.outcomes for s in o.sources)]
    if not servers:
        return (), tuple(sources)
    from agentguard.inspect.project.registry_files import project_registries

    found, read = project_registries(root, servers)
    return tuple(found), (*sources, *read)


def _write(root: Path, files: dict[str, bytes]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _utf16(text: str) -> bytes:
    return codecs.BOM_UTF16_LE + text.encode("utf-16-le")


PYPROJECT = b'[project]\nname = "p"\nversion = "0"\ndependencies = ["httpx"]\n'

CASES: dict[str, dict[str, bytes]] = {
    "dockerfile-heredoc-mcp-json": {"Dockerfile": HEREDOC.encode()},
    "dockerfile-heredoc-escaped-word": {"Dockerfile": ESCAPED.encode()},
    "dockerfile-heredoc-crlf": {"Dockerfile": HEREDOC.replace("\n", "\r\n").encode()},
    "dockerfile-heredoc-utf8-bom": {"Dockerfile": codecs.BOM_UTF8 + HEREDOC.encode()},
    "dockerfile-heredoc-utf16": {"Dockerfile": _utf16(HEREDOC)},
    "dockerfile-claude-entrypoint": {"Dockerfile": CLAUDE_ENTRY.encode()},
    "dockerfile-uvx-server": {"Dockerfile": b"FROM python:3.12\nRUN uvx mcp-server-fetch\n"},
    "dockerfile-npx-claude-package": {
        "Dockerfile": b"FROM node:22\nRUN npx -y @anthropic-ai/claude-code --mcp-config m.json\n"
    },
    "dockerfile-named-variant": {"Dockerfile.dev": HEREDOC.encode()},
    "dockerfile-suffix-variant": {"app.dockerfile": CLAUDE_ENTRY.encode()},
    "containerfile": {"Containerfile": HEREDOC.encode()},
    "compose-npx-server": {"docker-compose.yml": COMPOSE_NPX.encode()},
    "compose-override-codex": {"docker-compose.override.yml": COMPOSE_CODEX.encode()},
    "compose-yaml-mcp-servers": {
        "compose.yaml": (COMPOSE_NPX + "    environment:\n      MCP: '" + MCP_JSON + "'\n").encode()
    },
    "devcontainer-post-create": {".devcontainer/devcontainer.json": DEVCONTAINER.encode()},
    "devcontainer-root-file": {".devcontainer.json": DEVCONTAINER.encode()},
    "devcontainer-script": {".devcontainer/setup.sh": SETUP_SH.encode()},
    "pyproject-mcp-servers-table": {
        "pyproject.toml": PYPROJECT + b'[tool.x]\nmcpServers = {fetch = "uvx mcp-server-fetch"}\n'
    },
    "requirements-comment-claude": {"requirements.txt": b"httpx==1  # run: claude -p hi\n"},
    "requirements-dir-in-file": {"requirements/dev.in": b"pytest\n# gemini --yolo\n"},
    "lock-holding-word": {"uv.lock": b'version = 1\n# "mcpServers"\n'},
    "dockerignore-holding-word": {".dockerignore": b"claude\n"},
    "gitignore-holding-word": {".gitignore": b".env\ncodex\n"},
    "oversize-quiet-dockerfile": {"Dockerfile": b"FROM x\n" + b"#" * (4 * 1024 * 1024 + 1)},
    "oversize-launch-after-cap": {
        "Dockerfile": b"FROM x\n" + b"#" * (4 * 1024 * 1024) + HEREDOC.encode()
    },
    "quiet-build-files": {
        "pyproject.toml": PYPROJECT,
        "uv.lock": b"version = 1\n",
        "Dockerfile": b"FROM python:3.12\nRUN pip install .\n",
    },
}


@pytest.mark.parametrize("files", CASES.values(), ids=list(CASES))
def test_the_shortcut_answers_as_the_full_scan(tmp_path: Path, files: dict[str, bytes]) -> None:
    root = _write(tmp_path / "p", {"pyproject.toml": PYPROJECT, **files})
    assert project_servers(root) == _old_project_servers(root)


def _link_inside(root: Path) -> None:
    (root / "docker").mkdir()
    (root / "docker" / "Dockerfile.real").write_text(HEREDOC, encoding="utf-8")
    os.symlink("docker/Dockerfile.real", root / "Dockerfile")


def _link_out(root: Path) -> None:
    outside = root.parent / "shared-Dockerfile"
    outside.write_text("FROM x\n", encoding="utf-8")
    os.symlink(outside, root / "Dockerfile")


def _dangling(root: Path) -> None:
    os.symlink("nowhere/Dockerfile", root / "Dockerfile")


def _fifo(root: Path) -> None:
    os.mkfifo(root / "Dockerfile")


def _folder_link(root: Path) -> None:
    (root / "real-devcontainer").mkdir()
    (root / "real-devcontainer" / "devcontainer.json").write_text(DEVCONTAINER, "utf-8")
    os.symlink("real-devcontainer", root / ".devcontainer")


def _link_to_mcp_json_in_skipped_folder(root: Path) -> None:
    (root / "node_modules").mkdir()
    (root / "node_modules" / ".mcp.json").write_text(MCP_JSON, encoding="utf-8")
    os.symlink("node_modules/.mcp.json", root / "Dockerfile")


def _unlistable_folder(root: Path) -> None:
    (root / "locked").mkdir()
    (root / "locked" / "Dockerfile").write_text(HEREDOC, encoding="utf-8")
    os.chmod(root / "locked", 0)


LINKS: dict[str, Callable[[Path], None]] = {
    "link-inside-to-a-launch": _link_inside,
    "link-out": _link_out,
    "dangling-link": _dangling,
    "fifo": _fifo,
    "folder-link-devcontainer": _folder_link,
    "link-to-mcp-json-in-a-skipped-folder": _link_to_mcp_json_in_skipped_folder,
    "unlistable-folder": _unlistable_folder,
}


@pytest.mark.parametrize("make", LINKS.values(), ids=list(LINKS))
def test_links_and_odd_files_answer_as_the_full_scan(
    tmp_path: Path, make: Callable[[Path], None]
) -> None:
    root = _write(tmp_path / "p", {"pyproject.toml": PYPROJECT})
    make(root)
    try:
        assert project_servers(root) == _old_project_servers(root)
    finally:
        for folder in root.rglob("*"):
            if folder.is_dir() and not folder.is_symlink():
                os.chmod(folder, 0o755)


def test_excluded_launch_answers_as_the_full_scan(tmp_path: Path) -> None:
    root = _write(
        tmp_path / "p",
        {"pyproject.toml": PYPROJECT, "deploy/Dockerfile": HEREDOC.encode()},
    )
    got = project_servers(root, exclude=["deploy/**"])
    assert got == _old_project_servers(root, exclude=["deploy/**"])


_NAMES = st.sampled_from(
    [
        "Dockerfile",
        "Dockerfile.prod",
        "x.dockerfile",
        "Containerfile",
        "compose.yaml",
        "docker-compose.override.yml",
        ".devcontainer/devcontainer.json",
        ".devcontainer/post.sh",
        ".devcontainer.json",
        "pyproject.toml",
        "sub/pyproject.toml",
        "uv.lock",
        "poetry.lock",
        "pylock.toml",
        "requirements.txt",
        "requirements-dev.in",
        "requirements/base.txt",
        ".dockerignore",
        ".gitignore",
    ]
)
_PIECES = st.sampled_from(
    [
        b"FROM python:3.12\n",
        b"RUN pip install -r requirements.txt\n",
        b"RUN claude mcp add fetch -- uvx mcp-server-fetch\n",
        b'ENTRYPOINT ["claude", "-p"]\n',
        b"RUN npx -y @anthropic-ai/claude-code --mcp-config m.json\n",
        b"command: codex exec\n",
        b"  gemini --yolo\n",
        b"claude_args: --mcp-config x\n",
        b"RUN cat > .mcp.json <<'J'\n" + MCP_JSON.encode() + b"\nJ\n",
        b'{"mcp\\u0053ervers": {"a": {"command": "npx"}}}\n',
        b"mcp\\x53ervers\n",
        b"claude-code\n",
        b"anthropic/claude",
        b"codexes geminis\n",
        b"\r\n",
        b"\xff\xfe",
        b"\x00",
    ]
)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.dictionaries(_NAMES, st.lists(_PIECES, max_size=5).map(b"".join), max_size=4))
def test_random_build_file_folders_answer_as_the_full_scan(
    tmp_path_factory: pytest.TempPathFactory, files: dict[str, bytes]
) -> None:
    root = _write(tmp_path_factory.mktemp("p"), files)
    assert project_servers(root) == _old_project_servers(root)


def test_the_shortcut_is_taken_for_quiet_build_files(tmp_path: Path) -> None:
    """(the attacks above test the shortcut itself, not only the scan behind it)"""
    root = _write(tmp_path / "p", CASES["quiet-build-files"])
    assert servers_module._launches_none(root, walk(str(root))) is not None
    root2 = _write(tmp_path / "q", {"Dockerfile": HEREDOC.encode()})
    assert servers_module._launches_none(root2, walk(str(root2))) is None

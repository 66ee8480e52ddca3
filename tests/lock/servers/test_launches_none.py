"""`agentguard lock` reads the project for MCP server launches. A folder of build files
alone (a pyproject.toml and its locks) in which no file names a command line or
``mcpServers`` is told apart by the walk and the needle tests, without the scan's
readers; what it gives is what the full scan gives, and a folder that does hold a launch
(in a build file, or any other file) still goes through the scan and finds it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from agentguard.facts.agents import McpServer
from agentguard.findings import Source
from agentguard.inspect.project.scan import collect_folder
from agentguard.inspect.project.servers import project_servers

PYPROJECT = (
    '[project]\nname = "scratch"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
    'dependencies = ["letta-client"]\n'
)
LOCK = "httpx==0.28.1 \\\n    --hash=sha256:" + "0" * 64 + "\n"
PYLOCK = 'lock-version = "1.0"\ncreated-by = "agentguard"\n'
DOCKERFILE_LAUNCH = (
    "FROM node:22-slim\n"
    "RUN mkdir -p /root/.gemini && cat > /root/.gemini/settings.json <<'JSON'\n"
    '{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}\n'
    "JSON\n"
)


def _scratch(root: Path, **more: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    files = {
        "pyproject.toml": PYPROJECT,
        "requirements.lock": LOCK,
        "pylock.toml": PYLOCK,
        "report.json": "{}",  # (no file the scan reads)
        **more,
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def _full_scan(
    root: Path, exclude: Sequence[str] = ()
) -> tuple[tuple[McpServer, ...], tuple[Source, ...]]:
    """What :func:`project_servers` gave when every folder went through the scan."""
    col = collect_folder(root, exclude=exclude)
    servers = [m for o in col.outcomes for m in o.mcp_servers]
    sources = [*col.sources, *(s for o in col.outcomes for s in o.sources)]
    if servers:
        from agentguard.inspect.project.registry_files import project_registries

        found, read = project_registries(root, servers)
        return tuple(found), (*sources, *read)
    return (), tuple(sources)


@pytest.mark.parametrize(
    "more",
    [
        {},
        {"requirements/dev.txt": "pytest==8.0\n", "sub/pyproject.toml": PYPROJECT},
        {".gitignore": ".env\n", "uv.lock": "version = 1\n"},
        {"Dockerfile": "FROM python:3.12-slim\nRUN pip install -r requirements.lock\n"},
        {"Dockerfile": DOCKERFILE_LAUNCH},  # a launch in a build file: the scan finds it
        {"Dockerfile": "FROM node:22\nRUN claude mcp add fetch -- uvx mcp-server-fetch\n"},
        {"Dockerfile": "FROM node:22\nRUN npx @google/gemini-cli --version\n"},
        {".mcp.json": json.dumps({"mcpServers": {"git": {"command": "uvx"}}})},
        {"main.py": "print('hello')\n"},
        {"node_modules/x/Dockerfile": DOCKERFILE_LAUNCH},  # (a folder never walked)
    ],
    ids=[
        "inputs-and-locks",
        "nested-build-files",
        "gitignore-and-uv-lock",
        "quiet-dockerfile",
        "dockerfile-heredoc-launch",
        "dockerfile-claude-command",
        "dockerfile-gemini-command",
        "mcp-json",
        "python-file",
        "skipped-folder",
    ],
)
def test_the_servers_and_sources_are_the_full_scans(tmp_path: Path, more: dict[str, str]) -> None:
    root = _scratch(tmp_path / "p", **more)
    assert project_servers(root) == _full_scan(root)


def test_excluded_and_linked_files_are_reported_as_the_scan_reports_them(tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.toml"
    outside.write_text(PYPROJECT, encoding="utf-8")
    root = _scratch(tmp_path / "p", **{"extra/requirements.txt": "x==1\n"})
    os.symlink(outside, root / "requirements-shared.txt")  # a link out: the scan reports it
    got = project_servers(root, exclude=["extra/**"])
    assert got == _full_scan(root, exclude=["extra/**"])
    assert {s.status.value for s in got[1]} >= {"skipped", "failed"}


def test_a_launch_in_a_dockerfile_beside_the_locks_is_found(tmp_path: Path) -> None:
    root = _scratch(tmp_path / "p", Dockerfile=DOCKERFILE_LAUNCH)
    servers, _ = project_servers(root)
    assert [(s.name, s.command, s.args) for s in servers] == [
        ("fetch", "uvx", ("mcp-server-fetch",))
    ]


_MODULES = """
import sys
from pathlib import Path
from agentguard.inspect.project.servers import project_servers
servers, _ = project_servers(Path(sys.argv[1]))
print(len(servers))
print("agentguard.inspect.project.scan" in sys.modules)
print("agentguard.inspect.project.files" in sys.modules)
"""


def _in_a_new_process(root: Path) -> list[str]:
    proc = subprocess.run(
        [sys.executable, "-c", _MODULES, str(root)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return proc.stdout.split()


def test_a_folder_of_quiet_build_files_does_not_import_the_scan(tmp_path: Path) -> None:
    assert _in_a_new_process(_scratch(tmp_path / "p")) == ["0", "False", "False"]


def test_a_folder_that_launches_a_server_goes_through_the_scan(tmp_path: Path) -> None:
    root = _scratch(tmp_path / "p", Dockerfile=DOCKERFILE_LAUNCH)
    assert _in_a_new_process(root) == ["1", "True", "True"]

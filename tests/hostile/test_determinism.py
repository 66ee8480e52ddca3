"""Same inputs, same bytes: lock files and reports do not depend on the order the index
lists files in, the order files were created on disk, or the order of a tarball's members.
Only the timestamp fields (`resolved-at`, `made_at`) may differ, and they are removed
before comparing.
"""

from __future__ import annotations

import json
import random
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.index_server import serving
from tests.hostile.promises import run_agentguard
from tests.inspect.image.tarballs import d, docker_save, f, layer, metadata, tar_members
from tests.lock.helpers import write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

STAMP = re.compile(rb"^resolved-at = .*$", re.M)


def without_stamps(report: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(report)
    data["provenance"].pop("made_at")
    data["provenance"]["inputs"].pop("lock_digest", None)  # a digest of a stamped file
    return data


def lock_bytes(project: Path) -> dict[str, bytes]:
    return {
        name: STAMP.sub(b"resolved-at = <stamp>", (project / name).read_bytes())
        for name in ("pylock.toml", "requirements.lock")
    }


WHEELS = [
    ("mcp", "1.0.0", []),
    ("mcp", "1.5.0", []),
    ("mcp", "2.0.0", []),
    ("agent-sdk", "1.0.0", ["mcp>=1", "tool-x>=1"]),
    ("tool-x", "1.0.0", []),
    ("tool-x", "2.0.0", []),
]


def build_in_order(folder: Path, order: list[int]) -> None:
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    for i in order:
        name, version, requires = WHEELS[i]
        build_wheel(folder, name, version, requires)


def test_lock_bytes_do_not_depend_on_index_or_disk_order(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])
    wheels = tmp_path / "wheels"
    rng = random.Random(7)
    results: list[tuple[dict[str, bytes], dict[str, Any]]] = []
    with serving(wheels, shuffle=True) as index:  # every page lists its files anew, shuffled
        for round_ in range(3):
            order = list(range(len(WHEELS)))
            rng.shuffle(order)
            build_in_order(wheels, order if round_ else sorted(order, reverse=True))
            for name in ("pylock.toml", "requirements.lock"):
                (project / name).unlink(missing_ok=True)
            run = run_agentguard(
                "lock", str(project), "--index-url", index.url, "--format", "json", cwd=tmp_path
            )
            run.check_no_crash()
            assert run.code == 1, run.stdout  # mcp 1 and 2 admitted: a high AG101
            results.append((lock_bytes(project), without_stamps(run.stdout)))
    first_lock, first_report = results[0]
    for lock, report in results[1:]:
        assert lock == first_lock
        assert report == first_report


def test_project_report_does_not_depend_on_creation_order(tmp_path: Path) -> None:
    files = {
        "agent.py": "from claude_agent_sdk import ClaudeAgentOptions\n"
        "opts = ClaudeAgentOptions(allowed_tools=['Bash', 'Read'])\n",
        "tools/other.py": "from claude_agent_sdk import query\n",
        ".mcp.json": '{"mcpServers": {"fs": {"command": "npx", "args": ["srv"]}}}',
        ".claude/settings.json": '{"permissions": {"allow": ["Bash(*)"]}}',
        "Dockerfile": "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n",
        "compose.yaml": "services:\n  agent:\n    build: .\n    volumes: ['.:/app']\n",
        "CLAUDE.md": "notes",
        "broken.py": "from claude_agent_sdk import query\ndef f(:\n",
    }
    project = tmp_path / "bot"
    reports = []
    for order in (
        sorted(files),
        sorted(files, reverse=True),
        random.Random(3).sample(sorted(files), len(files)),
    ):
        if project.exists():
            shutil.rmtree(project)
        for rel in order:
            (project / rel).parent.mkdir(parents=True, exist_ok=True)
            (project / rel).write_text(files[rel])
        run = run_agentguard("inspect", str(project), "--format", "json", "--no-lock", cwd=tmp_path)
        run.check_no_crash()
        assert run.code == 3  # broken.py
        reports.append(without_stamps(run.stdout))
    assert reports[0] == reports[1] == reports[2]


def test_image_report_does_not_depend_on_member_order(tmp_path: Path) -> None:
    site = "usr/lib/python3/site-packages"
    saved = docker_save(
        [
            layer([d("app"), f("app/agent.py", "from claude_agent_sdk import query\n")]),
            layer([f(f"{site}/mcp-2.0.0.dist-info/METADATA", metadata("mcp", "2.0.0"))]),
            layer([f("app/CLAUDE.md", "notes"), f("app/.mcp.json", '{"mcpServers": {}}')]),
        ],
        user="",
    )
    path = tmp_path / "image.tar"
    reports = []
    members = list(saved.members)
    for order in (members, members[::-1], random.Random(5).sample(members, len(members))):
        path.write_bytes(tar_members(order))
        run = run_agentguard("inspect", str(path), "--format", "json", "--no-lock", cwd=tmp_path)
        run.check_no_crash()
        reports.append(without_stamps(run.stdout))
    assert reports[0]["complete"] is True
    assert reports[0] == reports[1] == reports[2]

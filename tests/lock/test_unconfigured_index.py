"""A lock pinned from an index nobody configured is a finding (AG107), never a quiet
downgrade to "unknown". Modelled on the attack: the same uv.lock with every package moved
to another index (here 127.0.0.1, never served: agentguard must not contact it)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.lock.helpers import findings, run_json, write_project

pytestmark = pytest.mark.usefixtures("isolated_cache")

ELSEWHERE = "http://127.0.0.1:9/simple/"


def _locked(tmp_path: Path, agent_index: dict[str, Any]) -> Path:
    project = write_project(
        tmp_path / "bot",
        ["claude-agent-sdk==0.2.95"],
        extra=f'\n[tool.uv]\npackage = false\n\n[[tool.uv.index]]\nname = "local"\n'
        f'url = "{agent_index["url"]}"\ndefault = true\n',
    )
    subprocess.run(
        [uv_binary(), "lock", "--offline", "--python", sys.executable],
        cwd=project,
        check=True,
        capture_output=True,
        timeout=300,
    )
    return project


def _moved(uv_lock: Path) -> None:
    text = uv_lock.read_text()
    text = re.sub(r'registry = "[^"]*"', f'registry = "{ELSEWHERE}"', text)
    text = re.sub(r'(?:url|path) = "[^"]*/([^/"]+\.whl)"', rf'url = "{ELSEWHERE}files/\1"', text)
    uv_lock.write_text(text)


def test_the_lock_from_the_configured_index_is_read(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = _locked(tmp_path, agent_index)
    code, report, _ = run_json("lock", "--check", str(project), "--index-url", agent_index["url"])
    assert findings(report, "AG107") == []
    assert [
        f["evidence"]["child"] for f in findings(report, "AG101") if f["severity"] == "high"
    ] == ["mcp"]
    assert code == 1


def test_a_lock_moved_to_an_unconfigured_index_is_high_not_unknown(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = _locked(tmp_path, agent_index)
    _moved(project / "uv.lock")

    # `check`, as CI runs it, with the index CI configures
    env = {**os.environ, "UV_DEFAULT_INDEX": agent_index["url"]}
    code, report, _ = run_json("check", str(project), env=env)

    got = findings(report, "AG107")
    assert [(f["severity"], f["message"], f["evidence"]) for f in got] == [
        (
            "high",
            f"uv.lock pins 4 packages from {ELSEWHERE}, an index not configured for this run "
            "(claude-agent-sdk==0.2.95, httpx-lite==1.0.0, mcp==2.1.0, typing-x==2.0.0): "
            "installing from this lock fetches them from there, and their declared ranges "
            "were not read.",
            {
                "file": "uv.lock",
                "index": ELSEWHERE,
                "packages": [
                    "claude-agent-sdk==0.2.95",
                    "httpx-lite==1.0.0",
                    "mcp==2.1.0",
                    "typing-x==2.0.0",
                ],
            },
        )
    ]
    assert all(loc["path"] == "uv.lock" and loc["line"] for loc in got[0]["locations"])
    assert findings(report, "AG105") == []  # (not "published only as an sdist")
    assert code == 1

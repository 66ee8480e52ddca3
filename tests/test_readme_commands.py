"""The README's first command, as a newcomer runs it: `agentguard lock examples/kontext-bot`
on a copy of the example, against the real package index and the real npm registry.

It must give a whole report (no failed source: a newcomer who meets "INCOMPLETE" on the
bundled example has learnt nothing), the incident's finding (AG101 on mcp, high, with the
fix that keeps mcp 1), exit 1, and the lock files the README names: until the example's
MCP server was a real package, this command ended 3 (the registry had no `@acme/...`)
while the README showed exit 1 and `0 failed`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _first_command() -> list[str]:
    """The agentguard part of the README's first set-up command, word for word."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    setup = readme.split("## Set up", 1)[1]
    block = re.search(r"```sh\n(.*?)\n```", setup, re.S)
    assert block is not None
    line = block.group(1).strip()
    assert line.startswith("python3 -m venv .venv && .venv/bin/pip install -q . && ")
    words = line.rsplit("&& ", 1)[1].split()
    assert words[:2] == [".venv/bin/agentguard", "lock"], words
    return words[1:]


@pytest.mark.network
def test_the_readmes_first_command_gives_the_incident_and_a_whole_report(
    tmp_path: Path,
) -> None:
    args = _first_command()
    assert args == ["lock", "examples/kontext-bot"]
    shutil.copytree(
        REPO / "examples",
        tmp_path / "examples",
        ignore=shutil.ignore_patterns("pylock.toml", "*.lock", "mcp.lock.json"),
    )
    out = tmp_path / "report.json"
    run = subprocess.run(
        [sys.executable, "-m", "agentguard", *args, "--format", "json", "--output", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    report = json.loads(out.read_text())
    failed = [s for s in report["sources"] if s["status"] != "ok"]
    assert failed == [], run.stderr[-2000:]
    assert report["complete"] is True
    assert run.returncode == 1, run.stderr[-2000:]
    incident = [
        f
        for f in report["findings"]
        if f["rule_id"] == "AG101" and f["evidence"].get("child") == "mcp"
    ]
    assert [f["severity"] for f in incident] == ["high"]
    assert incident[0]["fix"]["snippet"] == "mcp>=1.23.0,<2.0.0"
    example = tmp_path / "examples" / "kontext-bot"
    for name in ("requirements.lock", "pylock.toml", "mcp.lock.json"):
        assert (example / name).is_file(), name
    servers = json.loads((example / "mcp.lock.json").read_text())
    text = json.dumps(servers)
    assert "@modelcontextprotocol/server-memory" in text
    assert '"tree"' in text  # the server's own dependency tree, pinned

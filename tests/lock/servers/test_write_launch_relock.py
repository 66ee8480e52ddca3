"""`lock --write-launch` records the launches as it left them: a re-lock right after it
writes nothing (before, the lock kept each launch's old request, `null`, and the next
`lock` rewrote mcp.lock.json with no input changed)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, serve
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"


def test_a_relock_after_write_launch_is_a_no_op(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    build_wheel(wheels, "mcp-server-demo", "2.0.0")
    write_simple_index(wheels, tmp_path / "simple")
    index = (tmp_path / "simple").as_uri()
    project = tmp_path / "agent"
    project.mkdir()
    servers = {
        "tracker": {"command": "npx", "args": ["-y", NAME]},
        "demo": {"command": "uvx", "args": ["mcp-server-demo"]},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}, indent=2) + "\n")
    with serve(NpmRegistry({NAME: ["1.4.2", "2.0.1"]})) as registry:
        flags = ("--npm-registry", registry.url, "--index-url", index)
        code, report, _ = run_json("lock", "--write-launch", str(project), *flags)
        # (the launch as it was read admitted both majors: AG140, high)
        assert (code, [f["rule_id"] for f in report["findings"]]) == (1, ["AG140"])
        launches = json.loads((project / ".mcp.json").read_text())["mcpServers"]
        assert launches["tracker"]["args"] == ["-y", f"{NAME}@2.0.1"]
        assert launches["demo"]["args"] == ["--from", "mcp-server-demo==2.0.0", "mcp-server-demo"]
        written = (project / "mcp.lock.json").read_bytes()
        entries = {e["launch"]["server"]: e for e in json.loads(written)["servers"]}
        assert (entries["tracker"]["requested"], entries["demo"]["requested"]) == (
            "2.0.1",
            "==2.0.0",
        )
        assert (entries["tracker"]["majors"], entries["tracker"]["released-majors"]) == (
            ["2"],
            ["1", "2"],
        )
        code, report, _ = run_json("lock", str(project), *flags)
    assert code == 0
    assert (project / "mcp.lock.json").read_bytes() == written
    assert "mcp.lock.json is up to date (2 MCP server launch(es) pinned)." in report["notes"]

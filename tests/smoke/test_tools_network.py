"""Real servers from the real registries (CI runs these: marker `network`): `lock --smoke`
records the tools/list answers of an npm and a PyPI server; `check --smoke` then reports
an answer that differs from the recorded one, where the lock entry says where."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from agentguard.lock.servers.tools_lock import to_lock
from agentguard.smoke.tools import snapshot_of
from tests.lock.helpers import lock_complete, run_json

pytestmark = [pytest.mark.network, pytest.mark.usefixtures("isolated_cache")]

SERVERS = {
    "memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]},
    "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
}


def test_real_answers_are_recorded_and_a_changed_one_is_reported_by_check(tmp_path: Path) -> None:
    project = tmp_path / "agent"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": SERVERS}, indent=2) + "\n")
    code, report, _ = lock_complete("--smoke", "--write-launch", str(project))
    assert not [s for s in report["sources"] if s["status"] == "failed"], report["sources"]
    path = project / "mcp.lock.json"
    lock = json.loads(path.read_text())
    entries = {e["package"]: e for e in lock["servers"]}
    memory = entries["@modelcontextprotocol/server-memory"]["tools"]
    assert memory["recorded-with"] == entries["@modelcontextprotocol/server-memory"]["version"]
    assert "read_graph" in [t["name"] for t in memory["list"]]
    assert [t["name"] for t in entries["mcp-server-fetch"]["tools"]["list"]] == ["fetch"]

    # the answer recorded last time said less: what the server says now is a change
    answer = [
        {"name": t["name"], "description": t["description"],
         "inputSchema": json.loads(t["input-schema"]) if t["input-schema"] else None,
         "annotations": t["annotations"]}
        for t in memory["list"]
    ]  # fmt: skip
    older = next(t for t in answer if t["name"] == "read_graph")
    now = older["description"]
    older["description"] = "Read the graph."
    was = snapshot_of(answer, memory["server-version"])
    assert was is not None
    entry = entries["@modelcontextprotocol/server-memory"]
    entry["tools"] = to_lock(dataclasses.replace(was, recorded_with=memory["recorded-with"]))
    path.write_text(json.dumps(lock, indent=2) + "\n")

    code, report, _ = run_json("check", "--smoke", str(project))
    changed = [f for f in report["findings"] if f["rule_id"] == "AG145"]
    assert [(f["severity"], f["evidence"]["change"], f["evidence"]["tool"]) for f in changed] == [
        ("high", "description", "read_graph")
    ]
    assert changed[0]["evidence"]["old"] == "Read the graph."
    assert changed[0]["evidence"]["new"] == now
    assert changed[0]["locations"][1]["path"] == ".mcp.json"
    assert changed[0]["locations"][0]["path"] == "mcp.lock.json"
    assert code == 1

"""A real stdio MCP server whose tools/list answer is hostile: terminal escapes, workflow
commands, Markdown and HTML, a token, bidi controls, a lone surrogate, huge values and
more tools than the cap. What it says reaches mcp.lock.json (a committed file) and every
output format; the promise: bounded, redacted, escaped, never silently cut."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentguard.findings import Severity
from agentguard.provenance import make_report
from agentguard.report import Format, render
from agentguard.report.summary_md import render_summary
from agentguard.smoke.install import Options
from agentguard.smoke.run import SmokeOptions
from agentguard.smoke.step import smoke_step
from tests.hostile.test_runner_commands import forged
from tests.lock.helpers import run_cli, run_json
from tests.smoke.tools_servers import SEARCH, tracker_project, tracker_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

TOKEN = "ghp_" + "a1B2" * 9
HOSTILE = (
    "Search.\x1b]52;c;ZWNobw==\x07\x1b[2J\n::set-output name=pwned::1\r\n##[error]forged "
    f"[click](https://evil.example) <img src=x onerror=alert(1)> `tick` @here {TOKEN} "
    "\u202eevil\u202c \u2028 \ud800"
)
HIDDEN = ["\x1b", "\x07", "\u202e", "\u2028"]


def _lock_smoke(project: Path, wheels: Path, fmt: str = "json") -> tuple[int, str]:
    proc = run_cli(
        "lock", "--smoke", str(project), "--no-index", "--find-links", str(wheels), "-f", fmt
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc.returncode, proc.stdout


def test_a_hostile_answer_is_bounded_redacted_and_escaped_everywhere(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    many = [{"name": f"t{i:03}", "inputSchema": {"type": "object"}} for i in range(300)]
    huge = {**SEARCH, "name": "big", "description": "x" * 20000,
            "inputSchema": {"type": "object", "description": "y" * 20000}}  # fmt: skip
    tracker_wheel(wheels, [{**SEARCH, "description": HOSTILE}, huge, *many, "not a tool"])
    project = tracker_project(tmp_path / "agent")
    code, _ = _lock_smoke(project, wheels)
    assert code == 0
    raw = (project / "mcp.lock.json").read_bytes()
    text = raw.decode("utf-8")  # written whole: the lone surrogate is an escape, not a crash
    assert not any(h in text for h in HIDDEN) and TOKEN not in text
    assert "\\u001b]52;c;" in text and "\\u202e" in text and "\\ud800" in text
    tools = json.loads(text)["servers"][0]["tools"]
    assert tools["count"] == 302 and len(tools["list"]) == 256
    assert tools["truncated"] == [
        "the description of 'big': 20000 characters, 4096 kept",
        "the input schema of 'big': 20034 characters, not kept (over 16384)",
        "1 entry is not a tool (no name): not kept",
        "tools: 302 listed, the first 256 by name kept (the rest are in the digest only)",
    ]
    big = next(t for t in tools["list"] if t["name"] == "big")
    assert len(big["description"]) == 4096 and big["input-schema"] is None
    assert set(big) >= {"description-digest", "input-schema-digest"}
    search = next(t for t in tools["list"] if t["name"] == "search")
    assert "REDACTED" in search["description"] and "description-digest" in search

    # the same answer: byte for byte the same lock (caps and redaction are deterministic)
    assert _lock_smoke(project, wheels)[0] == 0
    assert (project / "mcp.lock.json").read_bytes() == raw

    # the hostile text moves: AG145 quotes old and new, and no channel carries it raw
    moved = HOSTILE.replace("Search.", "Find.")
    tracker_wheel(wheels, [{**SEARCH, "description": moved}, huge, *many, "not a tool"])
    code, out = _lock_smoke(project, wheels)
    assert code == 1
    report = json.loads(out)
    [finding] = [f for f in report["findings"] if f["rule_id"] == "AG145"]
    assert finding["severity"] == "high" and finding["evidence"]["change"] == "description"
    assert finding["message"].startswith(
        "MCP server 'tracker' (tracker-mcp) changed the description of tool 'search' from "
        "'Search.\\x1b]52;c;ZWNobw==\\x07\\x1b[2J\\n::set-output name=pwned::1\\r\\n##[error]"
    )
    for fmt in ("json", "sarif", "text"):
        code, out = _lock_smoke(project, wheels, fmt)
        assert code == 1 and "AG145" in out
        assert forged(out) == [], fmt
        assert TOKEN not in out and not any(h in out for h in HIDDEN), fmt
    assert (project / "mcp.lock.json").read_bytes() == raw

    opts = SmokeOptions(index=Options(find_links=(str(wheels),), no_index=True), timeout=120.0)
    step = smoke_step(project, opts, [])
    summary = render_summary(
        make_report("check", step.findings, step.sources, target=str(project)), Severity.HIGH
    )
    assert "AG145" in summary and forged(summary) == []
    assert "<img" not in summary and "](https://evil" not in summary and TOKEN not in summary
    assert not any(h in summary for h in HIDDEN)
    assert (
        render(make_report("check", step.findings, step.sources), Format.JSON).count("AG145") >= 1
    )


def test_a_change_past_the_cap_is_still_a_change(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    long = {**SEARCH, "description": "a" * 5000}
    tracker_wheel(wheels, [long])
    project = tracker_project(tmp_path / "agent")
    assert _lock_smoke(project, wheels)[0] == 0
    tracker_wheel(wheels, [{**long, "description": "a" * 4999 + "b"}])
    code, out = _lock_smoke(project, wheels)
    assert code == 1
    [finding] = [f for f in json.loads(out)["findings"] if f["rule_id"] == "AG145"]
    assert finding["message"].endswith(
        "(the change is in the part past the recorded cap) since mcp.lock.json recorded its "
        "tools/list answer."
    )
    assert re.search(r"from 'a{160}\.\.\.' to 'a{160}\.\.\.'", finding["message"])


def test_a_lock_whose_snapshot_breaks_the_caps_is_a_failed_source(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    tracker_wheel(wheels, [SEARCH])
    project = tracker_project(tmp_path / "agent")
    assert _lock_smoke(project, wheels)[0] == 0
    path = project / "mcp.lock.json"
    lock = json.loads(path.read_text())
    lock["servers"][0]["tools"]["list"][0]["description"] = "z" * 5000  # the PR's edit
    path.write_text(json.dumps(lock, indent=2))
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 3
    [failed] = [s for s in report["sources"] if s["status"] == "failed"]
    assert (failed["name"], failed["error_code"], failed["reason"]) == (
        "mcp.lock.json",
        "mcp-lock-malformed",
        "the MCP server lock could not be read: servers[0].tools.list[0].description: not a "
        "string of at most 4096 characters",
    )
    lock["lock-version"] = 1  # a version-1 lock never holds tools
    lock["servers"][0]["tools"]["list"][0]["description"] = SEARCH["description"]
    path.write_text(json.dumps(lock, indent=2))
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 3
    assert [s["reason"] for s in report["sources"] if s["status"] == "failed"] == [
        "the MCP server lock could not be read: an entry holds `tools`, which a lock of "
        "version 1 never does"
    ]

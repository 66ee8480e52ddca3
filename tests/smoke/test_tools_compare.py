"""The snapshot of a tools/list answer and AG145's comparison, as pure functions: caps,
digests, the hints as the MCP defaults read them, and the lock's round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.facts.mcp_tools import MAX_NOTES, ToolsCompared, ToolSnapshot
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.lock.servers.tools_lock import SnapshotError, entry_lines, from_lock, to_lock
from agentguard.rules.mcp_tools import McpToolsChanged, tools_drift_findings
from agentguard.smoke.tools import snapshot_of

TOOL: dict[str, Any] = {
    "name": "delete_page",
    "description": "Archive a page.",
    "inputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": False, "destructiveHint": False, "openWorldHint": False},
}


def snap(*tools: Any) -> ToolSnapshot:
    got = snapshot_of(list(tools), "1.0.0")
    assert got is not None
    return got


def compared(old: ToolSnapshot, new: ToolSnapshot) -> ToolsCompared:
    return ToolsCompared("wiki", "npm", "@acme/wiki-mcp", "2.0.1", "mcp.lock.json", 9,
                         ".mcp.json", 4, old, new)  # fmt: skip


def test_the_digest_is_over_the_answer_not_its_order_and_hints_must_be_booleans() -> None:
    other = {**TOOL, "name": "read_page"}
    assert snap(TOOL, other).digest == snap(other, TOOL).digest
    lax = snap({**TOOL, "annotations": {"readOnlyHint": "yes", "destructiveHint": 0}})
    assert lax.tools[0].hints == ()
    assert snapshot_of({"tools": "not a list"}) is None


def test_notes_are_capped_as_the_lock_reader_holds_them() -> None:
    long = [{"name": f"t{i}", "description": "d" * 5000} for i in range(100)]
    got = snap(*long)
    assert len(got.truncated) == MAX_NOTES
    assert got.truncated[-1] == "and 37 more cut values"
    assert from_lock(to_lock(got), "tools") == got  # what is written reads back


def test_one_servers_snapshot_is_bounded_as_written() -> None:
    """Escaped, a control character takes six bytes: 256 descriptions of 4096 of them would
    outgrow what the lock reader reads; the snapshot is cut by name, and says so."""
    loud = [{"name": f"t{i:03}", "description": "\x01" * 4096} for i in range(256)]
    got = snap(*loud)
    assert 0 < len(got.tools) < 256 and got.cut_at_tools
    assert got.truncated[-1] == (
        f"tools: {len(got.tools)} kept, by name: the next would take the recorded answer past "
        "512 KiB (the rest are in the digest only)"
    )
    assert len(json.dumps(to_lock(got))) <= 512 * 1024
    assert from_lock(to_lock(got), "tools") == got


def test_what_is_written_reads_back_and_an_edited_snapshot_does_not() -> None:
    odd = snap({**TOOL, "name": "bad\ud800name", "description": "key ghp_" + "a1B2" * 9}, 7)
    assert odd.tools[0].name == "bad\\ud800name" and odd.not_tools == 1
    assert from_lock(to_lock(odd), "tools") == odd
    whole = snap(TOOL)
    written = to_lock(whole)
    assert from_lock(written, "tools") == whole
    written["list"][0]["description"] = "Archive a page (harmless)."  # under the old digest
    with pytest.raises(
        SnapshotError, match=r"tools.list\[0\].digest: not the digest of the tool the entry shows"
    ):
        from_lock(written, "tools")
    written = to_lock(whole)
    written["digest"] = snap({**TOOL, "name": "other"}).digest
    with pytest.raises(SnapshotError, match=r"tools.digest: not the digest of the tools"):
        from_lock(written, "tools")


def test_a_tool_that_may_now_destroy_or_reach_out() -> None:
    now = {**TOOL, "annotations": {"readOnlyHint": False, "openWorldHint": True}}
    [destroys, reaches] = tools_drift_findings([compared(snap(TOOL), snap(now))])
    assert (destroys.severity, reaches.severity) == (Severity.HIGH, Severity.MEDIUM)
    assert destroys.message == (
        "MCP server 'wiki' (@acme/wiki-mcp) changed the annotations of tool 'delete_page': "
        "destructiveHint false -> absent (it may now destroy) since mcp.lock.json recorded its "
        "tools/list answer."
    )
    assert "openWorldHint false -> true (it may now reach out)" in reaches.message


def test_a_schema_change_and_a_removed_tool_with_their_whole_findings() -> None:
    old = snap(TOOL, {**TOOL, "name": "read_page"})
    old = ToolSnapshot(old.tools, old.digest, old.count, old.truncated, "1.0.0", "2.0.0")
    new = snap({**TOOL, "inputSchema": {"type": "object", "required": ["force"]}})
    found = tools_drift_findings([compared(old, new)])
    accept = f"agentguard lock --smoke --accept-tools @acme/wiki-mcp@{new.digest}"
    fix = Fix(
        "Review the change (a tool's description is what the model reads as instructions). "
        f"If it is expected, re-record the snapshot: `{accept}`; if not, launch the version "
        "that was recorded, or remove the server.",
        snippet=accept,
    )
    where = (
        Location(path="mcp.lock.json", line=9, note="MCP server 'wiki': tools"),
        Location(path=".mcp.json", line=4, note="MCP server 'wiki'"),
    )
    moved = " (recorded with @acme/wiki-mcp 2.0.0; the lock now holds 2.0.1)"
    digests = {"recorded_digest": old.digest, "live_digest": new.digest}
    assert found == [
        McpToolsChanged.finding(
            "MCP server 'wiki' (@acme/wiki-mcp) no longer lists 1 tool(s): 'read_page' since "
            f"mcp.lock.json recorded its tools/list answer{moved}.",
            locations=where, fix=fix, severity=Severity.LOW,
            evidence={"server": "wiki", "package": "@acme/wiki-mcp", "tool": None,
                      "change": "removed", "tools": ["read_page"], **digests},
        ),
        McpToolsChanged.finding(
            "MCP server 'wiki' (@acme/wiki-mcp) changed the input schema of tool 'delete_page' "
            f"since mcp.lock.json recorded its tools/list answer{moved}.",
            locations=where, fix=fix, severity=Severity.MEDIUM,
            evidence={"server": "wiki", "package": "@acme/wiki-mcp", "tool": "delete_page",
                      "change": "input-schema", "old": '{"type":"object"}',
                      "new": '{"required":["force"],"type":"object"}', **digests},
        ),
    ]  # fmt: skip
    assert all(isinstance(f, Finding) for f in found)


def test_a_change_outside_what_the_snapshot_shows_is_reported_not_dropped() -> None:
    old, new = snap(TOOL, "junk"), snap(TOOL, "other junk")
    [found] = tools_drift_findings([compared(old, new)])
    assert found.severity is Severity.MEDIUM and found.evidence["change"] == "set"
    assert tools_drift_findings([compared(old, old)]) == []


def test_two_tools_of_one_name_are_never_resolved_by_taking_the_first() -> None:
    old = snap(TOOL, {**TOOL, "description": "Archive it."})
    new = snap(TOOL, {**TOOL, "description": "Delete everything."})
    [found] = tools_drift_findings([compared(old, new)])
    assert (found.severity, found.evidence["change"]) == (Severity.HIGH, "duplicate")


def test_entry_lines_follow_the_servers_array_only() -> None:
    text = (
        '{\n  "note": "servers: [ {",\n  "other": [{"servers": [{}]}],\n  "servers": [\n'
        '    {"launch": {}},\n    {\n      "tools": {"list": [{"name": "x"}]}\n    }\n  ]\n}\n'
    )
    assert entry_lines(text) == [5, 6]


def test_recording_tools_leaves_the_attestations_beside_the_lock_as_they_are(
    tmp_path: Path,
) -> None:
    """The pins read back from the lock hold the attestations' digests, not the documents:
    recording a snapshot rewrites mcp.lock.json alone."""
    from agentguard.facts.mcp_pins import NPM, ServerPin
    from agentguard.facts.smoke import OK, Probe, SmokeFacts
    from agentguard.lock.servers import lockfile
    from agentguard.smoke.tools_step import compare_tools

    pin = ServerPin(NPM, "@acme/wiki-mcp", "2.0.1", "wiki", ".mcp.json", 4)
    lockfile.write_lock_only(tmp_path, [pin])
    sibling = tmp_path / "mcp.attestations.json"
    sibling.write_text('{"kept": "as it is"}\n')
    probe = Probe("stdio", "wiki", OK, "list-tools", ".mcp.json", 4, snapshot=snap(TOOL),
                  lock_key=pin.key)  # fmt: skip
    got = compare_tools(tmp_path, SmokeFacts(str(tmp_path), None, (probe,)), record=True)
    assert [(s.name, s.status.value) for s in got.sources] == [("mcp.lock.json", "ok")]
    assert sibling.read_text() == '{"kept": "as it is"}\n'
    recorded = lockfile.read(tmp_path)
    assert recorded is not None and recorded.pins[0].tools is not None
    assert recorded.pins[0].tools.digest == snap(TOOL).digest


def test_a_change_only_in_a_masked_secret_says_so_not_past_the_cap() -> None:
    """Two tokens are one mask: the change is reported (high), and said to be in the
    masked secret, where the reviewer cannot read it, not "past the cap" (it is not)."""
    old = snap({**TOOL, "description": "Use ghp_" + "a1B2" * 9})
    new = snap({**TOOL, "description": "Use ghp_" + "zzzz" * 9})
    [found] = tools_drift_findings([compared(old, new)])
    assert (found.severity, found.evidence["change"]) == (Severity.HIGH, "description")
    assert "from 'Use REDACTED' to 'Use REDACTED' (the change is in a secret the snapshot " in (
        found.message
    )

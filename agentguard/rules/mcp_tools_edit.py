"""AG146: a change (``check --base``) that re-records or removes the ``tools/list`` snapshot
``mcp.lock.json`` holds for an MCP server. The snapshot is the pull request's file too: a
change can record the malicious server's answer as the reviewed one (AG145 then compares
the server with it and sees nothing), or drop it (the next ``lock --smoke`` records what
the server answers, unreviewed). Facts in, findings out, no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.mcp_tools import ToolsCompared, ToolsDropped
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.mcp_tools import McpToolsSnapshotEdited, tools_drift_findings


def snapshot_edit_findings(
    edits: Iterable[ToolsCompared], dropped: Iterable[ToolsDropped]
) -> list[Finding]:
    """The changes of each re-recorded snapshot (AG145's comparison of the base's record
    with the head's, reported as AG146: ``base_ref`` is set), and each dropped one."""
    out = tools_drift_findings(e for e in edits if e.base_ref is not None)
    for d in dropped:
        out.append(
            McpToolsSnapshotEdited.finding(
                f"MCP server {d.server!r} ({d.package}): this change removes the tools/list "
                f"snapshot {d.lock_path} records for it ({d.recorded.count} tool(s) at "
                f"{d.base_ref}), so the next `agentguard lock --smoke` records whatever the "
                "server answers then, unreviewed.",
                locations=[
                    Location(path=d.lock_path, line=d.lock_line, note=f"MCP server {d.server!r}")
                ],
                fix=Fix(
                    f"Keep the recorded snapshot: restore the entry's `tools` in {d.lock_path} "
                    f"from {d.base_ref} (a changed server answer is re-recorded with "
                    "`agentguard lock --smoke --accept-tools` after review, never by removal)."
                ),
                evidence={
                    "server": d.server,
                    "package": d.package,
                    "change": "dropped",
                    "base": d.base_ref,
                    "recorded_digest": d.recorded.digest,
                },
                severity=Severity.HIGH,
            )
        )
    return out

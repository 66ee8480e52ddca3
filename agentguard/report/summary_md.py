"""A short Markdown summary of a ``check`` report, for ``$GITHUB_STEP_SUMMARY`` or a pull
request comment (``check --summary FILE``). Every value from the repository goes through
the Markdown escaper (:mod:`agentguard.escape`) after the redactor."""

from __future__ import annotations

from typing import Any

from agentguard import escape, redact
from agentguard.findings import Report, Severity, SourceStatus
from agentguard.report.delta_lines import (
    agent_lines,
    growth_lines,
    headline,
    lock_lines,
    resolved_lines,
)
from agentguard.report.delta_mermaid import render_delta_mermaid

_LISTED = 50  # findings listed one by one; the rest are counted


def render_summary(report: Report, fail_on: Severity) -> str:
    report = redact.scrub(report)
    q = escape.md_code
    delta: Any = report.facts.get("delta")
    active = report.active_findings()
    gating = [f for f in active if f.severity >= fail_on]
    growth = growth_lines(delta, q) if delta else []
    verdict = (
        "incomplete (a source could not be read)"
        if not report.complete
        else "fails"
        if gating or growth
        else "passes"
    )
    lines = [f"## agentguard check {escape.md_text(verdict)}", ""]
    if delta:
        lines += [headline(delta, q), ""]  # (our prose; its values are code spans)
    what = "New findings" if delta and (delta.get("base") or {}).get("compared") else "Findings"
    lines.append(f"### {what} ({len(active)})")
    for f in active[:_LISTED]:
        loc = f.locations[0].describe() if f.locations else "(no location)"
        lines.append(
            f"- **{f.severity.value.upper()}** {f.rule_id} {q(loc)}: {escape.md_text(f.title)}"
        )
    if len(active) > _LISTED:
        lines.append(f"- ... and {len(active) - _LISTED} more (see the full report)")
    if delta:
        for title, body in (
            ("Growth the policy forbids", growth),
            ("Resolved by this change (good news)", resolved_lines(delta, q)),
            ("Locks", lock_lines(delta, q)),
        ):
            if body:
                lines += ["", f"### {title}", *(f"- {b}" for b in body[:_LISTED])]
        agents = agent_lines(delta, q)
        if agents is None:
            lines += ["", "Agent capabilities: not compared."]
        elif not agents:
            lines += ["", "Agent capabilities: no change."]
        else:
            lines += ["", "### What each agent gains or loses", ""]
            lines += [f"- {x}" if not x.startswith("  ") else f"  - {x.strip()}" for x in agents]
            diagram = render_delta_mermaid(delta)
            if diagram is not None:  # (its labels hold no backtick: nothing closes the fence)
                lines += ["", "```mermaid", diagram.rstrip("\n"), "```"]
    failed = report.failed_sources
    skipped = sum(1 for s in report.sources if s.status is SourceStatus.SKIPPED)
    ok = len(report.sources) - len(failed) - skipped
    lines += ["", f"Sources: {ok} ok, {len(failed)} failed, {skipped} skipped."]
    for s in failed:
        lines.append(f"- failed: {q(s.kind)} {q(s.name)}: {escape.md_text(s.reason or '')}")
    return "\n".join(lines) + "\n"

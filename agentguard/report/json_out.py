"""Versioned JSON output. Readers key on ``schema``; fields are added, never renamed."""

from __future__ import annotations

import json

from agentguard.findings import JSONValue, Report

SCHEMA = "agentguard.report/1"


def report_to_json(report: Report) -> dict[str, JSONValue]:
    active = report.active_findings()
    counts: dict[str, int] = {}
    for f in active:
        counts[f.severity.value] = counts.get(f.severity.value, 0) + 1
    return {
        "schema": SCHEMA,
        "provenance": report.provenance.to_json(),
        "complete": report.complete,
        "summary": {
            "findings": len(active),
            "suppressed": len(report.findings) - len(active),
            "by_severity": counts,
            "failed_sources": len(report.failed_sources),
        },
        "sources": [s.to_json() for s in report.sources],
        "findings": [f.to_json() for f in report.findings],
        "facts": dict(report.facts),
        "notes": list(report.notes),
    }


def render_json(report: Report) -> str:
    return json.dumps(report_to_json(report), indent=2, sort_keys=False, default=str) + "\n"

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
        **({"status": report.status} if report.status is not None else {}),
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
        **(
            {"configuration": report.configuration.to_json()}
            if report.configuration is not None
            else {}
        ),
        **({"map": dict(report.map)} if report.map is not None else {}),
    }


_compact = json.JSONEncoder(separators=(", ", ": "), default=str).encode


def render_json(report: Report) -> str:
    """Indented at the top; each source, finding and fact entry is one line.

    (One line per entry keeps the output readable and diffable, and lets the C encoder
    do the work: a fully indented dump of a thousand findings is about 5 times slower.)
    """
    return _layout(report_to_json(report)) + "\n"


def _layout(doc: dict[str, JSONValue]) -> str:
    parts = []
    for key, value in doc.items():
        if isinstance(value, list) and value:
            inner = ",\n    ".join(_compact(v) for v in value)
            text = f"[\n    {inner}\n  ]"
        elif isinstance(value, dict) and value:
            inner = ",\n    ".join(f"{_compact(k)}: {_compact(v)}" for k, v in value.items())
            text = f"{{\n    {inner}\n  }}"
        else:
            text = _compact(value)
        parts.append(f"  {_compact(key)}: {text}")
    return "{\n" + ",\n".join(parts) + "\n}"

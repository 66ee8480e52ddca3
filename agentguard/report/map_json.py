"""``agentguard map --format json``: the provenance, the sources and the capability map
(its JSON form: :mod:`agentguard.facts.capabilities_json`). Schema:
``agentguard/schemas/map-1.json``."""

from __future__ import annotations

import json

from agentguard import escape
from agentguard.facts.capabilities import CapabilityMap
from agentguard.facts.capabilities_json import map_to_json
from agentguard.findings import JSONValue, Report

SCHEMA = "agentguard.map/1"


def render_map_json(report: Report, m: CapabilityMap | None) -> str:
    """``agentguard map --format json``: the provenance, every source read (ok, failed,
    skipped: a failed one means the map may miss an agent), and the map."""
    doc: dict[str, JSONValue] = {
        "schema": SCHEMA,
        "provenance": report.provenance.to_json(),
        "complete": report.complete,
        "sources": [s.to_json() for s in report.sources],
        "map": map_to_json(m) if m is not None else None,
    }
    return (
        escape.json_text(escape.json_hidden(json.dumps(doc, indent=2, ensure_ascii=False))) + "\n"
    )

"""SARIF 2.1.0 output (validated against the OASIS schema in the tests)."""

from __future__ import annotations

import json
from urllib.parse import quote

from agentguard import __version__
from agentguard.findings import Finding, JSONValue, Location, Report, Severity, SourceStatus
from agentguard.rules.base import REGISTRY, all_rules

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}


def _uri(path: str) -> str:
    return quote(path.lstrip("/") if path.startswith("/") else path, safe="/:._-~+@")


def _location(loc: Location) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {}
    if loc.path:
        phys: dict[str, JSONValue] = {"artifactLocation": {"uri": _uri(loc.path)}}
        if loc.line:
            region: dict[str, JSONValue] = {"startLine": loc.line}
            if loc.column:
                region["startColumn"] = loc.column
            phys["region"] = region
        out["physicalLocation"] = phys
    logical: list[JSONValue] = []
    if loc.dependency_path:
        logical.append({"fullyQualifiedName": " -> ".join(loc.dependency_path), "kind": "module"})
    if loc.layer:
        logical.append({"fullyQualifiedName": loc.layer, "kind": "layer"})
    if logical:
        out["logicalLocations"] = logical
    if loc.note:
        out["message"] = {"text": loc.note}
    return out


def _result(f: Finding, index: dict[str, int]) -> dict[str, JSONValue]:
    res: dict[str, JSONValue] = {
        "ruleId": f.rule_id,
        "level": _LEVEL[f.severity],
        "message": {"text": f"{f.message} Fix: {f.fix.description}"},
        "locations": [_location(loc) for loc in f.locations] or [],
        "partialFingerprints": {"agentguard/v1": f.fingerprint()},
        "properties": {
            "severity": f.severity.value,
            "confidence": f.confidence.value,
            "ambiguous": f.ambiguous,
            "evidence": dict(f.evidence),
            "fix": f.fix.to_json(),
        },
    }
    if f.rule_id in index:
        res["ruleIndex"] = index[f.rule_id]
    if f.suppressed is not None:
        # an inline `# agentguard: ignore[...]` comment is SARIF's "inSource"; config and
        # baseline suppressions live outside the analysed file ("external")
        kind = "inSource" if f.suppressed.startswith("inline:") else "external"
        res["suppressions"] = [{"kind": kind, "justification": f.suppressed}]
    return res


def report_to_sarif(report: Report) -> dict[str, JSONValue]:
    rules = all_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    driver_rules: list[JSONValue] = []
    for r in rules:
        doc = r.doc()
        driver_rules.append(
            {
                "id": r.id,
                "name": r.name,
                "shortDescription": {"text": r.title},
                "fullDescription": {"text": doc.split("\n\n", 1)[0] if doc else r.title},
                "help": {"text": doc or r.title, "markdown": doc or r.title},
                "helpUri": r.help_uri(),
                "defaultConfiguration": {"level": _LEVEL[r.default_severity]},
                "properties": {"severity": r.default_severity.value, "family": r.family},
            }
        )
    notifications: list[JSONValue] = []
    for s in report.sources:
        if s.status is SourceStatus.OK:
            continue
        notifications.append(
            {
                "level": "error" if s.status is SourceStatus.FAILED else "note",
                "message": {"text": f"{s.kind} {s.name}: {s.status.value}: {s.reason or ''}"},
                "descriptor": {"id": s.error_code or s.status.value},
                "properties": s.to_json(),
            }
        )
    run: dict[str, JSONValue] = {
        "tool": {
            "driver": {
                "name": "agentguard",
                "version": __version__,
                "semanticVersion": __version__,
                "informationUri": "https://github.com/agentguard/agentguard",
                "rules": driver_rules,
            }
        },
        "invocations": [
            {
                "executionSuccessful": report.complete,
                "endTimeUtc": report.provenance.made_at,
                "toolExecutionNotifications": notifications,
            }
        ],
        "results": [_result(f, index) for f in report.findings],
        "properties": {
            "provenance": report.provenance.to_json(),
            "sources": [s.to_json() for s in report.sources],
        },
    }
    assert set(REGISTRY) >= set(index)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def render_sarif(report: Report) -> str:
    return json.dumps(report_to_sarif(report), indent=2, default=str) + "\n"

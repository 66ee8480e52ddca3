"""SARIF 2.1.0 output, shaped for GitHub code scanning.

Validated against the OASIS schema and checked against the upload constraints GitHub
documents (a location on every result; at most 20 runs per file, 25,000 results and rules
per run, 1,000 locations per result, 20 tags per rule) in the tests. URIs are relative to
the repository root (:mod:`agentguard.report.sarif_where`); each rule carries
``security-severity`` and ``tags``; ``automationDetails.id`` names the command and the
target, so two uploads from one repository do not replace each other's alerts.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from pathlib import Path

from agentguard import DISTRIBUTION, __version__
from agentguard.findings import Finding, JSONValue, Location, Report, Severity, SourceStatus
from agentguard.report.sarif_where import Where, dependency_site
from agentguard.rules.base import REGISTRY, Rule, all_rules

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

# GitHub code scanning's documented hard limits (a file over them is rejected).
MAX_RESULTS_PER_RUN = 25_000
MAX_LOCATIONS_PER_RESULT = 1_000
# ... and what it displays: the locations beyond this many are not shown.
SHOWN_LOCATIONS = 100

_LEVEL = {
    Severity.CRITICAL: "error",
    Severity.HIGH: "error",
    Severity.MEDIUM: "warning",
    Severity.LOW: "note",
    Severity.INFO: "note",
}
# GitHub maps security-severity scores to critical (9.0+), high (7.0-8.9), medium (4.0-6.9)
# and low (0.1-3.9); an info rule has no security severity of its own.
SECURITY_SEVERITY = {
    Severity.CRITICAL: "9.5",
    Severity.HIGH: "8.0",
    Severity.MEDIUM: "5.5",
    Severity.LOW: "2.0",
    Severity.INFO: "0.0",
}
_FAMILY_TAGS = {"1": "supply-chain", "2": "filesystem", "3": "agent-tools", "4": "container"}


@functools.cache
def project_urls() -> dict[str, str]:
    """The project's URLs as its installed metadata declares them (label, lower case, without
    spaces, dashes or underscores -> URL); empty when it declares none."""
    from importlib import metadata

    try:
        meta = metadata.metadata(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return {}
    out: dict[str, str] = {}
    for entry in meta.get_all("Project-URL") or []:
        label, sep, url = entry.partition(",")
        if sep and url.strip().startswith("https://"):
            key = "".join(c for c in label.lower() if c.isalnum())
            out.setdefault(key, url.strip())
    home = next(iter(meta.get_all("Home-page") or []), None)
    if home and home.startswith("https://"):
        out.setdefault("homepage", home)
    return out


def home_page() -> str | None:
    urls = project_urls()
    for key in ("homepage", "home", "documentation", "docs", "repository", "source"):
        if key in urls:
            return urls[key]
    return None


def help_uri(rule: type[Rule]) -> str | None:
    """The rule's page where the project publishes its rule pages (a ``Rules`` project URL,
    the folder of ``docs/rules``), else the project's home page, else none: the rule page
    itself always travels in ``help``."""
    rules = project_urls().get("rules")
    if rules:
        return f"{rules.rstrip('/')}/{rule.id}.md"
    return home_page()


def rule_tags(rule: type[Rule]) -> list[str]:
    tags = ["security", rule.family]
    family_tag = _FAMILY_TAGS.get(rule.id[2:3])
    if family_tag and family_tag not in tags:
        tags.append(family_tag)
    return tags


def _location(loc: Location, where: Where, used: set[str]) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {}
    if loc.path:
        artifact = where.artifact(loc.path, in_image=loc.layer is not None)
        if "uriBaseId" in artifact:
            used.add(str(artifact["uriBaseId"]))
        phys: dict[str, JSONValue] = {"artifactLocation": artifact}
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


def _locations(
    f: Finding, report: Report, where: Where, used: set[str]
) -> tuple[list[JSONValue], int]:
    """Every result has a physical location first (GitHub shows the first one): the finding's
    own file, else the requirement or pin for a dependency finding, else the target."""
    locs = list(f.locations[:MAX_LOCATIONS_PER_RESULT])
    left_out = len(f.locations) - len(locs)
    out = [_location(loc, where, used) for loc in locs]
    if not any("physicalLocation" in o for o in out):
        site = dependency_site(f, report)
        if site is not None:
            phys = _location(site, where, used)["physicalLocation"]
        else:
            artifact = where.target_artifact(f)
            used.add(str(artifact.get("uriBaseId", "")))
            phys = {"artifactLocation": artifact}
        if out:
            out[0] = {"physicalLocation": phys, **out[0]}
        else:
            out = [{"physicalLocation": phys}]
    else:
        first = next(i for i, o in enumerate(out) if "physicalLocation" in o)
        out.insert(0, out.pop(first))
    return list(out), left_out


def _result(
    f: Finding, index: dict[str, int], report: Report, where: Where, used: set[str]
) -> dict[str, JSONValue]:
    locations, left_out = _locations(f, report, where, used)
    res: dict[str, JSONValue] = {
        "ruleId": f.rule_id,
        "level": _LEVEL[f.severity],
        "message": {"text": f"{f.message} Fix: {f.fix.description}"},
        "locations": locations,
        "partialFingerprints": {"agentguard/v1": f.fingerprint()},
        "properties": {
            "severity": f.severity.value,
            "confidence": f.confidence.value,
            "ambiguous": f.ambiguous,
            "evidence": dict(f.evidence),
            "fix": f.fix.to_json(),
        },
    }
    if left_out:
        res["properties"]["locations_left_out"] = left_out
    if f.rule_id in index:
        res["ruleIndex"] = index[f.rule_id]
    if f.suppressed is not None:
        # an inline `# agentguard: ignore[...]` comment is SARIF's "inSource"; config and
        # baseline suppressions live outside the analysed file ("external")
        kind = "inSource" if f.suppressed.startswith("inline:") else "external"
        res["suppressions"] = [{"kind": kind, "justification": f.suppressed}]
    return res


def _rule(r: type[Rule]) -> dict[str, JSONValue]:
    doc = r.doc()
    entry: dict[str, JSONValue] = {
        "id": r.id,
        "name": r.name,
        "shortDescription": {"text": r.title},
        "fullDescription": {"text": doc.split("\n\n", 1)[0] if doc else r.title},
        "help": {"text": doc or r.title, "markdown": doc or r.title},
        "defaultConfiguration": {"level": _LEVEL[r.default_severity]},
        "properties": {
            "security-severity": SECURITY_SEVERITY[r.default_severity],
            "tags": rule_tags(r),
            "severity": r.default_severity.value,
            "family": r.family,
        },
    }
    uri = help_uri(r)
    if uri is not None:
        entry["helpUri"] = uri
    return entry


def automation_id(report: Report, where: Where) -> str:
    """``agentguard/<command>/<target>/``: GitHub takes what comes before the last ``/`` as
    the analysis category, so each command on each target keeps its own alerts."""
    command = "-".join(report.provenance.command.replace("-", " ").split())
    return "/".join(part for part in ("agentguard", command, where.target) if part) + "/"


def report_to_sarif(report: Report, *, sarif_root: Path | None = None) -> dict[str, JSONValue]:
    rules = all_rules()
    index = {r.id: i for i, r in enumerate(rules)}
    where = Where.of(report, sarif_root)
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
    findings = report.findings[:MAX_RESULTS_PER_RUN]  # worst first: the rest is the least bad
    if len(report.findings) > len(findings):
        left_out = len(report.findings) - len(findings)
        notifications.append(
            {
                "level": "warning",
                "message": {
                    "text": f"{left_out} results (the least severe) left out of this file: "
                    f"code scanning rejects a run with more than {MAX_RESULTS_PER_RUN}; "
                    "the JSON report has them all"
                },
                "descriptor": {"id": "results-left-out"},
            }
        )
    config_notes = _configuration_notifications(report)
    used: set[str] = set()
    results = [_result(f, index, report, where, used) for f in findings]
    driver: dict[str, JSONValue] = {
        "name": "agentguard",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [_rule(r) for r in rules],
    }
    home = home_page()
    if home is not None:
        driver["informationUri"] = home
    run: dict[str, JSONValue] = {
        "tool": {"driver": driver},
        "automationDetails": {"id": automation_id(report, where)},
        "originalUriBaseIds": where.original_uri_base_ids(used),
        "invocations": [
            {
                "executionSuccessful": report.complete,
                "endTimeUtc": report.provenance.made_at,
                "toolExecutionNotifications": notifications,
                "toolConfigurationNotifications": config_notes,
            }
        ],
        "results": results,
        "properties": {
            "provenance": report.provenance.to_json(),
            "sources": [s.to_json() for s in report.sources],
            **(
                {"configuration": report.configuration.to_json()}
                if report.configuration is not None
                else {}
            ),
        },
    }
    assert set(REGISTRY) >= set(index)
    return {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}


def _configuration_notifications(report: Report) -> list[JSONValue]:
    """The configuration the run used, where it came from and what it changed: a warning
    when the scanned folder's own file changed findings (on a pull request, the PR's)."""
    trace = report.configuration
    if trace is None:
        return []
    changed = trace.changed > 0
    level = "warning" if changed and trace.origin == "project" else "note"
    out: list[JSONValue] = [
        {
            "level": level,
            "message": {"text": trace.describe()},
            "descriptor": {"id": f"config-{trace.origin}"},
            "properties": trace.to_json(),
        }
    ]
    return out


def catalogue_to_sarif(rules: Sequence[type[Rule]]) -> dict[str, JSONValue]:
    """The rules described, nothing reported (``rules``/``explain --format sarif``)."""
    driver: dict[str, JSONValue] = {
        "name": "agentguard",
        "version": __version__,
        "semanticVersion": __version__,
        "rules": [_rule(r) for r in rules],
    }
    home = home_page()
    if home is not None:
        driver["informationUri"] = home
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": []}],
    }


def render_sarif(report: Report, *, sarif_root: Path | None = None) -> str:
    return json.dumps(report_to_sarif(report, sarif_root=sarif_root), indent=2, default=str) + "\n"

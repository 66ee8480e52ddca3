"""What GitHub code scanning requires of an uploaded SARIF file, beyond the OASIS schema.

From GitHub's documentation ("SARIF support for code scanning" and "SARIF results exceed
limits"), the hard limits, over which an upload is rejected: 20 runs per file, 25,000
results per run, 25,000 rules per run, 100 tool extensions per run, 1,000 locations per
result, 20 tags per rule. And from the upload itself: a result without a location is
refused ("expected at least one location"); the first location's
``physicalLocation.artifactLocation.uri`` is the file the alert is shown on, a path from
the repository root; ``security-severity`` is a number from 0.0 to 10.0 written as a string.
"""

from __future__ import annotations

import re
from typing import Any

import jsonschema

MAX_RUNS = 20
MAX_RESULTS = 25_000
MAX_RULES = 25_000
MAX_EXTENSIONS = 100
MAX_LOCATIONS = 1_000
MAX_TAGS = 20

_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def github_upload_problems(doc: dict[str, Any]) -> list[str]:
    """Every reason GitHub code scanning would refuse or misplace this SARIF log."""
    problems: list[str] = []
    if doc.get("version") != "2.1.0":
        problems.append(f"version {doc.get('version')!r}, not 2.1.0")
    runs = doc.get("runs", [])
    if len(runs) > MAX_RUNS:
        problems.append(f"{len(runs)} runs > {MAX_RUNS}")
    for r, run in enumerate(runs):
        driver = run["tool"]["driver"]
        rules = driver.get("rules", [])
        if len(rules) > MAX_RULES:
            problems.append(f"run {r}: {len(rules)} rules > {MAX_RULES}")
        if len(run["tool"].get("extensions", [])) > MAX_EXTENSIONS:
            problems.append(f"run {r}: more than {MAX_EXTENSIONS} extensions")
        if not run.get("automationDetails", {}).get("id"):
            problems.append(f"run {r}: no automationDetails.id (uploads would replace each other)")
        for rule in rules:
            props = rule.get("properties", {})
            tags = props.get("tags")
            if not tags or len(tags) > MAX_TAGS:
                problems.append(f"rule {rule['id']}: tags {tags!r}")
            sev = props.get("security-severity")
            try:
                ok = isinstance(sev, str) and 0.0 <= float(sev) <= 10.0
            except ValueError:
                ok = False
            if not ok:
                problems.append(f"rule {rule['id']}: security-severity {sev!r}")
            uri = rule.get("helpUri")
            if uri is not None and not uri.startswith("https://"):
                problems.append(f"rule {rule['id']}: helpUri {uri!r}")
        bases = run.get("originalUriBaseIds", {})
        results = run.get("results", [])
        if len(results) > MAX_RESULTS:
            problems.append(f"run {r}: {len(results)} results > {MAX_RESULTS}")
        for i, res in enumerate(results):
            where = f"run {r} result {i} ({res.get('ruleId')})"
            if not res.get("ruleId") or not res.get("message", {}).get("text"):
                problems.append(f"{where}: no ruleId or message text")
            locs = res.get("locations") or []
            if not locs:
                problems.append(f"{where}: no location")
                continue
            if len(locs) > MAX_LOCATIONS:
                problems.append(f"{where}: {len(locs)} locations > {MAX_LOCATIONS}")
            art = locs[0].get("physicalLocation", {}).get("artifactLocation", {})
            uri = art.get("uri")
            if not uri:
                problems.append(f"{where}: first location has no artifactLocation.uri")
            elif _SCHEME.match(uri) and not uri.startswith("file:///"):
                problems.append(f"{where}: uri {uri!r} reads as a URI scheme")
            elif uri.startswith("/") or uri.startswith("../"):
                problems.append(f"{where}: uri {uri!r} is not relative to the repository")
            base = art.get("uriBaseId")
            if base is not None and base not in bases:
                problems.append(f"{where}: uriBaseId {base!r} not in originalUriBaseIds")
            region = locs[0].get("physicalLocation", {}).get("region")
            if region is not None and region.get("startLine", 1) < 1:
                problems.append(f"{where}: startLine {region.get('startLine')}")
    return problems


def assert_uploadable(doc: dict[str, Any], schema: dict[str, Any]) -> None:
    """Valid SARIF 2.1.0 and within GitHub's documented upload constraints."""
    jsonschema.validate(doc, schema)
    assert github_upload_problems(doc) == []

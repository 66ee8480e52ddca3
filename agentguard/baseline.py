"""Baselines: the findings a team accepted when adopting the gate, by stable fingerprint.

A baseline is JSON (``schema: agentguard.baseline/1``) listing each accepted finding's
:meth:`~agentguard.findings.Finding.fingerprint` (rule, where without line numbers, and
evidence) with its rule and a location summary for people reading the file. A finding
whose fingerprint is in the baseline is kept in the report, suppressed with the reason
``baseline``. Fingerprints are counted: a baseline holding one finding with fingerprint
F suppresses one such finding, and a second, new occurrence stays active.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentguard import __version__, redact, safeio
from agentguard.errors import UsageError
from agentguard.findings import Finding, JSONValue

BASELINE_SCHEMA = "agentguard.baseline/1"
MAX_BASELINE_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True)
class BaselineEntry:
    fingerprint: str
    rule_id: str
    title: str
    location: str

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "fingerprint": self.fingerprint,
            "rule_id": self.rule_id,
            "title": self.title,
            "location": self.location,
        }


@dataclass(frozen=True)
class Baseline:
    path: str
    entries: tuple[BaselineEntry, ...]

    def counts(self) -> Counter[str]:
        return Counter(e.fingerprint for e in self.entries)


def entry_for(finding: Finding) -> BaselineEntry:
    where = "; ".join(loc.describe() for loc in finding.locations) or "(no location)"
    return BaselineEntry(finding.fingerprint(), finding.rule_id, finding.title, where)


def render_baseline(findings: Iterable[Finding]) -> str:
    """The baseline file for ``findings`` (deterministic: no timestamps, sorted)."""
    entries = sorted(
        (entry_for(f) for f in findings), key=lambda e: (e.rule_id, e.location, e.fingerprint)
    )
    doc = {
        "schema": BASELINE_SCHEMA,
        "tool_version": __version__,
        "findings": [e.to_json() for e in entries],
    }
    return json.dumps(redact.scrub(doc), indent=2) + "\n"


def write_baseline(path: Path, findings: Iterable[Finding]) -> int:
    text = render_baseline(findings)
    try:
        safeio.write_output(path, text)
    except OSError as exc:
        raise UsageError(f"cannot write the baseline to {path}: {exc}") from None
    return text.count('"fingerprint"')


def read_baseline(path: Path) -> Baseline:
    """Read and validate a baseline; any problem is a usage error naming the file."""
    try:
        if path.stat().st_size > MAX_BASELINE_BYTES:
            raise UsageError(f"{path}: baseline larger than {MAX_BASELINE_BYTES} bytes")
        doc = json.loads(safeio.read_text(path, cap=MAX_BASELINE_BYTES))
    except FileNotFoundError:
        raise UsageError(
            f"{path}: no such baseline (write one with --write-baseline {path})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: cannot read the baseline: {exc}") from None
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path}: the baseline is not valid JSON: {exc}") from None
    except RecursionError:
        raise UsageError(f"{path}: the baseline is nested too deeply to read") from None
    if not isinstance(doc, dict) or doc.get("schema") != BASELINE_SCHEMA:
        found = doc.get("schema") if isinstance(doc, dict) else type(doc).__name__
        raise UsageError(
            f"{path}: not an agentguard baseline (schema {found!r}, expected {BASELINE_SCHEMA!r})"
        )
    raw = doc.get("findings")
    if not isinstance(raw, list):
        raise UsageError(f"{path}: `findings` must be a list")
    entries: list[BaselineEntry] = []
    for i, item in enumerate(raw):
        fields = ("fingerprint", "rule_id", "title", "location")
        if not isinstance(item, dict) or not all(isinstance(item.get(k), str) for k in fields):
            raise UsageError(f"{path}: findings[{i}] needs the string fields {', '.join(fields)}")
        entries.append(BaselineEntry(*(item[k] for k in fields)))
    return Baseline(str(path), tuple(entries))

"""The findings model: what every command produces and every output format renders.

Findings, sources and the report are plain frozen data. Gathering code records a
:class:`Source` for everything it tried to read; rules turn facts into
:class:`Finding` objects; :mod:`agentguard.report` renders them. Nothing here does I/O.
A report's configuration trace is :mod:`agentguard.config_trace` (re-exported here).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.config_trace import ConfigTrace as ConfigTrace
from agentguard.remedies import remedy_for
from agentguard.severity import Severity as Severity

JSONValue = Any  # str | int | float | bool | None | list[JSONValue] | dict[str, JSONValue]


class Confidence(enum.Enum):
    """How sure the rule is that the finding is real (low where a value was unknown)."""

    LOW = "low"
    MEDIUM = "medium"
    HIGH = "high"


class SourceStatus(enum.Enum):
    OK = "ok"
    FAILED = "failed"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Location:
    """Where the evidence is. Any combination of the fields may be set.

    ``path``/``line`` for a file, ``layer`` (digest) plus ``path`` inside an image,
    ``dependency_path`` for a chain of requirements from the project.
    """

    path: str | None = None
    line: int | None = None
    column: int | None = None
    layer: str | None = None
    dependency_path: tuple[str, ...] = ()
    note: str | None = None

    def describe(self) -> str:
        parts: list[str] = []
        if self.layer:
            parts.append(f"layer {self.layer[:19]}")
        if self.path:
            parts.append(f"{self.path}:{self.line}" if self.line else self.path)
        if self.dependency_path:
            parts.append(" -> ".join(self.dependency_path))
        if self.note:
            parts.append(self.note)
        return ", ".join(parts) or "(no location)"

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {}
        if self.path is not None:
            out["path"] = self.path
        if self.line is not None:
            out["line"] = self.line
        if self.column is not None:
            out["column"] = self.column
        if self.layer is not None:
            out["layer"] = self.layer
        if self.dependency_path:
            out["dependency_path"] = list(self.dependency_path)
        if self.note is not None:
            out["note"] = self.note
        return out


@dataclass(frozen=True)
class Fix:
    """What to do instead, as an imperative sentence, with an optional concrete snippet."""

    description: str
    snippet: str | None = None
    safe: bool = False

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"description": self.description, "safe": self.safe}
        if self.snippet is not None:
            out["snippet"] = self.snippet
        return out


@dataclass(frozen=True)
class Finding:
    rule_id: str
    title: str
    severity: Severity
    confidence: Confidence
    message: str
    locations: tuple[Location, ...]
    fix: Fix
    evidence: Mapping[str, JSONValue] = field(default_factory=dict)
    ambiguous: bool = False
    suppressed: str | None = None  # why, when suppressed by config, inline comment or baseline
    # where the evidence lives (production, example, test, docs), set from the path and
    # the configuration when the run's policy is applied; None before that
    context: str | None = None
    # what the finding is about when several rules speak of one thing (an agent
    # configuration): the text report shows them as one entry. A rendering hint only.
    subject: str | None = None

    def with_suppression(self, reason: str) -> Finding:
        return _replace(self, suppressed=reason)

    def with_severity(self, severity: Severity) -> Finding:
        return _replace(self, severity=severity)

    def with_subject(self, subject: str) -> Finding:
        return _replace(self, subject=subject)

    def with_context(self, context: str, severity: Severity | None = None) -> Finding:
        return _replace(self, context=context, severity=severity or self.severity)

    def fingerprint(self) -> str:
        """Stable identity for baselines: rule, where (without line numbers), and evidence."""
        import hashlib
        import json

        where = [
            {k: v for k, v in loc.to_json().items() if k not in ("line", "column")}
            for loc in self.locations
        ]
        blob = json.dumps(
            {"rule": self.rule_id, "where": where, "evidence": self.evidence},
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def to_json(self) -> dict[str, JSONValue]:
        out = self._json()
        # production is the default: only another context is written (absent = production),
        # so reports of production code read as they always have
        if self.context is not None and self.context != "production":
            out["context"] = self.context
        return out

    def _json(self) -> dict[str, JSONValue]:
        return {
            "rule_id": self.rule_id,
            "title": self.title,
            "severity": self.severity.value,
            "confidence": self.confidence.value,
            "message": self.message,
            "locations": [loc.to_json() for loc in self.locations],
            "evidence": dict(self.evidence),
            "fix": self.fix.to_json(),
            "ambiguous": self.ambiguous,
            "suppressed": self.suppressed,
            "fingerprint": self.fingerprint(),
        }


def _replace(finding: Finding, **changes: Any) -> Finding:
    """``dataclasses.replace`` for the fields the ``with_*`` methods set, five times faster
    (the rules and the policy make one or two per finding): a copy of the fields with
    those changed. (Finding has no ``__post_init__`` and every field is an ``__init__``
    one: a test holds it to that, and to giving what ``dataclasses.replace`` gives.)"""
    new = object.__new__(type(finding))
    new.__dict__.update(finding.__dict__, **changes)
    return new


MAX_REASON = 400  # characters of a failed source's reason


@dataclass(frozen=True)
class Source:
    """One thing a command read (or tried to): an index, the engine, a layer, a file.

    A failed source is never an empty result: it makes the report incomplete.
    """

    kind: str  # "index", "resolver", "engine", "image", "layer", "file", "lockfile", ...
    name: str
    status: SourceStatus
    reason: str | None = None
    error_code: str | None = (
        None  # stable machine-readable code for failures, e.g. "index-unreachable"
    )
    retryable: bool | None = None  # None: unknown
    remedy: str | None = None

    @classmethod
    def ok(cls, kind: str, name: str, reason: str | None = None) -> Source:
        return cls(kind, name, SourceStatus.OK, reason)

    @classmethod
    def failed(
        cls,
        kind: str,
        name: str,
        reason: str,
        *,
        error_code: str,
        retryable: bool | None = None,
        remedy: str | None = None,
    ) -> Source:
        remedy = remedy or remedy_for(error_code)  # every failure says what to do instead
        if "\n" in reason or "\r" in reason:  # a reason is one line (parsers write several)
            reason = " ".join(part.strip() for part in reason.splitlines() if part.strip())
        if len(reason) > MAX_REASON:  # a reason quoting a whole hostile file is cut short
            reason = reason[: MAX_REASON - 150] + " ... (cut) ... " + reason[-135:]
        return cls(kind, name, SourceStatus.FAILED, reason, error_code, retryable, remedy)

    @classmethod
    def skipped(cls, kind: str, name: str, reason: str) -> Source:
        return cls(kind, name, SourceStatus.SKIPPED, reason)

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "kind": self.kind,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
        }
        if self.status is SourceStatus.FAILED:
            out["error_code"] = self.error_code
            out["retryable"] = self.retryable
            out["remedy"] = self.remedy
        return out


@dataclass(frozen=True)
class Provenance:
    """When and from what a report was made."""

    command: str
    tool_version: str
    made_at: str  # RFC 3339, UTC
    target: str | None = None
    inputs: Mapping[str, JSONValue] = field(default_factory=dict)  # digests, input hashes

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "command": self.command,
            "tool_version": self.tool_version,
            "made_at": self.made_at,
            "target": self.target,
            "inputs": dict(self.inputs),
        }


@dataclass(frozen=True)
class Report:
    provenance: Provenance
    findings: tuple[Finding, ...]
    sources: tuple[Source, ...]
    facts: Mapping[str, JSONValue] = field(default_factory=dict)  # extra data for JSON readers
    notes: tuple[str, ...] = ()  # human notes (e.g. "lock written to ...")
    # What a command that writes did (`lock`): "written", "up-to-date", "refused" (the major
    # gate stopped it: nothing written) or "not-written" (a source or the write failed).
    status: str | None = None
    configuration: ConfigTrace | None = None  # None: the command applies no configuration
    map: Mapping[str, JSONValue] | None = None  # the agent capability map (inspect, check)

    @property
    def failed_sources(self) -> list[Source]:
        return [s for s in self.sources if s.status is SourceStatus.FAILED]

    @property
    def complete(self) -> bool:
        return not self.failed_sources

    def active_findings(self) -> list[Finding]:
        return [f for f in self.findings if f.suppressed is None]

    def worst(self) -> Severity | None:
        active = self.active_findings()
        return max((f.severity for f in active), default=None)


def sort_findings(findings: Iterable[Finding]) -> tuple[Finding, ...]:
    """Deterministic order: worst first, then rule id, then location."""

    def key(f: Finding) -> tuple[int, str, str, str]:
        loc = f.locations[0].describe() if f.locations else ""
        return (-f.severity.rank, f.rule_id, loc, f.message)

    return tuple(sorted(findings, key=key))


def merge_sources(*groups: Sequence[Source]) -> tuple[Source, ...]:
    out: list[Source] = []
    for g in groups:
        out.extend(g)
    return tuple(out)

"""Making a report: the findings sorted, stamped with what made it and when."""

from __future__ import annotations

import datetime as _dt
from collections.abc import Iterable, Mapping

from agentguard import __version__
from agentguard.findings import (
    ConfigTrace,
    Finding,
    JSONValue,
    Provenance,
    Report,
    Source,
    sort_findings,
)


def now_utc() -> str:
    return (
        _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat().replace("+00:00", "Z")
    )


def make_report(
    command: str,
    findings: Iterable[Finding],
    sources: Iterable[Source],
    *,
    target: str | None = None,
    inputs: Mapping[str, JSONValue] | None = None,
    facts: Mapping[str, JSONValue] | None = None,
    notes: Iterable[str] = (),
    status: str | None = None,
    configuration: ConfigTrace | None = None,
    agent_map: Mapping[str, JSONValue] | None = None,
) -> Report:
    return Report(
        provenance=Provenance(
            command=command,
            tool_version=__version__,
            made_at=now_utc(),
            target=target,
            inputs=dict(inputs or {}),
        ),
        findings=sort_findings(findings),
        sources=tuple(sources),
        facts=dict(facts or {}),
        notes=tuple(notes),
        status=status,
        configuration=configuration,
        map=agent_map,
    )

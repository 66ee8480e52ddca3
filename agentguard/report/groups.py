"""Which findings the text report shows as one entry: those about one subject (an agent
configuration that several rules speak of). Findings stay separate data; this is layout."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.findings import Finding


def grouped(findings: Iterable[Finding]) -> list[list[Finding]]:
    """Findings in report order, those sharing a subject gathered at the first one's place
    (the report is sorted worst first, so a group sits where its worst finding does)."""
    out: list[list[Finding]] = []
    by_subject: dict[tuple[str, bool], list[Finding]] = {}
    for f in findings:
        if f.subject is None:
            out.append([f])
            continue
        key = (f.subject, f.suppressed is not None)
        group = by_subject.get(key)
        if group is None:
            group = by_subject[key] = []
            out.append(group)
        group.append(f)
    return out

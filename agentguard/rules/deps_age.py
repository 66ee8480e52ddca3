"""AG106 over lock facts: every locked release younger than seven days (no I/O).

The rule class is :class:`agentguard.rules.deps.YoungRelease`. Upload times come from the
index (PEP 691/700 ``upload-time``) through the lock's gatherers; the time of the run is a
fact passed in, so the rule itself reads no clock.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping

from agentguard.facts.environments import quoted_for_toml
from agentguard.facts.graph import LockGraph
from agentguard.facts.times import parse_time
from agentguard.findings import Finding, Fix, Location
from agentguard.rules.deps import YoungRelease

YOUNG = dt.timedelta(days=7)


def _age_text(age: dt.timedelta) -> str:
    hours = int(age.total_seconds() // 3600)
    return f"{hours // 24} days {hours % 24} hours" if hours >= 24 else f"{max(hours, 0)} hours"


def check_young_releases(
    graph: LockGraph,
    uploaded: Mapping[tuple[str, str], str | None],
    now: dt.datetime,
    min_release_age: str | None = None,
) -> tuple[list[Finding], int]:
    """AG106 for each pin uploaded less than seven days before ``now``; and how many pins
    have no known upload time."""
    findings: list[Finding] = []
    unknown = 0
    seen: set[tuple[str, str]] = set()
    for pin in sorted(graph.packages, key=lambda p: (p.name, p.version, p.marker or "")):
        key = (pin.name, pin.version)
        when = parse_time(uploaded.get(key))
        if when is None:
            unknown += key not in seen
            seen.add(key)
            continue
        age = now - when
        if age >= YOUNG:
            continue
        shown = f"{pin.name}=={pin.version}" + (
            f" ; {quoted_for_toml(pin.marker)}" if pin.marker else ""
        )
        findings.append(
            YoungRelease.finding(
                f"{shown} was uploaded {_age_text(age)} ago ({when.isoformat()}), less than "
                "seven days: a new release is where a compromised upload lands first.",
                locations=[Location(dependency_path=graph.path_to(pin.name))],
                fix=Fix(
                    f"Review {pin.name} {pin.version} before you deploy it, or lock with "
                    '`--min-release-age 7d` (`min-release-age = "7d"` in [tool.agentguard]) '
                    "to take only releases that have been out a week."
                ),
                evidence={
                    "package": pin.name,
                    "version": pin.version,
                    "marker": pin.marker,
                    "uploaded": when.isoformat(),
                    "age_hours": int(age.total_seconds() // 3600),
                    "min_release_age": min_release_age,
                },
            )
        )
    return findings, unknown

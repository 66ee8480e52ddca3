"""What the dependency rules (AG1xx) are told by the configuration: the watched packages,
the ranges accepted as spanning majors, and the severities. Filled by :mod:`agentguard.config`."""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.facts.names import canonical_name as canonical_name
from agentguard.severity import Severity


@dataclass(frozen=True)
class DepsPolicy:
    watched: frozenset[str]
    span_accepted: frozenset[str]
    watched_severity: Severity  # the child is on the watched list
    watched_parent_severity: Severity  # only the parent is on it (e.g. an SDK's own web stack)
    tail_severity: Severity

    def is_watched(self, name: str) -> bool:
        return canonical_name(name) in self.watched

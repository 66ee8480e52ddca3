"""Which findings a change adds and which it resolves.

Findings are matched by :meth:`~agentguard.findings.Finding.fingerprint`: the rule, where
(file, layer or dependency path, and the location's note, without line or column) and
the evidence. A finding that only moved (lines added above it) is the same finding; a
finding whose evidence changed (another tool list, another version) is new, and the old
one resolved. Fingerprints are counted, as a baseline counts them: a second occurrence
of a finding the base already had once is new.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentguard.delta.capabilities import AgentDelta
from agentguard.delta.locks import LockDelta
from agentguard.findings import Finding, JSONValue, Severity


@dataclass(frozen=True)
class FindingDelta:
    new: tuple[Finding, ...]
    resolved: tuple[Finding, ...]
    unchanged: int


def finding_delta(head: Sequence[Finding], base: Sequence[Finding]) -> FindingDelta:
    left = Counter(f.fingerprint() for f in base)
    new = []
    unchanged = 0
    for f in head:
        key = f.fingerprint()
        if left[key] > 0:
            left[key] -= 1
            unchanged += 1
        else:
            new.append(f)
    right = Counter(f.fingerprint() for f in head)
    resolved = []
    for f in base:
        key = f.fingerprint()
        if right[key] > 0:
            right[key] -= 1
        else:
            resolved.append(f)
    return FindingDelta(tuple(new), tuple(resolved), unchanged)


@dataclass(frozen=True)
class Growth:
    """A change the policy's ``fail-on-growth`` names: the gate fails on it."""

    kind: str  # "lock-major"
    what: str

    def to_json(self) -> dict[str, JSONValue]:
        return {"kind": self.kind, "what": self.what}


@dataclass(frozen=True)
class Delta:
    ref: str
    commit: str | None
    compared: bool  # False: the base could not be read (nothing is known to be new)
    findings: FindingDelta | None
    locks: tuple[LockDelta, ...] = ()
    growth: tuple[Growth, ...] = ()  # what the policy named and the change did
    agents: tuple[AgentDelta, ...] | None = None  # None: the capability maps not compared
    not_compared: tuple[str, ...] = ()  # steps with no base counterpart (images, smoke)
    notes: tuple[str, ...] = field(default=())

    def to_json(self, fail_on: Severity) -> dict[str, JSONValue]:
        fd = self.findings
        gating = [f for f in fd.new if f.suppressed is None and f.severity >= fail_on] if fd else []
        return {
            "base": {"ref": self.ref, "commit": self.commit, "compared": self.compared},
            "new": len(fd.new) if fd else None,
            "new_at_or_above_fail_on": len(gating) if fd else None,
            "resolved": [f.to_json() for f in fd.resolved] if fd else None,
            "unchanged": fd.unchanged if fd else None,
            "locks": [d.to_json() for d in self.locks],
            "capabilities": None
            if self.agents is None
            else {"agents": [a.to_json() for a in self.agents]},
            "growth": [g.to_json() for g in self.growth],
            "not_compared": list(self.not_compared),
        }


def growth_of(
    locks: Sequence[LockDelta], agents: Sequence[AgentDelta], kinds: Sequence[str]
) -> tuple[Growth, ...]:
    out: list[Growth] = []
    for a in agents:
        out += [Growth(k, f"{a.agent}: {what}") for k, what in a.growth if k in kinds]
    if "lock-major" in kinds:
        for d in locks:
            for c in d.crossings:
                if c.direction != "down":
                    base, head = ", ".join(c.base), ", ".join(c.head)
                    out.append(Growth("lock-major", f"{c.lock}: {c.package} {base} -> {head}"))
    return tuple(out)

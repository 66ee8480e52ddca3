"""AG101 over a lock graph: ranges that admit several majors (facts only, no I/O).

The rule class is :class:`agentguard.rules.deps.MajorSpanningRange`. A child pinned once per
fork gets one finding per pin the edge reaches (the pin's marker shown beside it, and kept
in the fix's cap: a cap for a package that only exists under a marker must keep it, or the
lock stops installing elsewhere). When the range starts below the locked major, the fix
says which cap and why: later releases of the same parent that hold the child below the
locked major are cited (the upstream's own word), else the choice is left to what was tested.
"""

from __future__ import annotations

from collections.abc import Sequence

from packaging.version import InvalidVersion, Version

from agentguard.facts.environments import EnvironmentTable, both, quoted_for_toml
from agentguard.facts.graph import (
    PROJECT,
    DependencyEdge,
    LockGraph,
    UpstreamBound,
    unbounded_above,
)
from agentguard.facts.pins import LockedPackage
from agentguard.findings import Confidence, Finding, JSONValue, Location, Severity
from agentguard.rules.deps import MajorSpanningRange
from agentguard.rules.deps_policy import DepsPolicy
from agentguard.rules.deps_span_fix import span_fix, with_marker


def _majors_text(majors: tuple[str, ...]) -> str:
    if len(majors) <= 6:
        return ", ".join(majors)
    return f"{', '.join(majors[:3])}, ..., {', '.join(majors[-2:])}"


class _Reach:
    """Which pins of a child an edge reaches (built only when some child is forked)."""

    def __init__(self, graph: LockGraph) -> None:
        self.graph = graph
        self._table: EnvironmentTable | None = None

    @property
    def table(self) -> EnvironmentTable:
        if self._table is None:
            markers = [p.marker for p in self.graph.packages]
            self._table = EnvironmentTable([*markers, *(e.marker for e in self.graph.edges)])
        return self._table

    def pins(self, edge: DependencyEdge) -> list[LockedPackage]:
        pins = sorted(self.graph.versions_of(edge.child), key=lambda p: _order(p.version))
        if len(pins) <= 1:
            return pins
        t = self.table
        mask = self.edge_mask(edge)
        reached = [p for p in pins if t.mask(p.marker) & mask]
        return reached or pins

    def edge_mask(self, edge: DependencyEdge) -> int:
        """The environments where ``edge`` applies (its marker, and its parent's pins)."""
        t = self.table
        mask = t.mask(edge.marker)
        if edge.parent != PROJECT:
            parents = [
                p for p in self.graph.versions_of(edge.parent) if p.version == edge.parent_version
            ]
            if parents:
                m = 0
                for p in parents:
                    m |= t.mask(p.marker)
                mask &= m
        return mask

    def unmitigated(
        self, edge: DependencyEdge, pin: LockedPackage, caps: list[DependencyEdge]
    ) -> int:
        """The environments of this finding that none of the project's one-major ``caps``
        reaches (a cap mitigates exactly where its marker holds)."""
        t = self.table
        mask = self.edge_mask(edge) & t.mask(pin.marker)
        for c in caps:
            mask &= ~t.mask(c.marker) if c.marker else 0
        return mask & t.all

    def where(self, mask: int) -> str:
        """The environments in ``mask``, named by platform when every Python is in it."""
        t = self.table
        envs = [e for i, e in enumerate(t.environments) if mask >> i & 1]
        pythons = {e.python for e in t.environments}
        platforms = sorted({e.platform for e in envs})
        if all(
            {e.python for e in envs if e.platform == p} == pythons for p in platforms
        ) and platforms != ["any platform"]:
            return ", ".join(platforms)
        return t.describe(mask)


def _cap_marker(graph: LockGraph, edge: DependencyEdge, pin: LockedPackage) -> str | None:
    """Where the cap applies: the child pin's marker and, when the parent is pinned once per
    fork, that parent pin's (a cap from one fork's parent must not move the other fork)."""
    if edge.parent == PROJECT:
        return pin.marker
    parents = graph.versions_of(edge.parent)
    mine = [p for p in parents if p.version == edge.parent_version]
    if len(parents) > 1 and len(mine) == 1 and mine[0].marker:
        return both(pin.marker, mine[0].marker)
    return pin.marker


def _own_text(edge: DependencyEdge) -> str:
    text = f"{edge.child}{edge.specifier}"
    return f"{text} ; {quoted_for_toml(edge.marker)}" if edge.marker else text


def _order(version: str) -> Version:
    try:
        return Version(version)
    except InvalidVersion:
        return Version("0")


def check_major_spans(
    graph: LockGraph,
    policy: DepsPolicy,
    *,
    kept: Sequence[LockedPackage] | None = None,
) -> list[Finding]:
    """AG101 for every edge whose specifier admits two or more released majors, once per
    pin of the child the edge reaches.

    ``kept``: the pins the lock files still hold, when this resolution was not written
    (a refused re-lock); the message then says so instead of calling the new pin locked.
    """
    findings: list[Finding] = []
    own: dict[str, list[DependencyEdge]] = {}
    for e in graph.edges:
        if e.parent == PROJECT:
            own.setdefault(e.child, []).append(e)
    bounds: dict[tuple[str, str | None, str], UpstreamBound] = {
        (b.parent, b.parent_version, b.child): b for b in graph.upstream_bounds
    }
    reach = _Reach(graph)
    for edge in graph.edges:
        majors = edge.admitted_majors
        if majors is None or len(majors) <= 1:
            continue
        for pin in reach.pins(edge):
            try:
                locked_v = Version(pin.version)
            except InvalidVersion:
                continue
            findings.append(
                _finding(graph, policy, edge, majors, pin, locked_v, own, bounds, kept, reach)
            )
    return findings


def _finding(
    graph: LockGraph,
    policy: DepsPolicy,
    edge: DependencyEdge,
    majors: tuple[str, ...],
    pin: LockedPackage,
    locked_v: Version,
    own: dict[str, list[DependencyEdge]],
    bounds: dict[tuple[str, str | None, str], UpstreamBound],
    kept: Sequence[LockedPackage] | None,
    reach: _Reach,
) -> Finding:
    child = edge.child
    if edge.parent == PROJECT:
        path: tuple[str, ...] = ("project", child)
        parent_label = "the project"
    else:
        up = graph.path_to(edge.parent)
        path = (*up[:-1], f"{edge.parent}=={edge.parent_version}", child)
        parent_label = f"{edge.parent}=={edge.parent_version}"
    watched = policy.is_watched(child)
    if watched:
        severity = policy.watched_severity
    elif edge.parent != PROJECT and policy.is_watched(edge.parent):
        severity = policy.watched_parent_severity
    else:
        severity = policy.tail_severity
    shown = with_marker(f"{child}=={pin.version}", pin.marker)
    if kept is None:
        state = f"locked: {shown}."
    else:
        held = [p for p in kept if p.name == child]
        holds = ", ".join(with_marker(f"{child}=={p.version}", p.marker) for p in held)
        state = (
            f"resolved now: {shown}, not written (the re-lock was refused; the lock still "
            f"holds {holds or f'no {child}'})."
        )
    message = (
        f"{parent_label} declares {child}{edge.specifier}, which admits "
        f"{len(majors)} released majors of {child} ({_majors_text(majors)}); {state}"
    )
    if unbounded_above(edge.specifier):
        message += " The range has no upper bound, so every future major is admitted too."
    bound = bounds.get((edge.parent, edge.parent_version, child))
    evidence: dict[str, JSONValue] = {
        "parent": "project" if edge.parent == PROJECT else edge.parent,
        "parent_version": edge.parent_version,
        "child": child,
        "specifier": edge.specifier,
        "marker": edge.marker,
        "majors_admitted": list(majors),
        "locked": [pin.version],
        "locked_marker": pin.marker,
        "unbounded_above": unbounded_above(edge.specifier),
        "watched": watched,
        "mitigated_by": [],
    }
    if bound is not None:
        evidence["upstream_bound"] = {
            "specifier": bound.specifier,
            "parent_versions": list(bound.parent_versions),
        }
    fix = span_fix(graph, edge, majors, locked_v, _cap_marker(graph, edge, pin), bound, evidence)
    caps = [
        o
        for o in own.get(child, [])
        if o != edge and o.admitted_majors is not None and len(o.admitted_majors) <= 1
    ]
    mitigated_by = [_own_text(o) for o in caps]
    evidence["mitigated_by"] = [t[len(child) :] for t in mitigated_by]
    open_mask = reach.unmitigated(edge, pin, caps) if caps else 0
    if caps and open_mask:
        evidence["unmitigated_in"] = reach.where(open_mask)
    if child in policy.span_accepted:
        severity = Severity.INFO
        message += (
            " Accepted by policy (deps.span-accepted): upstream supports these majors on purpose."
        )
    elif caps and not open_mask:
        severity = Severity.INFO
        message += f" Mitigated: the project's own requirement {mitigated_by[0]} holds one major."
    elif caps:
        message += (
            f" Not mitigated on {reach.where(open_mask)}: the project's own requirement "
            f"{mitigated_by[0]} holds one major only where its marker holds."
        )
    return MajorSpanningRange.finding(
        message,
        locations=[Location(dependency_path=path, note=edge.specifier or "(any version)")],
        fix=fix,
        evidence=evidence,
        severity=severity,
        confidence=Confidence.HIGH,
    )

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

from agentguard.facts.environments import quoted_for_toml
from agentguard.facts.fixes import FixGroup, FixSetCheck, GroupKey
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
from agentguard.rules.deps_fix_choice import group_fix
from agentguard.rules.deps_fix_plan import fix_groups
from agentguard.rules.deps_policy import DepsPolicy
from agentguard.rules.deps_reach import Reach
from agentguard.rules.deps_span_fix import parent_label as span_parent
from agentguard.rules.deps_span_fix import span_fix, with_marker


def _majors_text(majors: tuple[str, ...]) -> str:
    if len(majors) <= 6:
        return ", ".join(majors)
    return f"{', '.join(majors[:3])}, ..., {', '.join(majors[-2:])}"


def _own_text(edge: DependencyEdge) -> str:
    text = f"{edge.child}{edge.specifier}"
    return f"{text} ; {quoted_for_toml(edge.marker)}" if edge.marker else text


def check_major_spans(
    graph: LockGraph,
    policy: DepsPolicy,
    *,
    kept: Sequence[LockedPackage] | None = None,
    fixes: FixSetCheck | None = None,
    groups: dict[GroupKey, FixGroup] | None = None,
) -> list[Finding]:
    """AG101 for every edge whose specifier admits two or more released majors, once per
    pin of the child the edge reaches.

    ``kept``: the pins the lock files still hold, when this resolution was not written
    (a refused re-lock); the message then says so instead of calling the new pin locked.
    ``fixes``: the first fixes resolved as one set (None: not checked, e.g. offline); the
    fix of each finding is its group's (:mod:`agentguard.rules.deps_fix_plan`).
    """
    if groups is None:
        groups = fix_groups(graph)
    findings: list[Finding] = []
    own: dict[str, list[DependencyEdge]] = {}
    for e in graph.edges:
        if e.parent == PROJECT:
            own.setdefault(e.child, []).append(e)
    bounds: dict[tuple[str, str | None, str], UpstreamBound] = {
        (b.parent, b.parent_version, b.child): b for b in graph.upstream_bounds
    }
    reach = Reach(graph)
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
                _finding(
                    graph,
                    policy,
                    edge,
                    majors,
                    pin,
                    locked_v,
                    own,
                    bounds,
                    kept,
                    reach,
                    groups,
                    fixes,
                )
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
    reach: Reach,
    groups: dict[GroupKey, FixGroup],
    fixes: FixSetCheck | None,
) -> Finding:
    child = edge.child
    if edge.parent == PROJECT:
        path: tuple[str, ...] = ("project", child)
        parent_label = "the project"
    else:
        up = graph.path_to(edge.parent)
        parent_label = span_parent(edge)
        path = (*up[:-1], parent_label, child)
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
    marker = reach.cap_marker(edge, pin)
    fix = span_fix(graph, edge, majors, locked_v, marker, bound, evidence)
    group = groups.get((child, marker, pin.version))
    if group is not None:
        fix = group_fix(fix, group, fixes, evidence)
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

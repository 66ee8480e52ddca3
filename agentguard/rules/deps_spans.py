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

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentguard import escape
from agentguard.facts.environments import EnvironmentTable, quoted_for_toml
from agentguard.facts.graph import (
    PROJECT,
    DependencyEdge,
    LockGraph,
    UpstreamBound,
    major_floor,
    major_key,
    next_major_floor,
    unbounded_above,
)
from agentguard.facts.pins import LockedPackage
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.deps import MajorSpanningRange
from agentguard.rules.deps_policy import DepsPolicy


def _majors_text(majors: tuple[str, ...]) -> str:
    if len(majors) <= 6:
        return ", ".join(majors)
    return f"{', '.join(majors[:3])}, ..., {', '.join(majors[-2:])}"


def _lower_bound(specifier: str) -> tuple[str, Version] | None:
    for s in SpecifierSet(specifier):
        if s.operator in (">=", ">", "~="):
            try:
                return s.operator, Version(s.version)
            except InvalidVersion:
                return None
    return None


def _cap(child: str, specifier: str, locked: Version) -> str:
    """`child>=<floor>,<next major>` for the locked major, keeping a tighter lower bound."""
    floor = major_floor(locked)
    lower: Version | None = None
    for s in SpecifierSet(specifier):
        if s.operator in (">=", ">", "~=", "=="):
            try:
                v = Version(s.version.rstrip(".*"))
            except ValueError:
                continue
            if lower is None or v > lower:
                lower = v
    if lower is not None and major_key(lower) == major_key(locked):
        floor = str(lower)
    return f"{child}>={floor},<{next_major_floor(locked)}"


def _alternative_cap(child: str, specifier: str, locked: Version) -> str | None:
    """The cap at the lowest admitted major, when it differs from the locked one."""
    low = _lower_bound(specifier)
    if low is None or major_key(low[1]) == major_key(locked):
        return None
    return f"{child}{low[0]}{low[1]},<{next_major_floor(low[1])}"


def _upstream_cap(child: str, specifier: str, bound: UpstreamBound) -> str | None:
    """The range's lower bound with the upper bound the later releases declare."""
    uppers = [s for s in SpecifierSet(bound.specifier) if s.operator in ("<", "<=")]
    if not uppers:
        return None
    low = _lower_bound(specifier)
    head = f"{child}{low[0]}{low[1]}," if low is not None else f"{child}"
    return head + ",".join(str(u) for u in uppers)


def _releases_text(versions: Sequence[str]) -> str:
    if len(versions) == 1:
        return versions[0]
    return f"{versions[0]} to {versions[-1]}, {len(versions)} releases"


def _with_marker(cap: str, marker: str | None) -> str:
    return f"{cap} ; {quoted_for_toml(marker)}" if marker else cap


class _Reach:
    """Which pins of a child an edge reaches (built only when some child is forked)."""

    def __init__(self, graph: LockGraph) -> None:
        self.graph = graph
        self._table: EnvironmentTable | None = None

    def pins(self, edge: DependencyEdge) -> list[LockedPackage]:
        pins = sorted(self.graph.versions_of(edge.child), key=lambda p: _order(p.version))
        if len(pins) <= 1:
            return pins
        if self._table is None:
            markers = [p.marker for p in self.graph.packages]
            self._table = EnvironmentTable([*markers, *(e.marker for e in self.graph.edges)])
        t = self._table
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
        reached = [p for p in pins if t.mask(p.marker) & mask]
        return reached or pins


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
            findings.append(_finding(graph, policy, edge, majors, pin, locked_v, own, bounds, kept))
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
    shown = _with_marker(f"{child}=={pin.version}", pin.marker)
    if kept is None:
        state = f"locked: {shown}."
    else:
        held = [p for p in kept if p.name == child]
        holds = ", ".join(_with_marker(f"{child}=={p.version}", p.marker) for p in held)
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
    cap = _with_marker(_cap(child, edge.specifier, locked_v), pin.marker)
    alt = _alternative_cap(child, edge.specifier, locked_v)
    bound = bounds.get((edge.parent, edge.parent_version, child))
    upstream = _upstream_cap(child, edge.specifier, bound) if bound is not None else None
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
    if bound is not None and upstream is not None:
        upstream = _with_marker(upstream, pin.marker)
        releases = _releases_text(bound.parent_versions)
        evidence["upstream_bound"] = {
            "specifier": bound.specifier,
            "parent_versions": list(bound.parent_versions),
        }
        many = len(bound.parent_versions) > 1
        fix = Fix(
            f"Add `{upstream}` to your requirements: {'later releases' if many else 'a later release'} "
            f"of {edge.parent} ({releases}) {'declare' if many else 'declares'} "
            f"{child}{bound.specifier}, the upstream's own word that "
            f"{child} {major_key(locked_v)} broke it. Or `{cap}` (the locked major) once your "
            f"code has been tested against {child} {major_key(locked_v)}.",
            snippet=escape.snippet(upstream),
        )
    elif alt:
        alt = _with_marker(alt, pin.marker)
        fix = Fix(
            f"Cap {child} at the major you have tested: add `{cap}` (the locked major) to "
            f"your requirements, or `{alt}` if your code was written against that major; no "
            f"later release of {'the project' if edge.parent == PROJECT else edge.parent} "
            "narrows the range, so which one is right depends on the code that was tested.",
            snippet=escape.snippet(cap),
        )
    else:
        fix = Fix(
            f"Add `{cap}` to your requirements (the locked major).", snippet=escape.snippet(cap)
        )
    mitigated_by = [
        o.specifier
        for o in own.get(child, [])
        if o != edge and o.admitted_majors is not None and len(o.admitted_majors) <= 1
    ]
    evidence["mitigated_by"] = list(mitigated_by)
    if child in policy.span_accepted:
        severity = Severity.INFO
        message += (
            " Accepted by policy (deps.span-accepted): upstream supports these majors on purpose."
        )
    elif mitigated_by:
        severity = Severity.INFO
        message += (
            f" Mitigated: the project's own requirement {child}{mitigated_by[0]} holds one major."
        )
    return MajorSpanningRange.finding(
        message,
        locations=[Location(dependency_path=path, note=edge.specifier or "(any version)")],
        fix=fix,
        evidence=evidence,
        severity=severity,
        confidence=Confidence.HIGH,
    )

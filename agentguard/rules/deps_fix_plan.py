"""AG101's first fixes as one set: one cap per package, ranked by the evidence (no I/O).

Each span (a parent's range over a child) ranks the child's majors on its own
(:mod:`agentguard.rules.deps_span_fix`). But the fixes land in one requirements list, and
a child that several parents span gets one cap: ``referencing==0.37.0`` (uploaded
2025-10-13) was built when rpds-py 0.27 was the newest major, ``jsonschema==4.26.0``
(2026-01-07) when 0.30 was; offered one per span, ``rpds-py>=0.27,<0.28`` and
``rpds-py>=0.30,<0.31`` exclude each other, and the set does not resolve. So the fixes are
grouped by child (and by where the cap applies: its marker), and each group ranks the
majors every span admits:

1. a major a span's upstream cap leaves out is never offered (the upstream's own word);
2. fewest spans whose parent was uploaded before the major first shipped (0: every parent
   predates nothing of it);
3. the locked major (no move, no gate), then the newest.

Only the majors tied on (1) and (2) are candidates: a major some parent cannot have been
built against, when another major all of them can, is the failure AG101 warns about,
never a fix. The lock side resolves the first candidates together
(:mod:`agentguard.lock.fix_check`) and records which resolve (:class:`FixSetCheck`).
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentguard.facts.fixes import Cap, FixGroup, GroupKey
from agentguard.facts.graph import DependencyEdge, LockGraph, UpstreamBound, major_floor
from agentguard.facts.graph import major_key as major_key
from agentguard.facts.pins import LockedPackage
from agentguard.rules.deps_reach import Reach
from agentguard.rules.deps_span_fix import (
    _after,
    _upstream_cap,
    built_for,
    cap_at,
    dates_for,
    parent_label,
    with_marker,
)


@dataclass(frozen=True)
class _Span:
    edge: DependencyEdge
    pin: LockedPackage
    majors: tuple[str, ...]
    locked: Version
    bound: UpstreamBound | None


def span_label(edge: DependencyEdge) -> str:
    return parent_label(edge)


def _under(bound: UpstreamBound, major: str) -> bool:
    """True when the upstream cap admits the first release of ``major``."""
    uppers = [s for s in SpecifierSet(bound.specifier) if s.operator in ("<", "<=")]
    try:
        floor = Version(major_floor(Version(major)))
    except InvalidVersion:
        return False
    return all(s.contains(floor, prereleases=True) for s in uppers)


def own_first(graph: LockGraph, span: _Span, marker: str | None) -> tuple[str, str]:
    """(major, cap) a span offers first on its own, as :func:`span_fix` words it."""
    edge, child = span.edge, span.edge.child
    locked_major = major_key(span.locked)
    if span.bound is not None:
        upstream = _upstream_cap(child, edge.specifier, span.bound)
        if upstream is not None:
            under = [m for m in span.majors if _under(span.bound, m)]
            return (under[-1] if under else locked_major), with_marker(upstream, marker)
    dates = dates_for(graph, edge, span.majors)
    built = built_for(dates, span.majors)
    if built is not None and _after(dates, locked_major):
        return built, with_marker(cap_at(child, edge.specifier, Version(built)), marker)
    return locked_major, with_marker(cap_at(child, edge.specifier, span.locked), marker)


def _rank(graph: LockGraph, key: GroupKey, spans: list[_Span]) -> FixGroup:
    child, marker, _version = key
    locked = spans[0].locked
    locked_major = major_key(locked)
    common = [m for m in spans[0].majors if all(m in s.majors for s in spans[1:])]
    # every other range over the child holds too (the project's own cap among them)
    held = [
        e.admitted_majors
        for e in graph.edges
        if e.child == child and e.admitted_majors and len(e.admitted_majors) == 1
    ]
    common = [m for m in common if all(m in h for h in held)] or common
    for s in spans:
        if s.bound is not None:
            under = [m for m in common if _under(s.bound, m)]
            common = under or common  # a cap no major meets is not a reason to offer none
    dates = [dates_for(graph, s.edge, s.majors) for s in spans]
    # A later release's cap accepts the majors under it: those are not "after" that parent.
    after = {
        m: sum(
            _after(d, m) and not (s.bound is not None and _under(s.bound, m))
            for s, d in zip(spans, dates, strict=True)
        )
        for m in common
    }
    fewest = min(after.values(), default=0)
    ranked = sorted(
        (m for m in common if after[m] == fewest),
        key=lambda m: (m != locked_major, -common.index(m)),
    )
    firsts = [own_first(graph, s, marker) for s in spans]
    agreed = firsts[0] if len(set(firsts)) == 1 else None
    if agreed is not None:  # every span offers this first: its own words, in first place
        ranked = [agreed[0], *(m for m in ranked if m != agreed[0])]
    joint = ",".join(s.edge.specifier for s in spans if s.edge.specifier)
    caps: list[Cap] = []
    for i, m in enumerate(ranked):
        if i == 0 and agreed is not None:
            text = agreed[1]
        else:
            text = with_marker(cap_at(child, joint, Version(m)), marker)
        caps.append(Cap(m, text, after.get(m, 0), m == locked_major))
    labels = tuple(dict.fromkeys(span_label(s.edge) for s in spans))
    return FixGroup(
        child=child,
        marker=marker,
        locked_version=str(locked),
        spans=labels,
        candidates=tuple(caps),
        own_first=tuple(f[1] for f in firsts),
    )


def fix_groups(graph: LockGraph) -> dict[GroupKey, FixGroup]:
    """Every AG101 finding's group (child, cap marker, locked version), with its ranked candidates."""
    bounds: dict[tuple[str, str | None, str], UpstreamBound] = {
        (b.parent, b.parent_version, b.child): b for b in graph.upstream_bounds
    }
    reach = Reach(graph)
    spans: dict[GroupKey, list[_Span]] = {}
    for edge in graph.edges:
        majors = edge.admitted_majors
        if majors is None or len(majors) <= 1:
            continue
        for pin in reach.pins(edge):
            try:
                locked = Version(pin.version)
            except InvalidVersion:
                continue
            key: GroupKey = (edge.child, reach.cap_marker(edge, pin), pin.version)
            bound = bounds.get((edge.parent, edge.parent_version, edge.child))
            spans.setdefault(key, []).append(_Span(edge, pin, majors, locked, bound))
    out: dict[GroupKey, FixGroup] = {}
    for key, members in sorted(spans.items(), key=lambda kv: (kv[0][0], kv[0][1] or "", kv[0][2])):
        out[key] = _rank(graph, key, members)
    return out

"""Which major an AG101 fix offers first, by the evidence (facts only, no I/O).

A parent release was built and tested against the majors of its child that existed when
it was uploaded. So the fix ranks the majors a range admits by:

1. the parent's later releases that cap the child below the locked major (the upstream's
   own word that the newer major broke it): that cap first;
2. upload times: when the locked major's first release is older than the parent release,
   the locked major first (the parent may have been built against it); when it is newer,
   the newest major that was out when the parent was uploaded, never the locked one
   (``mcp-agent 0.2.6``, 2025-12-05, cannot have been tested with mcp 2, 2026-07-28);
3. otherwise (the project's own range, or no upload times known) the locked major, and
   the fix says which evidence is missing.

A fix that moves the lock off its locked major is a major crossing the re-lock gate (AG102)
stops: such a fix says so and gives the whole command that lets it through.
"""

from __future__ import annotations

from dataclasses import dataclass

from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from agentguard import escape
from agentguard.facts.environments import quoted_for_toml
from agentguard.facts.graph import (
    PROJECT,
    DependencyEdge,
    LockGraph,
    UpstreamBound,
    major_floor,
    major_key,
    next_major_floor,
)
from agentguard.facts.times import parse_time
from agentguard.findings import Fix, JSONValue


def with_marker(cap: str, marker: str | None) -> str:
    return f"{cap} ; {quoted_for_toml(marker)}" if marker else cap


def lower_bound(specifier: str) -> tuple[str, Version] | None:
    for s in SpecifierSet(specifier):
        if s.operator in (">=", ">", "~="):
            try:
                return s.operator, Version(s.version)
            except InvalidVersion:
                return None
    return None


def cap_at(child: str, specifier: str, major: Version) -> str:
    """`child>=<floor>,<next major>` for ``major``, keeping a tighter lower bound in it."""
    floor = major_floor(major)
    lower: Version | None = None
    for s in SpecifierSet(specifier):
        if s.operator in (">=", ">", "~=", "=="):
            try:
                v = Version(s.version.rstrip(".*"))
            except ValueError:
                continue
            if lower is None or v > lower:
                lower = v
    if lower is not None and major_key(lower) == major_key(major):
        floor = str(lower)
    return f"{child}>={floor},<{next_major_floor(major)}"


def _upstream_cap(child: str, specifier: str, bound: UpstreamBound) -> str | None:
    """The range's lower bound with the upper bound the later releases declare."""
    uppers = [s for s in SpecifierSet(bound.specifier) if s.operator in ("<", "<=")]
    if not uppers:
        return None
    low = lower_bound(specifier)
    head = f"{child}{low[0]}{low[1]}," if low is not None else f"{child}"
    return head + ",".join(str(u) for u in uppers)


def _releases_text(versions: tuple[str, ...]) -> str:
    if len(versions) == 1:
        return versions[0]
    return f"{versions[0]} to {versions[-1]}, {len(versions)} releases"


def _day(text: str) -> str:
    return text[:10]


def relock_command(child: str) -> str:
    return f"agentguard lock --allow-major {child}"


@dataclass(frozen=True)
class Dates:
    """Upload times behind the ranking (None: unknown)."""

    parent: str | None  # the parent release
    majors: dict[str, str]  # admitted major -> its first final release


def dates_for(graph: LockGraph, edge: DependencyEdge, majors: tuple[str, ...]) -> Dates:
    parent = None
    if edge.parent != PROJECT and edge.parent_version:
        parent = graph.release_uploads.get(f"{edge.parent}=={edge.parent_version}")
    known = graph.major_uploads.get(edge.child, {})
    # Only times that read as times (a lock file is the pull request's: its text is not
    # taken on trust); anything else is unknown.
    return Dates(
        parent if parse_time(parent) else None,
        {m: known[m] for m in majors if m in known and parse_time(known[m])},
    )


def built_for(dates: Dates, majors: tuple[str, ...]) -> str | None:
    """The newest admitted major whose first release was out when the parent was uploaded
    (None: unknown, when any upload time is missing)."""
    parent = parse_time(dates.parent)
    if parent is None or any(m not in dates.majors for m in majors):
        return None
    out = None
    for m in majors:  # oldest first
        first = parse_time(dates.majors[m])
        if first is not None and first <= parent:
            out = m
    return out


def _after(dates: Dates, major: str) -> bool:
    """True when ``major`` first shipped after the parent release was uploaded."""
    first, parent = parse_time(dates.majors.get(major)), parse_time(dates.parent)
    return first is not None and parent is not None and first > parent


def parent_label(edge: DependencyEdge) -> str:
    """The parent as a finding names it: ``name==version``; a workspace member or an editable
    path whose version the lock does not record (dynamic) by its name alone (it read as
    ``pydantic-ai-slim==``)."""
    if edge.parent == PROJECT:
        return "the project"
    return f"{edge.parent}=={edge.parent_version}" if edge.parent_version else edge.parent


def span_fix(
    graph: LockGraph,
    edge: DependencyEdge,
    majors: tuple[str, ...],
    locked: Version,
    marker: str | None,
    bound: UpstreamBound | None,
    evidence: dict[str, JSONValue],
) -> Fix:
    """The fix for one AG101 finding (and the ranking's evidence, added to ``evidence``)."""
    child = edge.child
    locked_major = major_key(locked)
    cap = with_marker(cap_at(child, edge.specifier, locked), marker)
    parent = parent_label(edge)
    dates = dates_for(graph, edge, majors)
    built = built_for(dates, majors)
    evidence["uploaded"] = {"parent": dates.parent, "majors": dict(dates.majors)}
    evidence["built_for"] = built
    cross = (
        f"then re-lock with `{relock_command(child)}` (the lock moves {child} off "
        f"{locked}, a major crossing the re-lock gate stops otherwise)"
    )
    upstream = _upstream_cap(child, edge.specifier, bound) if bound is not None else None
    if bound is not None and upstream is not None:
        upstream = with_marker(upstream, marker)
        many = len(bound.parent_versions) > 1
        evidence["first_fix_basis"] = "upstream-cap"
        return Fix(
            f"Add `{upstream}` to your requirements, {cross}: "
            f"{'later releases' if many else 'a later release'} of {edge.parent} "
            f"({_releases_text(bound.parent_versions)}) {'declare' if many else 'declares'} "
            f"{child}{bound.specifier}, the upstream's own word that {child} {locked_major} "
            f"broke it. Or `{cap}` (the locked major) once your code has been tested against "
            f"{child} {locked_major}.",
            snippet=escape.snippet(upstream),
        )
    if built is not None and _after(dates, locked_major):
        first = with_marker(cap_at(child, edge.specifier, Version(built)), marker)
        evidence["first_fix_basis"] = "upload-times"
        return Fix(
            f"Add `{first}` to your requirements, {cross}: {parent} was uploaded "
            f"{_day(str(dates.parent))}, before {child} {locked_major} first shipped "
            f"({_day(dates.majors[locked_major])}), so the newest {child} major it can have "
            f"been built against is {built}. Or `{cap}` (the locked major) once your code and "
            f"{edge.parent} have been tested against {child} {locked_major}.",
            snippet=escape.snippet(first),
        )
    low = lower_bound(edge.specifier)
    alt = None
    if low is not None and major_key(low[1]) != locked_major:
        alt = with_marker(f"{child}{low[0]}{low[1]},<{next_major_floor(low[1])}", marker)
    if built is not None and locked_major in dates.majors:
        evidence["first_fix_basis"] = "upload-times"
        why = (
            f"{child} {locked_major} first shipped {_day(dates.majors[locked_major])}, before "
            f"{parent} was uploaded ({_day(str(dates.parent))}), so it may have been built "
            "against it"
        )
    else:
        evidence["first_fix_basis"] = "locked-major"
        why = (
            "no later release of the project narrows the range"
            if edge.parent == PROJECT
            else f"the upload times of {parent} and of {child}'s majors are not all known, "
            f"and no later release of {edge.parent} narrows the range"
        )
    if alt is None:
        return Fix(
            f"Add `{cap}` to your requirements (the locked major): {why}.",
            snippet=escape.snippet(cap),
        )
    return Fix(
        f"Cap {child} at the major you have tested: add `{cap}` (the locked major; {why}) to "
        f"your requirements, or `{alt}` if your code was written against that major, "
        f"{cross}. Which one is right depends on the code that was tested.",
        snippet=escape.snippet(cap),
    )

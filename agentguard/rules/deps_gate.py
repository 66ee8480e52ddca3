"""AG102, the major gate: old and new pins compared per environment (facts only, no I/O).

The rule class is :class:`agentguard.rules.deps.MajorCrossedOnRelock`. A name may be pinned
several times, once per fork of a universal lock; an old pin and a new pin are compared
wherever both markers select the same environment (a Python version and a platform), so a
new fork that keeps every environment's major is no crossing, and a real crossing names the
environments it happens in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentguard import escape
from agentguard.facts.environments import EnvironmentTable, both, quoted_for_toml
from agentguard.facts.graph import PROJECT, DependencyEdge, LockGraph, major_key, next_major_floor
from agentguard.facts.pins import LockedPackage, pins_by_name
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.deps import MajorCrossedOnRelock


@dataclass(frozen=True)
class Crossing:
    """An old pin and a new pin of one name that select a common environment and whose
    majors differ there."""

    old: LockedPackage
    new: LockedPackage
    environment: str | None  # the marker of the environments both select; None: all
    where: str  # the environments, listed ("Python 3.11.0 to 3.14.99 on every platform")


def _version(p: LockedPackage) -> Version | None:
    try:
        return Version(p.version)
    except InvalidVersion:
        return None


def find_crossings(
    old: Iterable[LockedPackage],
    new: Iterable[LockedPackage],
    requires_python: str | None = None,
) -> list[Crossing]:
    """Every (old pin, new pin) of a name whose majors differ in an environment both select."""
    before = pins_by_name(old)
    after = pins_by_name(new)
    shared = sorted(set(before) & set(after))
    markers = {p.marker for n in shared for p in (*before[n], *after[n]) if p.marker}
    table = EnvironmentTable(markers, requires_python) if markers else None
    out: list[Crossing] = []
    for name in shared:
        for o in before[name]:
            ov = _version(o)
            if ov is None:
                continue
            for n in after[name]:
                nv = _version(n)
                if nv is None or major_key(ov) == major_key(nv):
                    continue
                if table is None:  # neither pin has a marker: every environment
                    out.append(Crossing(o, n, None, "every environment"))
                    continue
                common = table.mask(o.marker) & table.mask(n.marker)
                if common:
                    where = "every environment" if common == table.all else table.describe(common)
                    out.append(Crossing(o, n, both(o.marker, n.marker), where))
    return out


def _asked_by_project(edges: Sequence[DependencyEdge], old: Version) -> str | None:
    """The project's own specifier that leaves out the old version, if one does."""
    for e in edges:
        if e.parent != PROJECT or not e.specifier:
            continue
        try:
            if not SpecifierSet(e.specifier).contains(old, prereleases=True):
                return e.specifier
        except InvalidSpecifier:
            continue
    return None


def check_major_crossings(
    old: Sequence[LockedPackage],
    graph: LockGraph,
    allow_major: Iterable[str],
    requires_python: str | None = None,
) -> list[Finding]:
    """AG102 for each old/new pin pair whose major changed for some environment."""
    allowed = set(allow_major)
    findings: list[Finding] = []
    for c in find_crossings(old, graph.packages, requires_python):
        name = c.new.name
        ov, nv = Version(c.old.version), Version(c.new.version)
        edges = graph.edges_into(name)
        allowed_by = [
            f"{'project' if e.parent == PROJECT else e.parent + '==' + str(e.parent_version)} "
            f"declares {e.child}{e.specifier}"
            for e in edges
        ]
        severity = Severity.INFO if name in allowed else MajorCrossedOnRelock.default_severity
        env_text = f" for {quoted_for_toml(c.environment)}" if c.environment else ""
        message = (
            f"{name} would move from {c.old.version} to {c.new.version} (major {major_key(ov)} "
            f"-> {major_key(nv)}){env_text}, allowed by: {'; '.join(allowed_by) or 'unknown'}."
        )
        if name in allowed:
            message += " Let through by --allow-major."
        snippet = f"{name}<{next_major_floor(ov)}"
        if c.environment:
            snippet += f" ; {quoted_for_toml(c.environment)}"
        review = (
            f"Review {name} {major_key(nv)}, then re-run with `--allow-major {name}`; "
            f"or add `{snippet}` to stay on the locked major."
        )
        asked = _asked_by_project(edges, ov)
        if asked:
            # The project's own requirement leaves the old pin out (a cap applied on
            # AG101's advice): staying on the old major is not the way out, the gate is.
            snippet = f"agentguard lock --allow-major {name}"
            review = (
                f"The project's own requirement {name}{asked} leaves out {c.old.version}: the "
                f"move to {name} {major_key(nv)} is what the requirements ask for. Re-run "
                f"`{snippet}` to write it, or change that requirement."
            )
        findings.append(
            MajorCrossedOnRelock.finding(
                message,
                locations=[Location(dependency_path=graph.path_to(name))],
                fix=Fix(review, snippet=escape.snippet(snippet)),
                evidence={
                    "package": name,
                    "old": c.old.version,
                    "new": c.new.version,
                    "old_marker": c.old.marker,
                    "new_marker": c.new.marker,
                    "environment": c.environment,
                    "environments": c.where,
                    "allowed_by": allowed_by,
                },
                severity=severity,
            )
        )
    return findings

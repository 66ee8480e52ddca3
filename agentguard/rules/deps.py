"""AG1xx: dependency rules over a resolved lock graph (facts only, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from packaging.specifiers import SpecifierSet
from packaging.version import Version

from agentguard.config import DepsPolicy
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.lock.graph import (
    PROJECT,
    DependencyEdge,
    LockGraph,
    major_floor,
    major_key,
    next_major_floor,
    unbounded_above,
)
from agentguard.rules.base import Rule, register


@register
class MajorSpanningRange(Rule):
    """A declared dependency range admits more than one released major of the child.

    ## What it does
    For every edge *parent -> child* in the resolved tree, compares the specifier the
    parent declares (from its own `Requires-Dist`) with the child's released versions,
    and reports the edge when versions from two or more majors satisfy it (before 1.0
    each minor counts as a major). The finding carries the whole path from the project,
    the specifier, the majors admitted and the version locked.

    ## Why is this bad?
    Whether your build gets the old or the new major depends on the day it runs. An
    agent SDK that declares `mcp>=1.23.0` imports fine with mcp 2.x and then fails at
    start (`'Server' object has no attribute 'list_tools'`); an exception handler that
    falls back to another model turns that into a quietly worse bot. Pinning only the
    SDK does not help: the protocol library is decided one hop away.

    ## Example
    ```toml
    [project]
    dependencies = ["claude-agent-sdk==0.2.95"]   # declares mcp>=1.23.0; mcp 2.x is out
    ```

    ## Use instead
    Cap the child at the major you have tested, in your own requirements:
    ```toml
    dependencies = ["claude-agent-sdk==0.2.95", "mcp>=1.23.0,<2"]
    ```
    When your own requirement already holds the child to one major, the edge is
    reported as mitigated (info).
    """

    id = "AG101"
    name = "major-spanning-range"
    title = "Dependency range admits more than one released major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class MajorCrossedOnRelock(Rule):
    """A re-lock would move a package to another major.

    ## What it does
    When a previous lock exists, compares every package's new version with the locked
    one. A change of major (or of `0.minor` before 1.0) stops the lock: neither lock file
    is written, and the finding names old and new versions and the edges that allowed it.

    ## Why is this bad?
    Resolvers cross majors on upgrade without a word. A new major is a new API; it needs
    review, not a routine `--upgrade`.

    ## Example
    `agentguard lock --upgrade` where the lock holds `mcp==1.27.0` and the SDK's range
    now admits `mcp==2.3.0`.

    ## Use instead
    Review the new major, then re-run with `--allow-major mcp`; or cap the package in
    your requirements (`mcp<2`) to stay on the locked major.
    """

    id = "AG102"
    name = "major-crossed-on-relock"
    title = "Re-lock would cross a major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class LockOutOfSync(Rule):
    """The lock files do not match the project's inputs (or each other).

    ## What it does
    `agentguard lock --check` hashes the project's declared dependencies and compares the
    hash with the one recorded in both lock files; it also checks that the requirements
    lock and `pylock.toml` pin the same packages.

    ## Why is this bad?
    A lock that no longer matches its inputs is installed as if it were reviewed while
    the requirements say something else; the next build re-resolves silently.

    ## Example
    Adding `openai-agents` to `[project.dependencies]` without re-running `agentguard lock`.

    ## Use instead
    Run `agentguard lock` and commit both lock files.
    """

    id = "AG103"
    name = "lock-out-of-sync"
    title = "Lock files out of sync with the inputs"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class UnhashedPin(Rule):
    """A pin in the requirements lock carries no hash.

    ## What it does
    Reports every requirement line in the lock that has no `--hash`, or is not pinned
    with `==`.

    ## Why is this bad?
    `pip install --require-hashes` refuses such a file, and without hashes a re-uploaded
    or substituted file installs unnoticed.

    ## Example
    `mcp==1.27.0` with no `--hash=sha256:...` lines.

    ## Use instead
    Re-generate the lock with `agentguard lock`; do not edit it by hand.
    """

    id = "AG104"
    name = "unhashed-pin"
    title = "Pin without a hash"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class DependencyRangesUnknown(Rule):
    """A locked package is published only as an sdist: its declared ranges are unknown.

    ## What it does
    Reports a locked package that has no wheel on the index (so no core metadata agentguard
    can read without running anything): its declared ranges were not checked.

    ## Why is this bad?
    Its edges are unknown, not safe: a major-spanning range below it cannot be seen. And
    to resolve it at all, the resolver built the sdist, which runs the package's own build
    code on your machine (and again on every build that installs it).

    ## Example
    A package published only as an sdist.

    ## Use instead
    Prefer a version that ships a wheel, or resolve with `--only-binary` to refuse sdists.
    """

    id = "AG105"
    name = "dependency-ranges-unknown"
    title = "Declared ranges of a package unknown (no wheel metadata)"
    default_severity = Severity.MEDIUM
    family = "dependencies"


def _majors_text(majors: tuple[str, ...]) -> str:
    if len(majors) <= 6:
        return ", ".join(majors)
    return f"{', '.join(majors[:3])}, ..., {', '.join(majors[-2:])}"


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
    for s in SpecifierSet(specifier):
        if s.operator in (">=", ">", "~="):
            try:
                lower = Version(s.version)
            except ValueError:
                return None
            if major_key(lower) != major_key(locked):
                return f"{child}{s.operator}{lower},<{next_major_floor(lower)}"
    return None


def check_major_spans(graph: LockGraph, policy: DepsPolicy) -> list[Finding]:
    """AG101 for every edge whose specifier admits two or more released majors."""
    findings: list[Finding] = []
    own: dict[str, list[DependencyEdge]] = {}
    for e in graph.edges:
        if e.parent == PROJECT:
            own.setdefault(e.child, []).append(e)
    for edge in graph.edges:
        majors = edge.admitted_majors
        if majors is None or len(majors) <= 1:
            continue
        locked_versions = sorted({p.version for p in graph.versions_of(edge.child)}, key=Version)
        if not locked_versions:
            continue
        locked_v = Version(locked_versions[-1])
        if edge.parent == PROJECT:
            path: tuple[str, ...] = ("project", edge.child)
        else:
            path = (*graph.path_to(edge.parent), edge.child)
        watched = policy.is_watched(edge.child)
        if watched:
            severity = policy.watched_severity
        elif edge.parent != PROJECT and policy.is_watched(edge.parent):
            severity = policy.watched_parent_severity
        else:
            severity = policy.tail_severity
        cap = _cap(edge.child, edge.specifier, locked_v)
        alt = _alternative_cap(edge.child, edge.specifier, locked_v)
        mitigated_by = [
            o.specifier
            for o in own.get(edge.child, [])
            if o != edge and o.admitted_majors is not None and len(o.admitted_majors) <= 1
        ]
        if edge.parent == PROJECT:
            parent_label = "the project"
        else:
            parent_label = f"{edge.parent}=={edge.parent_version}"
        message = (
            f"{parent_label} declares {edge.child}{edge.specifier}, which admits "
            f"{len(majors)} released majors of {edge.child} ({_majors_text(majors)}); "
            f"locked: {edge.child}=={', '.join(locked_versions)}."
        )
        if unbounded_above(edge.specifier):
            message += " The range has no upper bound, so every future major is admitted too."
        evidence = {
            "parent": "project" if edge.parent == PROJECT else edge.parent,
            "parent_version": edge.parent_version,
            "child": edge.child,
            "specifier": edge.specifier,
            "marker": edge.marker,
            "majors_admitted": list(majors),
            "locked": locked_versions,
            "unbounded_above": unbounded_above(edge.specifier),
            "watched": watched,
            "mitigated_by": mitigated_by,
        }
        if alt:
            fix = Fix(
                f"Cap {edge.child} at the major you have tested: add `{cap}` (the locked major) to "
                f"your requirements, or `{alt}` if your code was written against that major.",
                snippet=cap,
            )
        else:
            fix = Fix(f"Add `{cap}` to your requirements (the locked major).", snippet=cap)
        if edge.child in policy.span_accepted:
            severity = Severity.INFO
            message += " Accepted by policy (deps.span-accepted): upstream supports these majors on purpose."
        elif mitigated_by:
            severity = Severity.INFO
            message += f" Mitigated: the project's own requirement {edge.child}{mitigated_by[0]} holds one major."
        findings.append(
            MajorSpanningRange.finding(
                message,
                locations=[Location(dependency_path=path, note=edge.specifier or "(any version)")],
                fix=fix,
                evidence=evidence,
                severity=severity,
                confidence=Confidence.HIGH,
            )
        )
    return findings


def check_major_crossings(
    old: Mapping[str, str],
    graph: LockGraph,
    allow_major: Iterable[str],
) -> list[Finding]:
    """AG102 for each package whose major changed since the previous lock."""
    allowed = set(allow_major)
    findings: list[Finding] = []
    for pkg in sorted(graph.packages, key=lambda p: p.name):
        before = old.get(pkg.name)
        if before is None:
            continue
        if major_key(Version(before)) == major_key(pkg.parsed_version):
            continue
        edges = graph.edges_into(pkg.name)
        allowed_by = [
            f"{'project' if e.parent == PROJECT else e.parent + '==' + str(e.parent_version)} "
            f"declares {e.child}{e.specifier}"
            for e in edges
        ]
        severity = Severity.INFO if pkg.name in allowed else MajorCrossedOnRelock.default_severity
        message = (
            f"{pkg.name} would move from {before} to {pkg.version} (major {major_key(Version(before))} "
            f"-> {major_key(pkg.parsed_version)}), allowed by: {'; '.join(allowed_by) or 'unknown'}."
        )
        if pkg.name in allowed:
            message += " Let through by --allow-major."
        findings.append(
            MajorCrossedOnRelock.finding(
                message,
                locations=[Location(dependency_path=graph.path_to(pkg.name))],
                fix=Fix(
                    f"Review {pkg.name} {major_key(pkg.parsed_version)}, then re-run with "
                    f"`--allow-major {pkg.name}`; or add `{pkg.name}<{next_major_floor(Version(before))}` "
                    "to stay on the locked major.",
                    snippet=f"{pkg.name}<{next_major_floor(Version(before))}",
                ),
                evidence={
                    "package": pkg.name,
                    "old": before,
                    "new": pkg.version,
                    "allowed_by": allowed_by,
                },
                severity=severity,
            )
        )
    return findings


def check_unknown_metadata(graph: LockGraph) -> list[Finding]:
    return [
        DependencyRangesUnknown.finding(
            f"{name} is published only as an sdist: the resolver built it (running its build "
            "code) to learn its requirements; agentguard did not, so its edges were not checked.",
            locations=[Location(dependency_path=graph.path_to(name))],
            fix="Prefer a version that ships a wheel, or re-run with `--only-binary` (refuses "
            "sdists: no package code runs).",
            evidence={"package": name},
            confidence=Confidence.MEDIUM,
        )
        for name in sorted(graph.unknown_metadata)
    ]

"""The dependency change: constraint lines that cap each major-spanning edge at the locked
major, and the Dockerfile lines that install the lock with ``--require-hashes``.

The edges come from the lock's graph (``pylock.toml``'s ``[tool.agentguard]`` table, read
without network) through the same AG101 rule ``agentguard lock`` runs; an AG121 finding
(an agent SDK without an upper bound in the requirements) is capped at the locked major
when the lock has the package, else with the rule's own fix when it names one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard.config import DepsPolicy
from agentguard.findings import Finding, Severity
from agentguard.harden.escape import comment
from agentguard.lock.graph import LockGraph, major_floor, next_major_floor
from agentguard.lock.lockfile import REQUIREMENTS_LOCK
from agentguard.rules.deps_spans import check_major_spans

CONSTRAINTS_FILE = "deps/constraints.txt"
INSTALL_FILE = "deps/install-line.txt"

INSTALL_LINES = (
    f"COPY {REQUIREMENTS_LOCK} /tmp/agentguard/{REQUIREMENTS_LOCK}",
    "RUN python -m pip install --no-cache-dir --no-deps --require-hashes "
    f"-r /tmp/agentguard/{REQUIREMENTS_LOCK}",
)


@dataclass
class DepsChanges:
    files: dict[str, str] = field(default_factory=dict)
    spans: list[Finding] = field(default_factory=list)  # AG101 from the lock, each capped
    capped: dict[str, str] = field(default_factory=dict)  # package -> constraint line
    alternatives: dict[str, str] = field(default_factory=dict)  # package -> the lower major's cap
    tail: int = 0  # long-tail spanning edges (low severity) not capped
    notes: list[str] = field(default_factory=list)


def _locked(graph: LockGraph, name: str) -> Version | None:
    versions: list[Version] = []
    for p in graph.versions_of(name):
        try:
            versions.append(Version(p.version))
        except InvalidVersion:
            continue
    return max(versions) if versions else None


def _locked_cap(child: str, finding: Finding) -> str | None:
    locked = [Version(str(v)) for v in finding.evidence.get("locked") or []]
    if not locked:
        return None
    cap = f"{child}>={major_floor(max(locked))},<{next_major_floor(max(locked))}"
    marker = finding.evidence.get("locked_marker")
    return f"{cap} ; {marker}" if marker else cap


def lower_major_cap(child: str, specifier: str, finding: Finding) -> str | None:
    """The cap at the range's lowest major, when it differs from the locked one."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    from agentguard.lock.graph import major_key

    locked = [Version(str(v)) for v in finding.evidence.get("locked") or []]
    if not locked:
        return None
    try:
        specs = list(SpecifierSet(specifier))
    except InvalidSpecifier:
        return None
    for s in specs:
        if s.operator in (">=", ">", "~="):
            try:
                lower = Version(s.version)
            except InvalidVersion:
                return None
            if major_key(lower) != major_key(max(locked)):
                return f"{child}{s.operator}{lower},<{next_major_floor(lower)}"
    return None


def keeps_locked(finding: Finding) -> bool:
    """True when the finding's first fix keeps the locked version."""
    from packaging.requirements import InvalidRequirement, Requirement

    try:
        req = Requirement(str(finding.fix.snippet))
    except InvalidRequirement:
        return True
    return all(
        req.specifier.contains(str(v), prereleases=True)
        for v in finding.evidence.get("locked") or []
    )


def cap_key(child: str, marker: object = None) -> str:
    """One constraint line per package and fork: ``name`` or ``name ; marker``."""
    return f"{child} ; {marker}" if marker else child


def plan_deps(
    graph: LockGraph | None, policy: DepsPolicy, findings: Sequence[Finding]
) -> DepsChanges:
    out = DepsChanges()
    reasons: dict[str, str] = {}
    tail = 0
    if graph is not None:
        for f in check_major_spans(graph, policy):
            if f.severity is Severity.INFO or not f.fix.snippet:
                continue  # accepted by policy, or already held to one major by the project
            if f.severity < Severity.MEDIUM:
                tail += 1  # the long tail: `agentguard lock` lists them; capping all is noise
                continue
            child = str(f.evidence.get("child"))
            key = cap_key(child, f.evidence.get("locked_marker"))
            out.spans.append(f)
            if key in out.capped:
                continue
            out.capped[key] = f.fix.snippet
            reasons[key] = (
                f"{f.evidence.get('parent')} declares {child}{f.evidence.get('specifier')} "
                f"(admits {', '.join(map(str, f.evidence.get('majors_admitted') or []))}); "
                f"locked {', '.join(map(str, f.evidence.get('locked') or []))}"
                + (f" ; {f.evidence['locked_marker']}" if f.evidence.get("locked_marker") else "")
            )
            bound = f.evidence.get("upstream_bound")
            if isinstance(bound, dict):
                releases = [str(v) for v in bound.get("parent_versions") or []]
                shown = releases[0] if len(releases) == 1 else f"{releases[0]} to {releases[-1]}"
                locked_cap = _locked_cap(child, f)
                reasons[key] += (
                    f". Later releases of {f.evidence.get('parent')} ({shown}) declare "
                    f"{child}{bound.get('specifier')}: capped below the locked major, as upstream "
                    "does"
                )
                if locked_cap is not None and f.severity >= Severity.HIGH:
                    out.alternatives[key] = locked_cap
                    reasons[key] += f". Or {locked_cap} once your code is tested against it"
                continue
            if f.evidence.get("first_fix_basis") == "upload-times" and not keeps_locked(f):
                locked_cap = _locked_cap(child, f)
                reasons[key] += (
                    f". {f.evidence.get('parent')}=={f.evidence.get('parent_version')} was "
                    f"uploaded before {child} {f.evidence.get('majors_admitted', [''])[-1]} "
                    f"shipped: capped at {child} {f.evidence.get('built_for')}, the newest major "
                    "it can have been built against"
                )
                if locked_cap is not None and f.severity >= Severity.HIGH:
                    out.alternatives[key] = locked_cap
                    reasons[key] += f". Or {locked_cap} once your code is tested against it"
                continue
            alt = lower_major_cap(child, str(f.evidence.get("specifier") or ""), f)
            if alt is not None and f.severity >= Severity.HIGH:  # the agent stack itself
                marker = f.evidence.get("locked_marker")
                alt = f"{alt} ; {marker}" if marker else alt
                out.alternatives[key] = alt
                reasons[key] += (
                    f". Or {alt} if your code was written against that major: which one is "
                    "right depends on the version you tested"
                )
    for f in findings:
        if f.rule_id != "AG121":
            continue
        name = str(canonicalize_name(str(f.evidence.get("package", ""))))
        if not name or name in out.capped:
            continue
        locked = _locked(graph, name) if graph is not None else None
        if locked is not None:
            out.capped[name] = f"{name}>={major_floor(locked)},<{next_major_floor(locked)}"
            reasons[name] = f"required as {f.evidence.get('requirement')}; locked {locked}"
        elif f.fix.snippet and "<" in f.fix.snippet:
            out.capped[name] = f.fix.snippet
            reasons[name] = f"required as {f.evidence.get('requirement')}; no lock: the rule's cap"
    out.tail = tail
    if out.capped:
        lines = [
            "# agentguard harden: each line caps a dependency at one major (the locked one,",
            "# unless later releases of its parent hold it lower: then as upstream does).",
            "# Add them to your requirements (pyproject dependencies or requirements.in), or",
            "# pass this file with pip's -c, then re-run `agentguard lock`.",
        ]
        for name in sorted(out.capped):
            lines += [f"# {comment(reasons[name])}", out.capped[name]]
        if tail:
            lines.append(
                f"# {tail} more edges of the long tail span majors (low severity, not capped "
                "here): `agentguard lock` lists them"
            )
        out.files[CONSTRAINTS_FILE] = "\n".join(lines) + "\n"
    out.files[INSTALL_FILE] = (
        "# agentguard harden: install the agent stack from the lock, every file checked\n"
        "# against its hash and nothing resolved at build time. In the Dockerfile, use these\n"
        "# lines instead of `pip install <packages>` / `pip install -r requirements.txt`\n"
        f"# ({REQUIREMENTS_LOCK} is written by `agentguard lock`).\n"
        + "\n".join(INSTALL_LINES)
        + "\n"
    )
    return out

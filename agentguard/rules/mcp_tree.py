"""AG147: an npm MCP server's own dependency tree (recorded in ``mcp.lock.json``) takes a
package from outside the lock's registry, or records one without an integrity. And the
AG142 cases of the tree: an npm entry that records none, one that disagrees with its entry
or itself, a dependency in a scope the project points at another registry. Facts in
(:class:`~agentguard.facts.npm_tree.NpmTree`), findings out, no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.mcp_pins import NPM, ServerLaunch, ServerPin
from agentguard.facts.npm_tree import (
    ELSEWHERE,
    GIT,
    LOCAL,
    NO_SOURCE,
    TreePackage,
    dependency_path,
    in_scopes,
    outside,
    problems,
)
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.redact import text as redact_text
from agentguard.rules.base import Rule, register
from agentguard.rules.mcp_pins import LOCK_NAME, WRITE_LAUNCH, ServerLaunchDrifts

_FROM = {
    GIT: "from a git repository",
    ELSEWHERE: "from a URL outside the registry",
    LOCAL: "from a local path",
    NO_SOURCE: "with no source recorded (npm wrote no `resolved`), so where it comes from is unknown",
}


@register
class ServerDependencyOffRegistry(Rule):
    """An npm MCP server's dependency tree takes a package from outside the registry.

    ## What it does
    `agentguard lock` records each npm server's own dependency tree in `mcp.lock.json`
    (one real `npm install --package-lock-only` of the server's exact version, from the
    lock's registry) and reports every package of it whose `resolved` is not a tarball of
    that registry: a git repository (`git+https://host/repo.git#sha`, `github:owner/repo`), a
    tarball URL on another host, a local path (`file:`), or no source at all (high; no
    source: medium), with the dependency path from the server to it. (A tarball URL of the
    public npm registry counts as the lock's registry's: npm fetches it from the configured
    registry, and a mirror's packuments often keep those URLs.) A package recorded without
    an integrity is reported too (medium): what it holds is unknown, and no install can
    check it. `lock --check` reports the same from the recorded tree, offline.

    ## Why is this bad?
    The registry's integrity (`dist.integrity`, sha512) is what pins a package's bytes:
    `npm ci` checks every tarball against it. A git dependency is whatever the repository
    serves for that ref (and its `prepare` script runs at install), a tarball elsewhere is
    whatever that host serves today, a local path is whatever the machine holds. The
    server runs with the agent's access, and so does each of its dependencies.

    ## Example
    `@acme/tracker-mcp` 2.0.1 depends on `helper` 1.0.0, which depends on
    `"left-pad": "git+https://git.example/left-pad.git"`.

    ## Use instead
    Launch a version of the server whose whole tree comes from the registry (ask its
    publisher to depend on a registry release of the package), then re-lock with
    `agentguard lock`.
    """

    id = "AG147"
    name = "mcp-server-dependency-off-registry"
    title = "npm MCP server's dependency tree takes a package from outside the registry"
    default_severity = Severity.HIGH
    family = "dependencies"


def _where(pin: ServerPin) -> list[Location]:
    return [Location(path=pin.path, line=pin.line, note=f"MCP server {pin.server!r}")]


def _in_lock(pin: ServerPin) -> list[Location]:
    return [Location(path=LOCK_NAME, line=pin.entry_line, note=f"MCP server {pin.server!r}")]


def tree_findings(pins: Iterable[ServerPin], hosts: frozenset[str] = frozenset()) -> list[Finding]:
    """AG147 for each package of an npm pin's tree that is not from the pin's registry
    (``hosts``: the registry's file hosts the user named), or has no integrity."""
    out: list[Finding] = []
    for pin in pins:
        if pin.kind != NPM or pin.tree is None:
            continue
        for dep in pin.tree.packages:
            why = outside(dep, pin.registry, hosts)
            if why is None and dep.integrity is not None:
                continue
            out.append(_off_registry(pin, dep, why))
    return out


def _off_registry(pin: ServerPin, dep: TreePackage, why: str | None) -> Finding:
    assert pin.tree is not None
    chain = dependency_path(pin.tree, pin.package, dep.path)
    source = redact_text(dep.resolved) if dep.resolved else None
    what = f"`{redact_text(dep.name)}` {redact_text(dep.version or 'of no version')}"
    head = f"MCP server {pin.server!r} (`{pin.package}` {pin.version}) depends on {what}"
    if why is not None:
        said = _FROM[why] + (f" (`{source}`)" if source and why != NO_SOURCE else "")
        message = f"{head} {said}, not from the registry {pin.registry or '(unknown)'}"
        if dep.integrity is None:
            message += ", and with no integrity"
        fix = Fix(
            f"Launch a version of {pin.package} whose dependencies all come from the "
            f"registry (ask its publisher to depend on a registry release of "
            f"{redact_text(dep.name)}), then re-lock (`agentguard lock`); until then review "
            "what that source serves before the server runs."
        )
        severity = Severity.MEDIUM if why == NO_SOURCE else Severity.HIGH
    else:
        message = (
            f"{head}, which npm recorded with no integrity: what it holds is unknown, and "
            "no install can check it"
        )
        fix = Fix(
            f"Re-lock from a registry that serves `dist.integrity` for "
            f"{redact_text(dep.name)} (`agentguard lock`); until then treat the server's "
            "tree as unpinned."
        )
        severity = Severity.MEDIUM
    path = " -> ".join(redact_text(c) for c in chain)
    return ServerDependencyOffRegistry.finding(
        f"{message}; path: {path}.",
        locations=_where(pin),
        fix=fix,
        evidence={
            "server": pin.server,
            "package": pin.package,
            "version": pin.version,
            "dependency": redact_text(dep.name),
            "dependency_version": dep.version,
            "tree_path": redact_text(dep.path),
            "resolved": source,
            "integrity": dep.integrity,
            "source": why or "registry",
            "dependency_path": [redact_text(c) for c in chain],
        },
        severity=severity,
    )


def tree_state_findings(pins: Iterable[ServerPin]) -> list[Finding]:
    """AG142 (``lock --check``) for each npm entry that records no tree, or a tree that
    does not agree with its entry or with itself (edited by hand)."""
    out: list[Finding] = []
    for pin in pins:
        if pin.kind != NPM:
            continue
        relock = Fix(
            f"Re-lock (`agentguard lock`): it records the tree npm resolves for "
            f"{pin.package} {pin.version} from the registry."
        )
        evidence = {"server": pin.server, "package": pin.package, "locked": pin.version}
        if pin.tree is None:
            out.append(
                ServerLaunchDrifts.finding(
                    f"{LOCK_NAME} records no dependency tree for MCP server {pin.server!r} "
                    f"({pin.package} {pin.version}): its dependencies are resolved from their "
                    "ranges at every start, so the lock pins the server's own tarball only.",
                    locations=_in_lock(pin),
                    fix=relock,
                    evidence={**evidence, "tree": None},
                )
            )
            continue
        wrong = problems(pin.tree, pin.package, pin.version, pin.integrity)
        if wrong:
            out.append(
                ServerLaunchDrifts.finding(
                    f"The dependency tree {LOCK_NAME} records for MCP server {pin.server!r} "
                    f"({pin.package} {pin.version}) is not consistent: "
                    f"{redact_text('; '.join(wrong[:3]))}.",
                    locations=_in_lock(pin),
                    fix=relock,
                    evidence={**evidence, "tree": [redact_text(w) for w in wrong[:8]]},
                )
            )
    return out


def scope_findings(pairs: Iterable[tuple[ServerLaunch, ServerPin]]) -> list[Finding]:
    """AG142 for each npm launch whose tree holds a package of a scope the project (or the
    launch) points at another registry: npx fetches that package from there, not from the
    registry the tree was resolved from."""
    out: list[Finding] = []
    for launch, pin in pairs:
        if pin.kind != NPM or pin.tree is None or not launch.scoped:
            continue
        where = dict(launch.scoped)
        hits = in_scopes(pin.tree, where)
        if not hits:
            continue
        dep, scope = hits[0]
        others = f" (and {len(hits) - 1} more of its scopes)" if len(hits) > 1 else ""
        out.append(
            ServerLaunchDrifts.finding(
                f"MCP server {launch.server!r} launches `{pin.package}`, whose dependency tree "
                f"holds `{redact_text(dep.name)}` {redact_text(dep.version or '')}{others}; "
                f"{redact_text(where[scope])} for the scope {scope}, so npx fetches it from "
                "a registry the project chooses, not the one the tree was locked from: it is "
                "not verifiably pinned.",
                locations=_where(pin),
                fix=Fix(
                    f"Drop the {scope} registry setting from the project's files (a private "
                    "registry belongs in CI's own configuration), then `agentguard lock` and "
                    f"`{WRITE_LAUNCH}`."
                ),
                evidence={
                    "server": launch.server,
                    "package": pin.package,
                    "dependency": redact_text(dep.name),
                    "scope": scope,
                    "why": "registry",
                },
            )
        )
    return out

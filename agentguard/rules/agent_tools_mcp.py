"""AG310 (MCP servers launched unpinned) and AG320 (silent model fallback): facts only."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard import escape
from agentguard.facts.agents import AgentConfig, FallbackSite, McpServer, ProjectFacts
from agentguard.facts.builtin_tools import option_syntax
from agentguard.facts.values import alternatives, describe, redact_text
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.agent_tools import McpServerUnpinned, SilentModelFallback

# (the MCP launch and pin records are imported where there is a server or a server lock:
# the fallback rules here run over every configuration, most projects launch no server)
if TYPE_CHECKING:
    from agentguard.facts.mcp_pins import ServerLock


def _fix(server: McpServer, pinned: str, lock: ServerLock | None, project: bool) -> Fix:
    """What AG310 says to do: the version the MCP server lock holds and the command that
    pins it; without one, in a project, the command that resolves and writes it."""
    from agentguard.facts.mcp_pins import (
        IMAGE,
        REWRITABLE_SUFFIXES,
        ServerLaunch,
        launch_of,
        pin_for,
    )

    launch = launch_of(server)
    pin = (
        pin_for(launch, lock.pins)
        if lock is not None and isinstance(launch, ServerLaunch)
        else None
    )
    if pin is not None and isinstance(launch, ServerLaunch):
        command = redact_text(pin.pinned_command(launch.launcher, launch.extras))
        return Fix(
            f"Pin it: launch `{command}` (the version {lock.path if lock else ''} holds); "
            f"`agentguard lock --write-launch` writes it into {server.path}.",
            snippet=escape.snippet(command),
        )
    if not pinned:
        return Fix("Name the server's package with an exact version (or an image digest).")
    if project and isinstance(launch, ServerLaunch) and launch.kind != IMAGE:
        if server.path.endswith(REWRITABLE_SUFFIXES):
            return Fix(
                f"Pin it: run `agentguard lock --write-launch`, which resolves the version the "
                f"launch gets today, records it in mcp.lock.json and launches `{pinned}` with "
                "it; then update it on purpose.",
                snippet="agentguard lock --write-launch",
            )
        # a launch in a file --write-launch does not edit: it lists it, with the pin
        return Fix(
            f"Pin it: run `agentguard lock`, which resolves the version the launch gets today "
            f"and records it in mcp.lock.json; then launch `{pinned}` with that version in "
            f"{server.path} and update it on purpose.",
            snippet=escape.snippet(pinned),
        )
    return Fix(
        f"Pin it: launch `{pinned}` (an exact version, or an image digest) and update it on "
        "purpose.",
        snippet=escape.snippet(pinned),
    )


def check_mcp_server(
    server: McpServer, lock: ServerLock | None = None, *, project: bool = True
) -> list[Finding]:
    """AG310. ``lock``: the project's MCP server lock; ``project``: the server is in a
    project folder (`agentguard lock` can pin it there), not in an image's files."""
    from agentguard.facts.launch_pins import unpinned

    found = unpinned(server)
    if found is None:
        return []
    what, why, severity = redact_text(found.what), redact_text(found.why), found.severity
    pinned = redact_text(found.pinned)
    fix = Fix(redact_text(found.fix)) if found.fix else _fix(server, pinned, lock, project)
    return [
        McpServerUnpinned.finding(
            f"MCP server {server.name!r} ({server.declared_in}) launches {what}: {why}.",
            locations=[Location(path=server.path, line=server.line, note=server.declared_in)],
            fix=fix,
            evidence={
                "server": server.name,
                "argv": server.safe_argv()[:12],
                "declared_in": server.declared_in,
            },
            severity=severity,
            confidence=Confidence.LOW if severity is Severity.LOW else Confidence.HIGH,
        )
    ]


def check_server_lock(facts: ProjectFacts) -> list[Finding]:
    """AG142 where a project keeps an MCP server lock: a launch of another version than the
    locked one, a launch the lock does not hold, an entry whose launch is gone (an unpinned
    launch is AG310's, which names the locked version)."""
    if facts.server_lock is None:
        return []
    from agentguard.facts.mcp_pins import IMAGE, registry_launches
    from agentguard.rules.mcp_drift import drift_findings

    found, _ = registry_launches(facts.mcp_servers)
    lockable = [x for x in found if x.kind != IMAGE or x.digest]
    return drift_findings(lockable, facts.server_lock.pins, unpinned=False)


def check_fallback_option(cfg: AgentConfig) -> list[Finding]:
    opt = cfg.option("fallback_model")
    if opt is None:
        return []
    alts = alternatives(opt.value)
    set_alts = [a for a in alts if a is not None and a != ""]
    if not set_alts:
        return []
    certain = all(isinstance(a, str) for a in set_alts) and len(set_alts) == len(alts)
    # as written where the option is an action's input (`fallback_model:`)
    name = opt.expr.rstrip(":") if opt.expr.endswith(":") else option_syntax(cfg, "fallback_model")
    return [
        SilentModelFallback.finding(
            f"{cfg.engine} configuration sets `{name}` = {describe(opt.value)}: when the "
            "primary model fails or is overloaded, another model answers and the caller is "
            "not told.",
            locations=[Location(path=cfg.path, line=opt.line, note=cfg.label)],
            fix=Fix(
                "Leave a witness: drop the fallback, or log which model answered each request "
                "and why the primary failed."
            ),
            evidence={"engine": cfg.engine, "fallback_model": describe(opt.value)},
            confidence=Confidence.HIGH if certain else Confidence.LOW,
            ambiguous=cfg.ambiguous,
        )
    ]


def check_fallback_site(site: FallbackSite) -> list[Finding]:
    if site.witnessed:
        return []
    message = (
        f"{site.detail}: when the primary model fails, another model answers and the caller "
        "is not told."
        if site.kind == "framework-option"
        else f"{site.detail}, without logging or re-raising: the failure of the primary model "
        "is hidden behind another model's answer."
    )
    return [
        SilentModelFallback.finding(
            message,
            locations=[Location(path=site.path, line=site.line)],
            fix=Fix(
                "Leave a witness: log which model answered and why the primary failed "
                "(or re-raise).",
                snippet='log.warning("primary model failed (%s); answering with %s", exc, '
                "FALLBACK_MODEL)",
            ),
            evidence={"kind": site.kind, "detail": site.detail, "models": list(site.models)},
            confidence=Confidence.MEDIUM if site.certain else Confidence.LOW,
        )
    ]

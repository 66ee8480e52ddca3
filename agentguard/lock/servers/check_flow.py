"""``lock --check`` for the MCP servers a project launches: every launch against
``mcp.lock.json``, offline (AG142, AG143), each npm entry's recorded dependency tree
(present, well-formed, consistent: AG142; from the registry: AG147), and the signatures
and attestations the lock records verified again (:mod:`.recheck`). And
:func:`relocated`: the lock's pins as ``--write-launch`` left the launches."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import IMAGE, ServerLock, ServerPin, major_of, pin_for
from agentguard.findings import Source
from agentguard.lock.servers import recheck
from agentguard.lock.servers.flow import ServerResult, launches, read_lock, unverified
from agentguard.lock.servers.lockfile import MCP_LOCK
from agentguard.lock.servers.trust_roots import TrustRoots
from agentguard.lock.urls import configured_hosts
from agentguard.rules.mcp_pins import drift_findings, image_findings
from agentguard.rules.mcp_provenance import failure_findings
from agentguard.rules.mcp_tree import scope_findings, tree_findings, tree_state_findings


def check_servers(
    servers: Sequence[McpServer], root: Path, trust: TrustRoots | None = None
) -> ServerResult:
    """``lock --check``: every launch against ``mcp.lock.json``, offline; the signatures
    and attestations it records are verified again (:mod:`.recheck`)."""
    found, sources = launches(servers)
    lock, failed = read_lock(root)
    odd = unverified(servers)
    if failed is not None:
        return ServerResult(odd, sources=(*sources, failed))
    findings = [*odd, *image_findings(found)]
    lockable = [x for x in found if x.kind != IMAGE or x.digest]
    if lock is None:
        if lockable:
            sources.append(
                Source.skipped(
                    "lockfile",
                    MCP_LOCK,
                    f"no MCP server lock: {len(lockable)} launch(es) not checked against one "
                    "(`agentguard lock` writes it)",
                )
            )
        return ServerResult(tuple(findings), tuple(sources))
    findings += drift_findings(lockable, lock.pins)
    findings += tree_state_findings(lock.pins) + tree_findings(lock.pins, configured_hosts())
    findings += scope_findings((x, p) for x in lockable if (p := pin_for(x, lock.pins)) is not None)
    trusted = recheck.recorded(root, lock.pins, trust)
    findings += failure_findings(trusted.pins, recorded=True)
    sources += trusted.sources
    sources.append(
        Source.ok("lockfile", MCP_LOCK, f"{len(lockable)} MCP server launch(es) checked")
    )
    sources += [
        Source.skipped(
            "mcp-tools",
            f"{p.server} ({MCP_LOCK}" + (f":{p.entry_line})" if p.entry_line else ")"),
            "tools not compared with the recorded tools/list snapshot: that needs the server "
            "started (`agentguard check --smoke` or `agentguard lock --smoke`)",
        )
        for p in lock.pins
        if p.tools is not None
    ]
    return ServerResult(tuple(findings), tuple(sources))


def relocated(lock: ServerLock, servers: Sequence[McpServer]) -> tuple[ServerPin, ...] | None:
    """The lock's pins with each launch's line and request as ``servers`` (read again once
    ``--write-launch`` rewrote them) now spell them, so that the lock written by the run
    that pinned the launches is the one a re-lock writes; None when nothing moved. A pin
    whose key now has no launch, or two, keeps what it recorded."""
    found, _ = launches(servers)
    moved = False
    out: list[ServerPin] = []
    for pin in lock.pins:
        same = [x for x in found if x.key == pin.key]
        if len(same) == 1 and (same[0].line, same[0].requested) != (pin.line, pin.requested):
            launch, majors = same[0], pin.majors
            own = major_of(pin.version)
            if launch.spec == pin.pinned_spec(launch.extras) and own in pin.released_majors:
                majors = (own,)  # the exact pin admits its own major only, as a re-lock finds
            pin = replace(pin, line=launch.line, requested=launch.requested, majors=majors)
            moved = True
        out.append(pin)
    return tuple(out) if moved else None

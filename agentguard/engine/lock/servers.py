"""`agentguard lock` for the MCP servers a project launches: each launch that takes a
package or an image from a registry is resolved (:mod:`agentguard.lock.servers.resolve`),
gated (AG141: a re-lock never moves a server across a major unless ``--allow-major``),
judged (AG140, AG143) and written to ``mcp.lock.json``
(:mod:`agentguard.lock.servers.lockfile`); ``lock --check`` compares the launches with it
offline (AG142).

A launch that could not be resolved is a failed source, never a pin, and then the lock
file is not written at all (what it held stays as it was)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import IMAGE, ServerLock, ServerPin, registry_launches
from agentguard.findings import Finding, JSONValue, Source
from agentguard.lock.servers import lockfile, recheck
from agentguard.lock.servers.lockfile import MCP_LOCK
from agentguard.lock.servers.resolve import (
    Resolved,
    ServerOptions,
    ServerResult,
    launches,
    previous_pin,
    raw_lock,
    read_lock,
    resolve_launches,
)
from agentguard.lock.servers.trust_roots import TrustRoots
from agentguard.rules.mcp_drift import drift_findings, unverified_findings
from agentguard.rules.mcp_pins import crossing_findings, image_findings, span_findings
from agentguard.rules.mcp_provenance import downgrade_findings, failure_findings


def unverified(servers: Sequence[McpServer]) -> tuple[Finding, ...]:
    """AG142 for each launch the lock cannot check (never pinned, never rewritten)."""
    return tuple(unverified_findings(registry_launches(servers)[1]))


def resolve_servers(servers: Sequence[McpServer], opts: ServerOptions) -> Resolved:
    """Resolve every registry launch (:func:`agentguard.lock.servers.resolve.resolve_launches`:
    in threads, within the deadline; nothing written), with AG142 for each launch the lock
    cannot check. Runs beside the Python resolver: it holds no lock of the project."""
    return replace(resolve_launches(servers, opts), unverified=unverified(servers))


def write_servers(resolved: Resolved, opts: ServerOptions) -> ServerResult:
    """Gate (AG141), judge (AG140, AG143) and write ``mcp.lock.json``; run while holding
    the project's lock, and refused when the file changed since it was read."""
    found, sources, previous = resolved.found, list(resolved.sources), resolved.previous
    odd = resolved.unverified
    if resolved.failed is not None:
        return ServerResult(odd, sources=(*sources, resolved.failed))
    if not found and previous is None:
        return ServerResult(odd, sources=tuple(sources))
    if raw_lock(opts.root) != resolved.seen:
        sources.append(
            Source.failed(
                "lockfile",
                MCP_LOCK,
                "the MCP server lock changed while this run resolved the servers",
                error_code="mcp-lock-changed",
                retryable=True,
                remedy="Run `agentguard lock` again.",
            )
        )
    # a recorded tools snapshot stays with its entry (`lock --smoke` compares and re-records
    # it; a re-lock without the smoke run cannot see the tools, so it keeps what it has)
    pairs = tuple((x, _with_tools(p, previous_pin(x, previous))) for x, p in resolved.pairs)
    pins = [p for _, p in pairs]
    crossings = crossing_findings(
        [(x, b, p) for x, p in pairs if (b := previous_pin(x, previous)) is not None],
        opts.allow_major,
    )
    fails = failure_findings(pins)
    downs = downgrade_findings(
        (b, p) for x, p in pairs if (b := previous_pin(x, previous)) is not None
    )
    if crossings or fails or any(s.status.value == "failed" for s in sources):
        # the lock is left as it was: what it holds is what the findings name
        held = [(x, p, previous_pin(x, previous)) for x, p in pairs]
        findings = [*odd, *span_findings(held), *image_findings(found), *crossings, *fails]
        findings += downs
        why = (
            "a server would cross a major"
            if crossings
            else "a server's signature or provenance does not verify"
            if fails
            else "a server could not be resolved"
        )
        note = f"{MCP_LOCK} was not written ({why}); it holds what it held before."
        return ServerResult(tuple(findings), tuple(sources), (note,))
    findings = [*odd, *span_findings((x, p, p) for x, p in pairs), *image_findings(found)]
    findings += downs
    facts: dict[str, JSONValue] = {"mcp_servers_locked": [_fact(p) for p in pins]}
    written = lockfile.write(opts.root, pins)
    lock = ServerLock(MCP_LOCK, tuple(pins), "")
    sources.append(
        Source.ok(
            "lockfile",
            MCP_LOCK,
            f"{len(pins)} MCP server launch(es) pinned" + ("" if written else " (unchanged)"),
        )
    )
    note = (
        f"Wrote {MCP_LOCK} ({len(pins)} MCP server launch(es) pinned)."
        if written
        else f"{MCP_LOCK} is up to date ({len(pins)} MCP server launch(es) pinned)."
    )
    return ServerResult(tuple(findings), tuple(sources), (note,), facts, written, lock)


def _with_tools(pin: ServerPin, before: ServerPin | None) -> ServerPin:
    if before is None or before.tools is None or pin.tools is not None:
        return pin
    return replace(pin, tools=before.tools)


def lock_servers(servers: Sequence[McpServer], opts: ServerOptions) -> ServerResult:
    """Resolve, gate, judge and write the MCP server lock."""
    return write_servers(resolve_servers(servers, opts), opts)


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


def _fact(pin: ServerPin) -> JSONValue:
    return {
        "server": pin.server,
        "launch": f"{pin.path}:{pin.line}",
        "kind": pin.kind,
        "package": pin.package,
        "version": pin.version,
        "majors": list(pin.majors),
        **({"signature": pin.signature.status} if pin.signature is not None else {}),
        **({"provenance": pin.attestation.status} if pin.attestation is not None else {}),
    }

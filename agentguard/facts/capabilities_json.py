"""The capability map's JSON form (the ``map`` key of ``inspect``/``check`` JSON and of
``agentguard map --format json``; schema ``agentguard/schemas/map-1.json``).

Every string from the scanned project goes through the redactor (:func:`redact.scrub`
over the whole document); JSON's own encoder escapes the rest.
"""

from __future__ import annotations

import dataclasses

from agentguard import redact
from agentguard.facts.capabilities import (
    AgentCapability,
    CapabilityMap,
    Evidence,
    Fallback,
    McpLink,
    PathAccess,
    Runner,
    SecretRef,
    ToolAccess,
    Workdir,
)
from agentguard.findings import JSONValue


def _ev(evidence: tuple[Evidence, ...]) -> list[JSONValue]:
    return [{"path": e.path, "line": e.line, "note": e.note} for e in evidence]


def _runner(r: Runner) -> dict[str, JSONValue]:
    return {
        "kind": r.kind,
        "name": r.name,
        "how": r.how,
        "image": r.image,
        "dockerfile": r.dockerfile,
        "triggers": list(r.triggers),
        "open_triggers": None if r.open_triggers is None else list(r.open_triggers),
        "confidence": r.confidence.value,
        "evidence": _ev(r.evidence),
    }


def _workdir(w: Workdir) -> dict[str, JSONValue]:
    return {
        "path": w.path,
        "holds_kind": w.holds_kind,
        "host_source": w.host_source,
        "holds": list(w.holds) if w.holds_known else None,
        "how": w.how,
        "confidence": w.confidence.value,
        "evidence": _ev(w.evidence),
    }


def _tool(t: ToolAccess) -> dict[str, JSONValue]:
    return {
        "category": t.category,
        "state": t.state,
        "tools": list(t.tools),
        "approval": t.approval,
        "how": t.how,
        "confidence": t.confidence.value,
        "evidence": _ev(t.evidence),
    }


def _path(p: PathAccess) -> dict[str, JSONValue]:
    return {
        "kind": p.kind,
        "source": p.source,
        "target": p.target,
        "writable": p.writable,
        "sensitive": p.sensitive,
        "confidence": p.confidence.value,
        "evidence": _ev(p.evidence),
    }


def _mcp(m: McpLink) -> dict[str, JSONValue]:
    return {
        "name": m.name,
        "launch": m.launch,
        "command": list(m.command),
        "pinned": m.pinned,
        "unpinned_why": m.unpinned_why,
        "how": m.how,
        "confidence": m.confidence.value,
        "evidence": _ev(m.evidence),
    }


def _secret(s: SecretRef) -> dict[str, JSONValue]:
    return {"name": s.name, "via": s.via, "evidence": _ev(s.evidence)}


def _fallback(f: Fallback) -> dict[str, JSONValue]:
    return {
        "kind": f.kind,
        "models": list(f.models),
        "witnessed": f.witnessed,
        "detail": f.detail,
        "confidence": f.confidence.value,
        "evidence": _ev(f.evidence),
    }


def agent_to_json(a: AgentCapability) -> dict[str, JSONValue]:
    return {
        "id": a.id,
        "site": {
            "kind": a.site.kind,
            "engine": a.site.engine,
            "label": a.site.label,
            "evidence": _ev((a.site.evidence,)),
        },
        "runners": [_runner(r) for r in a.runners],
        "runner_note": a.runner_note,
        "workdir": _workdir(a.workdir),
        "tools": [_tool(t) for t in a.tools] if a.tools_known else None,
        "paths": [_path(p) for p in a.paths],
        "reach": {
            "network_mode": a.reach.network_mode,
            "web": a.reach.web,
            "confidence": a.reach.confidence.value,
            "evidence": _ev(a.reach.evidence),
        },
        "mcp_servers": [_mcp(m) for m in a.mcp],
        "secrets": [_secret(s) for s in a.secrets],
        "model": {
            "primary": list(a.model.primary),
            "primary_state": a.model.primary_state,
            "evidence": _ev(a.model.evidence),
            "fallbacks": [_fallback(f) for f in a.model.fallbacks],
        },
        "hazards": [
            {"rule_id": h.rule_id, "text": h.text, "evidence": _ev((h.evidence,))}
            for h in a.hazards
        ],
    }


def map_to_json(m: CapabilityMap) -> dict[str, JSONValue]:
    """The map's JSON, every secret masked."""
    doc: dict[str, JSONValue] = {
        "target": m.target,
        "agents": [agent_to_json(a) for a in m.agents],
        "notes": list(m.notes),
    }
    return redact.scrub(doc)


def merge_maps(maps: tuple[CapabilityMap, ...]) -> CapabilityMap | None:
    """One map of several (an image's and a project's): every agent kept, renumbered."""
    if not maps:
        return None
    if len(maps) == 1:
        return maps[0]
    agents = [a for m in maps for a in m.agents]
    return CapabilityMap(
        target=" + ".join(dict.fromkeys(m.target for m in maps)),
        agents=tuple(dataclasses.replace(a, id=f"agent-{i}") for i, a in enumerate(agents, 1)),
        notes=tuple(n for m in maps for n in m.notes),
    )


def map_json(maps: tuple[CapabilityMap, ...]) -> dict[str, JSONValue] | None:
    """The ``map`` key of a report: the maps of what was read, as one (None: none built)."""
    merged = merge_maps(maps)
    return map_to_json(merged) if merged is not None else None

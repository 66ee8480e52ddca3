"""The capability map's JSON form (the ``map`` key of ``inspect``/``check`` JSON and of
``agentguard map --format json``; schema ``agentguard/schemas/map-1.json``).

Every string from the scanned project goes through the redactor (:func:`redact.text`, field
by field); JSON's own encoder escapes the rest.
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


def _s(text: str | None) -> str | None:
    """A string from the scanned project, every secret in it masked."""
    return None if text is None else redact.text(text)


def _ss(texts: tuple[str, ...]) -> list[JSONValue]:
    return [redact.text(t) for t in texts]


def _ev(evidence: tuple[Evidence, ...]) -> list[JSONValue]:
    return [{"path": _s(e.path), "line": e.line, "note": _s(e.note)} for e in evidence]


def _runner(r: Runner) -> dict[str, JSONValue]:
    return {
        "kind": r.kind,
        "name": _s(r.name),
        "how": _s(r.how),
        "image": _s(r.image),
        "dockerfile": _s(r.dockerfile),
        "triggers": _ss(r.triggers),
        "open_triggers": None if r.open_triggers is None else _ss(r.open_triggers),
        "confidence": r.confidence.value,
        "evidence": _ev(r.evidence),
    }


def _workdir(w: Workdir) -> dict[str, JSONValue]:
    return {
        "path": _s(w.path),
        "holds_kind": w.holds_kind,
        "host_source": _s(w.host_source),
        "holds": _ss(w.holds) if w.holds_known else None,
        "how": _s(w.how),
        "confidence": w.confidence.value,
        "evidence": _ev(w.evidence),
    }


def _tool(t: ToolAccess) -> dict[str, JSONValue]:
    return {
        "category": _s(t.category),
        "state": t.state,
        "tools": _ss(t.tools),
        "approval": t.approval,
        "how": _s(t.how),
        "confidence": t.confidence.value,
        "evidence": _ev(t.evidence),
    }


def _path(p: PathAccess) -> dict[str, JSONValue]:
    return {
        "kind": _s(p.kind),
        "source": _s(p.source),
        "target": _s(p.target),
        "writable": p.writable,
        "sensitive": _s(p.sensitive),
        "confidence": p.confidence.value,
        "evidence": _ev(p.evidence),
    }


def _mcp(m: McpLink) -> dict[str, JSONValue]:
    return {
        "name": _s(m.name),
        "launch": _s(m.launch),
        "command": _ss(m.command),
        "pinned": m.pinned,
        "unpinned_why": _s(m.unpinned_why),
        "how": _s(m.how),
        "confidence": m.confidence.value,
        "evidence": _ev(m.evidence),
    }


def _secret(s: SecretRef) -> dict[str, JSONValue]:
    return {"name": _s(s.name), "via": _s(s.via), "evidence": _ev(s.evidence)}


def _fallback(f: Fallback) -> dict[str, JSONValue]:
    return {
        "kind": _s(f.kind),
        "models": _ss(f.models),
        "witnessed": f.witnessed,
        "detail": _s(f.detail),
        "confidence": f.confidence.value,
        "evidence": _ev(f.evidence),
    }


def agent_to_json(a: AgentCapability) -> dict[str, JSONValue]:
    return {
        "id": a.id,
        "site": {
            "kind": a.site.kind,
            "engine": _s(a.site.engine),
            "label": _s(a.site.label),
            "evidence": _ev((a.site.evidence,)),
        },
        "runners": [_runner(r) for r in a.runners],
        "runner_note": _s(a.runner_note),
        "workdir": _workdir(a.workdir),
        "tools": [_tool(t) for t in a.tools] if a.tools_known else None,
        "paths": [_path(p) for p in a.paths],
        "reach": {
            "network_mode": _s(a.reach.network_mode),
            "web": a.reach.web,
            "confidence": a.reach.confidence.value,
            "evidence": _ev(a.reach.evidence),
        },
        "mcp_servers": [_mcp(m) for m in a.mcp],
        "secrets": [_secret(s) for s in a.secrets],
        "model": {
            "primary": _ss(a.model.primary),
            "primary_state": a.model.primary_state,
            "evidence": _ev(a.model.evidence),
            "fallbacks": [_fallback(f) for f in a.model.fallbacks],
        },
        "hazards": [
            {"rule_id": h.rule_id, "text": _s(h.text), "evidence": _ev((h.evidence,))}
            for h in a.hazards
        ],
    }


def map_to_json(m: CapabilityMap) -> dict[str, JSONValue]:
    """The map's JSON, every string from the project through the redactor."""
    doc: dict[str, JSONValue] = {
        "target": _s(m.target),
        "agents": [agent_to_json(a) for a in m.agents],
        "notes": _ss(m.notes),
    }
    return doc


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

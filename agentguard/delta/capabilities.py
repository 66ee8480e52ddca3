"""The capability delta of a change: per agent, what it can newly use, read, reach or get.

Agents are matched by where they are defined, without the line: the site's kind, engine,
file and label (``ClaudeAgentOptions(...)`` in ``bot.py``); several agents with the same
key in one file are paired in the order they are found. Each agent's capabilities are
compared as sets of stable labels (no line numbers), per aspect: tools, paths and mounts,
MCP servers, secrets, runners and their triggers, the model's fallbacks, the working
directory, the network. A value the map could not read is the label ``unknown``, so a
change from or to unknown shows, and is never counted as growth.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentguard.facts.capabilities import (
    BYPASS,
    LIVE,
    MAYBE,
    PRE_APPROVED,
    UNKNOWN,
    AgentCapability,
    CapabilityMap,
)
from agentguard.findings import JSONValue

ASPECTS = (
    "tools",
    "paths",
    "mcp_servers",
    "secrets",
    "runners",
    "triggers",
    "fallbacks",
    "workdir",
    "network",
)
_HOST_KINDS = ("bind", "hostPath")


@dataclass(frozen=True)
class AgentDelta:
    agent: str  # "claude-agent-sdk ClaudeAgentOptions(...) in bot.py"
    status: str  # "added" | "removed" | "changed"
    added: tuple[tuple[str, str], ...]  # (aspect, label)
    removed: tuple[tuple[str, str], ...]
    growth: tuple[tuple[str, str], ...]  # (growth kind, what)

    def to_json(self) -> dict[str, JSONValue]:
        changes: dict[str, JSONValue] = {}
        for aspect in ASPECTS:
            plus = [label for a, label in self.added if a == aspect]
            minus = [label for a, label in self.removed if a == aspect]
            if plus or minus:
                changes[aspect] = {"added": plus, "removed": minus}
        return {
            "agent": self.agent,
            "status": self.status,
            "changes": changes,
            "growth": [{"kind": k, "what": w} for k, w in self.growth],
        }


def _key(a: AgentCapability) -> tuple[str, str, str, str]:
    return (a.site.kind, a.site.engine, a.site.evidence.path, a.site.label)


def _name(a: AgentCapability) -> str:
    return f"{a.site.engine} {a.site.label} in {a.site.evidence.path}"


def _rw(writable: bool | None) -> str:
    return "read-write" if writable else "read-only" if writable is False else "rw unknown"


def _labels(a: AgentCapability) -> set[tuple[str, str]]:
    out: set[tuple[str, str]] = set()
    if not a.tools_known:
        out.add(("tools", UNKNOWN))
    for t in a.tools:
        if t.state in (LIVE, MAYBE, UNKNOWN):
            for tool in t.tools or (UNKNOWN,):
                out.add(("tools", f"{t.category}: {tool} ({t.state}, {t.approval})"))
    for p in a.paths:
        where = f"{p.source or '(anonymous)'} -> {p.target or UNKNOWN}"
        extra = f", {p.sensitive}" if p.sensitive else ""
        out.add(("paths", f"{p.kind} {where} ({_rw(p.writable)}{extra})"))
    for m in a.mcp:
        pinned = {True: "pinned", False: "unpinned", None: "pinned unknown"}[m.pinned]
        command = " ".join(m.command)
        out.add(
            ("mcp_servers", f"{m.name}: {m.launch}{' ' + command if command else ''} ({pinned})")
        )
    for s in a.secrets:
        out.add(("secrets", f"{s.name} via {s.via}"))
    for r in a.runners:
        out.add(("runners", f"{r.kind} {r.name}"))
        opened = set(r.open_triggers or ())
        for trig in r.triggers:
            note = " (anyone can cause it)" if trig in opened else ""
            out.add(("triggers", f"{r.name}: {trig}{note}"))
    for f in a.model.fallbacks:
        models = ", ".join(f.models) if f.models else "models not read"
        out.add(("fallbacks", f"{f.kind}: {models}"))
    w = a.workdir
    out.add(("workdir", f"{w.path or UNKNOWN} holds {w.host_source or w.holds_kind}"))
    out.add(("network", f"network {a.reach.network_mode or UNKNOWN}, web tools {a.reach.web}"))
    return out


def _shell(a: AgentCapability | None) -> set[str]:
    if a is None:
        return set()
    return {
        n for t in a.tools if t.category == "shell" and t.state in (LIVE, MAYBE) for n in t.tools
    }


def _approved(a: AgentCapability | None) -> set[str]:
    """The tool categories let through unasked (the map's approval is per category)."""
    if a is None:
        return set()
    return {
        t.category
        for t in a.tools
        if t.state in (LIVE, MAYBE) and t.approval in (PRE_APPROVED, BYPASS)
    }


def _growth(base: AgentCapability | None, head: AgentCapability) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    if base is None:
        out.append(("agent", _name(head)))
    out += [("shell-tool", f"{n} live") for n in sorted(_shell(head) - _shell(base))]
    fresh = sorted(_approved(head) - _approved(base))
    out += [("pre-approval", f"{c} tools run unasked") for c in fresh]
    old_mounts = {(p.kind, p.source, p.target) for p in (base.paths if base else ())}
    for p in head.paths:
        if p.kind in _HOST_KINDS and (p.kind, p.source, p.target) not in old_mounts:
            out.append(("host-mount", f"{p.source} -> {p.target} ({_rw(p.writable)})"))
    old_servers = {m.name: m.pinned for m in (base.mcp if base else ())}
    for m in head.mcp:
        if m.pinned is False and old_servers.get(m.name) is not False:
            out.append(("unpinned-server", f"{m.name}: {m.unpinned_why or 'not pinned'}"))
    old_secrets = {s.name for s in (base.secrets if base else ())}
    out += [("secret", s.name) for s in head.secrets if s.name not in old_secrets]
    old_open = {
        (r.name, t) for r in (base.runners if base else ()) for t in (r.open_triggers or ())
    }
    for r in head.runners:
        for t in r.open_triggers or ():
            if (r.name, t) not in old_open:
                out.append(("open-trigger", f"{r.name}: {t}"))
    old_fallbacks = {(f.kind, f.models) for f in (base.model.fallbacks if base else ())}
    for f in head.model.fallbacks:
        if (f.kind, f.models) not in old_fallbacks:
            out.append(("fallback", f"{f.kind}: {', '.join(f.models) or 'models not read'}"))
    return out


def _pairs(
    base: Sequence[AgentCapability], head: Sequence[AgentCapability]
) -> list[tuple[AgentCapability | None, AgentCapability | None]]:
    left: dict[tuple[str, str, str, str], list[AgentCapability]] = {}
    for a in base:
        left.setdefault(_key(a), []).append(a)
    out: list[tuple[AgentCapability | None, AgentCapability | None]] = []
    for a in head:
        old = left.get(_key(a))
        out.append((old.pop(0) if old else None, a))
    out += [(a, None) for group in left.values() for a in group]
    return out


def capability_delta(
    base: Sequence[CapabilityMap], head: Sequence[CapabilityMap]
) -> tuple[AgentDelta, ...]:
    """Per agent, what the change adds and removes (agents unchanged are left out)."""
    old = [a for m in base for a in m.agents]
    new = [a for m in head for a in m.agents]
    out = []
    for b, h in _pairs(old, new):
        before = _labels(b) if b else set()
        after = _labels(h) if h else set()
        if b is not None and h is not None and before == after:
            continue
        status = "added" if b is None else "removed" if h is None else "changed"
        growth = tuple(_growth(b, h)) if h is not None else ()
        agent = h if h is not None else b
        assert agent is not None
        out.append(
            AgentDelta(
                _name(agent),
                status,
                tuple(sorted(after - before)),
                tuple(sorted(before - after)),
                growth,
            )
        )
    return tuple(out)

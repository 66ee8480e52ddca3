"""The map entry of Claude Code as the project's own settings configure it: any ``claude``
started in the checkout (a contributor's session) loads the root's ``.claude/settings.json``
(and ``settings.local.json``) and offers the root's ``.mcp.json`` servers. Drawn once per
project when either file is at its root, like a Codex or Gemini configuration file.

Its tools are the built-in categories as the settings leave them: removed when ``deny``
names every tool of the category whole (``Bash``; ``Bash(rm:*)`` denies only the calls it
matches), pre-approved when ``allow`` names one (or ``defaultMode`` is ``acceptEdits``,
for the file tools), bypass under ``bypassPermissions``, else asked; medium confidence (a user's or managed settings, and the
command line, may change them). Facts in, records out; no I/O, no gatherer.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agentguard.engine.capability_tools import pinned_of
from agentguard.facts.agents import ClaudeSettings, McpServer, ProjectFacts
from agentguard.facts.builtin_tools import TOOL_CATEGORIES
from agentguard.facts.capabilities import (
    ASKED,
    BYPASS,
    CLI,
    LIVE,
    PRE_APPROVED,
    REMOVED,
    UNKNOWN,
    AgentCapability,
    AgentSite,
    Evidence,
    McpLink,
    ToolAccess,
)
from agentguard.findings import Confidence

ENGINE = "Claude Code"
NOTE = "project settings: every `claude` started in this checkout loads them"
SHOWN = 6  # `allow` entries named in a tools row (the rest counted)

# (site, tools, mcp) -> the entry, joined to the checkout
Draw = Callable[[AgentSite, tuple[ToolAccess, ...], tuple[McpLink, ...]], AgentCapability]


def _root(path: str) -> bool:
    return "/" not in path.removeprefix(".claude/")


def _whole(rules: tuple[str, ...] | None) -> set[str]:
    """The tools a permission list names whole: ``Bash``; ``Bash(rm:*)`` names only the
    calls that match it, so a deny of it leaves Bash live."""
    return {r.strip() for r in rules or () if "(" not in r}


def _category(
    name: str, tools: tuple[str, ...], settings: Sequence[ClaudeSettings], at: Evidence
) -> ToolAccess:
    deny = set().union(*(_whole(s.deny) for s in settings))
    allow = [r for s in settings for r in s.allow or () if r.split("(", 1)[0].strip() in tools]
    allow.sort(key=lambda r: "(" in r)  # (a whole tool first: never behind the cap)
    modes = {s.default_mode for s in settings if s.default_mode}
    ev = tuple(Evidence(s.path, s.line_of("permissions"), f"{s.scope} settings") for s in settings)
    ev = ev or (at,)
    if all(t in deny for t in tools):
        return ToolAccess(name, REMOVED, tools, UNKNOWN, ev, Confidence.MEDIUM,
                          how="`deny` names each of them")  # fmt: skip
    if "bypassPermissions" in modes:
        approval, how = BYPASS, "defaultMode = bypassPermissions"
    elif allow:
        more = f" and {len(allow) - SHOWN} more" if len(allow) > SHOWN else ""
        approval, how = PRE_APPROVED, f"`allow` lists {', '.join(allow[:SHOWN])}{more}"
    elif name == "file" and "acceptEdits" in modes:
        approval, how = PRE_APPROVED, "defaultMode = acceptEdits"
    else:
        approval, how = ASKED, "not pre-approved here: each call asks"
    live = tuple(t for t in tools if t not in deny)
    return ToolAccess(name, LIVE, live, approval, ev, Confidence.MEDIUM,
                      how=how + " (a user's settings or the command line may change it)")  # fmt: skip


def _mcp(servers: Sequence[McpServer]) -> tuple[McpLink, ...]:
    out = []
    for m in servers:
        pinned, why = pinned_of(m)
        argv = tuple(m.safe_argv()) if isinstance(m.command, str) else ()
        out.append(McpLink(m.name, m.transport, argv, pinned,
                           (Evidence(m.path, m.line, ".mcp.json"),), Confidence.MEDIUM,
                           how=".mcp.json at the project's root (Claude Code offers its servers)",
                           unpinned_why=why))  # fmt: skip
    return tuple(out)


def settings_agent(
    facts: ProjectFacts, draw: Draw, drawn: Sequence[AgentCapability]
) -> list[AgentCapability]:
    """One entry when the project's root holds Claude Code settings, or a ``.mcp.json``
    that no agent already drawn loads (an SDK agent that loads the project's settings
    is the one that file serves)."""
    if facts.workdir is not None:  # (an image's files: no checkout a contributor opens)
        return []
    settings = [s for s in facts.settings if s.scope in ("project", "local") and _root(s.path)]
    servers = [m for m in facts.mcp_servers if m.declared_in == ".mcp.json" and "/" not in m.path]
    if not settings and not servers:
        return []
    loaded = {(e.path, e.line) for a in drawn for m in a.mcp for e in m.evidence}
    if not settings and all((m.path, m.line) in loaded for m in servers):
        return []
    first = settings[0].path if settings else servers[0].path
    note = NOTE if settings else "project MCP servers: every `claude` started here offers them"
    site = AgentSite(CLI, ENGINE, note, Evidence(first, None, note))
    tools = tuple(_category(n, t, settings, site.evidence) for n, t in TOOL_CATEGORIES.items())
    return [draw(site, tools, _mcp(servers))]

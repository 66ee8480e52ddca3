"""The capability map's tools and MCP servers of one agent: the built-in tools of a Claude
configuration by category (AG301-AG303 read these rows), the tools another framework
grants, a Codex/Gemini configuration's shell, and the MCP servers it loads. Facts in,
records out; no I/O, no gatherer."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from agentguard.engine.capability_config import live_tools
from agentguard.facts.agents import AgentConfig, EnginePolicy, ProjectFacts, ToolGrant
from agentguard.facts.builtin_tools import TOOL_CATEGORIES
from agentguard.facts.capabilities import (
    ASKED,
    BYPASS,
    HOST_FOLDER,
    LIVE,
    MAYBE,
    PRE_APPROVED,
    PROJECT,
    REMOVED,
    UNKNOWN,
    Evidence,
    McpLink,
    ToolAccess,
    Workdir,
)
from agentguard.facts.values import Unknown, alternatives, describe
from agentguard.findings import Confidence

_LAUNCHERS = frozenset(
    {"npx", "bunx", "pnpm", "yarn", "npm", "bun", "uvx", "uv", "pipx", "docker", "podman"}
)


def _names(value: Any) -> set[str]:
    out: set[str] = set()
    for alt in alternatives(value):
        if isinstance(alt, str):
            out |= {v for v in alt.replace(",", " ").split() if v}
        elif isinstance(alt, tuple):
            out |= {v for v in alt if isinstance(v, str)}
    return out


def _approval(cfg: AgentConfig, tools: Iterable[str], category: str) -> tuple[str, str, int]:
    """How a call of one of ``tools`` is let through: (approval, how, line)."""
    mode = cfg.option("permission_mode")
    modes = alternatives(mode.value) if mode is not None else []
    if any(m == "bypassPermissions" for m in modes):
        return BYPASS, "permission_mode = bypassPermissions", mode.line if mode else cfg.line
    if any(isinstance(m, Unknown) for m in modes):
        return UNKNOWN, f"permission_mode is {describe(mode.value if mode else None)}", cfg.line
    allowed = cfg.option("allowed_tools")
    names = set(tools)
    if allowed is not None:
        listed = _names(allowed.value) & names
        if listed:
            return PRE_APPROVED, f"allowed_tools lists {', '.join(sorted(listed))}", allowed.line
    if category == "file" and any(m == "acceptEdits" for m in modes):
        return PRE_APPROVED, "permission_mode = acceptEdits", mode.line if mode else cfg.line
    gate = cfg.gate("can_use_tool")
    how = "not pre-approved: each call asks"
    if gate is not None:
        how += f" (can_use_tool {gate.verdict}: {gate.reason})"
    return ASKED, how, cfg.line


def config_tools(cfg: AgentConfig, facts: ProjectFacts) -> list[ToolAccess]:
    """The built-in tools of a Claude configuration, by category (AG301-AG303 read these
    rows: ``tools`` the certain names, or the maybe ones, ``reading`` why)."""
    live = live_tools(cfg)
    out = []
    for category, names in TOOL_CATEGORIES.items():
        certain = tuple(n for n in names if n in live.certain)
        maybe = tuple(n for n in names if n in live.maybe)
        state = LIVE if certain else MAYBE if maybe else REMOVED
        shown = certain or maybe or names
        approval, how, line = _approval(cfg, shown, category)
        conf = Confidence.LOW if cfg.ambiguous or state == MAYBE else Confidence.HIGH
        ev: tuple[Evidence, ...] = (Evidence(cfg.path, cfg.line, live.reason),)
        if line != cfg.line:
            ev += (Evidence(cfg.path, line, how),)
        out.append(
            ToolAccess(
                category,
                state,
                shown,
                approval if state != REMOVED else UNKNOWN,
                ev,
                conf,
                how=live.reason + "; " + how,
                reading=live.reason,
            )
        )
    return out


def grant_tools(grants: Sequence[ToolGrant]) -> list[ToolAccess]:
    return [
        ToolAccess(
            g.category,
            LIVE if g.certain else MAYBE,
            (g.tool,),
            ASKED if g.mitigated else PRE_APPROVED,
            (Evidence(g.path, g.line, g.detail),),
            Confidence.HIGH if g.certain else Confidence.LOW,
            how=(g.mitigated or "no approval step read")
            + ("; runs on the provider's side" if g.hosted else ""),
        )
        for g in grants
    ]


def policy_tools(policies: Sequence[EnginePolicy]) -> list[ToolAccess]:
    """The shell of a Codex/Gemini configuration and how its calls are let through."""
    out = []
    for p in policies:
        removed = p.shell_removed is not None and p.shell_removed.value is True
        approval_v = p.approval.value if p.approval is not None else None
        sandbox_v = p.sandbox.value if p.sandbox is not None else None
        if approval_v in ("never", "yolo") or (p.headless and approval_v is None):
            approval = (
                BYPASS if sandbox_v in ("danger-full-access", False, "false") else PRE_APPROVED
            )
        elif isinstance(approval_v, str):
            approval = ASKED
        else:
            approval = UNKNOWN
        line = p.approval.line if p.approval is not None else p.line
        out.append(
            ToolAccess(
                "shell",
                REMOVED if removed else LIVE,
                ("shell",),
                approval,
                (Evidence(p.path, line, p.label),),
                Confidence.MEDIUM,
                how=f"sandbox {describe(sandbox_v) if sandbox_v is not None else 'not set'}, "
                f"approval {describe(approval_v) if approval_v is not None else 'not set'}",
            )
        )
    return out


def pinned_of(server: Any) -> tuple[bool | None, str]:
    # (the launch readers' records, where a server is drawn: a project without one
    # imports neither them nor the MCP pin records)
    from agentguard.facts.launch_pins import unpinned_reason

    reason = unpinned_reason(server)
    if reason is not None:
        return (False if reason[3].value != "low" else None), reason[1]
    command = server.command
    if server.transport == "stdio" and isinstance(command, str):
        base = command.rsplit("/", 1)[-1]
        return (True, "") if base in _LAUNCHERS else (None, "a local command")
    return None, ""


def mcp_links(cfg: AgentConfig, facts: ProjectFacts, workdir: Workdir) -> list[McpLink]:
    """Servers in the configuration's ``mcp_servers``, and the project's ``.mcp.json``
    when the configuration loads project settings from a working directory that holds it."""
    out: list[McpLink] = []
    opt = cfg.option("mcp_servers")
    declared = {m.name: m for m in facts.mcp_servers if m.path == cfg.path}
    if opt is not None and isinstance(opt.value, dict):
        for name, value in opt.value.items():
            ev = (Evidence(cfg.path, opt.line, f"mcp_servers[{name!r}]"),)
            server = declared.get(str(name))
            if isinstance(value, Unknown) and "create_sdk_mcp_server" in value.reason:
                out.append(
                    McpLink(
                        str(name),
                        "in-process",
                        (),
                        None,
                        ev,
                        Confidence.HIGH,
                        how="an SDK server in this process",
                    )
                )
            elif server is not None:
                pinned, why = pinned_of(server)
                argv = tuple(server.safe_argv()) if isinstance(server.command, str) else ()
                out.append(
                    McpLink(
                        str(name),
                        server.transport,
                        argv,
                        pinned,
                        (*ev, Evidence(server.path, server.line, server.declared_in)),
                        Confidence.HIGH,
                        how="mcp_servers of this configuration",
                        unpinned_why=why,
                    )
                )
            else:
                out.append(
                    McpLink(
                        str(name),
                        UNKNOWN,
                        (),
                        None,
                        ev,
                        Confidence.MEDIUM,
                        how=f"mcp_servers of this configuration: {describe(value)}",
                    )
                )
    elif opt is not None:
        out.append(
            McpLink(
                "(unknown)",
                UNKNOWN,
                (),
                None,
                (Evidence(cfg.path, opt.line, "mcp_servers"),),
                Confidence.LOW,
                how=f"mcp_servers is {describe(opt.value)}",
            )
        )
    if cfg.engine.startswith("claude") and workdir.holds_kind in (PROJECT, HOST_FOLDER):
        sources = cfg.option("setting_sources")
        loads = sources is None or any(
            isinstance(a, Unknown) or (isinstance(a, tuple) and "project" in a)
            for a in alternatives(sources.value)
        )
        if loads:
            for m in facts.mcp_servers:
                if m.declared_in != ".mcp.json" or "/" in m.path:
                    continue
                pinned, why = pinned_of(m)
                out.append(
                    McpLink(
                        m.name,
                        m.transport,
                        tuple(m.safe_argv()) if isinstance(m.command, str) else (),
                        pinned,
                        (Evidence(m.path, m.line, ".mcp.json"), *workdir.evidence[:1]),
                        Confidence.MEDIUM,
                        how=".mcp.json in its working directory (project settings are loaded)",
                        unpinned_why=why,
                    )
                )
    return out

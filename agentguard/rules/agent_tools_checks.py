"""AG301-AG305: built-in tools and permissions of agent configurations (facts only, no I/O)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agentguard import escape
from agentguard.facts.agents import AgentConfig, ClaudeSettings
from agentguard.facts.values import Unknown, alternatives, describe, to_json
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.agent_mitigations import (
    ACCEPT_EDITS_APPROVES,
    approval_gates,
    firewall_credit,
    firewall_text,
    headless_sdk,
    headless_workflow,
    sandboxed,
)
from agentguard.rules.agent_tools import (
    BUILTIN_TOOLS,
    CATEGORY_RULES,
    AllowListWithoutRemoval,
)
from agentguard.rules.arbitrary_code import arbitrary_code


def _loc(cfg: AgentConfig, line: int | None = None) -> Location:
    return Location(path=cfg.path, line=line or cfg.line, note=cfg.label)


def _names(value: Any) -> tuple[set[str], bool]:
    """Tool names in a list value, and whether the list is complete (no unknown part)."""
    if isinstance(value, str):
        return {v for v in value.replace(",", " ").split() if v}, True
    if isinstance(value, tuple):
        names = {v for v in value if isinstance(v, str)}
        return names, not any(not isinstance(v, str) for v in value)
    return set(), False


def option_syntax(cfg: AgentConfig, name: str) -> str:
    """The option's name as written in this configuration's language."""
    if cfg.engine.endswith("(TypeScript)"):
        return {
            "tools": "tools",
            "allowed_tools": "allowedTools",
            "disallowed_tools": "disallowedTools",
            "permission_mode": "permissionMode",
            "setting_sources": "settingSources",
            "fallback_model": "fallbackModel",
            "can_use_tool": "canUseTool",
        }.get(name, name)
    if cfg.engine == "claude CLI":
        return {
            "tools": "--tools",
            "allowed_tools": "--allowedTools",
            "disallowed_tools": "--disallowedTools",
            "permission_mode": "--permission-mode",
            "setting_sources": "--setting-sources",
            "fallback_model": "--fallback-model",
        }.get(name, name)
    return name


def _list_snippet(cfg: AgentConfig, name: str, items: Sequence[str]) -> str:
    key = option_syntax(cfg, name)
    if cfg.engine == "claude CLI":
        return f'{key} "{" ".join(items)}"'
    quoted = ", ".join(f'"{i}"' for i in items)
    sep = ": " if cfg.engine.endswith("(TypeScript)") else "="
    return f"{key}{sep}[{quoted}]"


@dataclass(frozen=True)
class LiveTools:
    certain: frozenset[str]  # live on every reading of the configuration
    maybe: frozenset[str]  # live on some reading, or depending on a value not known
    reason: str


def live_tools(cfg: AgentConfig) -> LiveTools:
    """Which built-in tools exist under this configuration."""
    builtin = frozenset(BUILTIN_TOOLS)
    tools = cfg.option("tools")
    per_alt: list[frozenset[str]] = []
    maybe: set[str] = set()
    if tools is None:
        per_alt.append(builtin)
        reason = f"`{option_syntax(cfg, 'tools')}` is not set, so the whole built-in set is live"
    else:
        reason = f"`{option_syntax(cfg, 'tools')}` = {describe(tools.value)}"
        for alt in alternatives(tools.value):
            if alt is None or (isinstance(alt, dict) and alt.get("preset") == "claude_code"):
                per_alt.append(builtin)
            elif isinstance(alt, tuple | str):
                names, complete = _names(alt)
                if isinstance(alt, str) and alt.strip() == "default":
                    names = set(builtin)
                per_alt.append(frozenset(names & builtin))
                if not complete:
                    maybe |= builtin
            else:
                per_alt.append(frozenset())
                maybe |= builtin
    certain = frozenset.intersection(*per_alt) if per_alt else frozenset()
    maybe |= set().union(*per_alt) - certain
    disallowed = cfg.option("disallowed_tools")
    if disallowed is not None:
        removed_all: frozenset[str] | None = None
        removed_some: set[str] = set()
        unknown_removal = False
        for alt in alternatives(disallowed.value):
            names, complete = _names(alt) if alt is not None else (set(), True)
            unknown_removal |= not complete
            removed_some |= names
            removed_all = frozenset(names) if removed_all is None else removed_all & names
        removed_all = removed_all or frozenset()
        maybe = (maybe | (certain & (removed_some - removed_all))) - removed_all
        certain = certain - removed_some
        if unknown_removal:
            maybe |= certain
            certain = frozenset()
        reason += f"; `{option_syntax(cfg, 'disallowed_tools')}` = {describe(disallowed.value)}"
    return LiveTools(certain, frozenset(maybe - certain), reason)


def check_builtin_tools(cfg: AgentConfig) -> list[Finding]:
    """AG301/AG302/AG303: one finding per category of built-in tools left live."""
    live = live_tools(cfg)
    out: list[Finding] = []
    for category, (rule, members) in CATEGORY_RULES.items():
        sure = [t for t in members if t in live.certain]
        maybe = [t for t in members if t in live.maybe]
        if not sure and not maybe:
            continue
        names = sure or maybe
        confidence = Confidence.HIGH if sure else Confidence.LOW
        verb = "leaves" if sure else "may leave"
        message = (
            f"{cfg.engine} configuration {verb} the built-in {category} tools live: "
            f"{', '.join(names)} ({live.reason})."
        )
        if cfg.options.get("allowed_tools") is not None:  # written down, not merely unknown
            message += (
                f" `{option_syntax(cfg, 'allowed_tools')}` only pre-approves; it removes nothing."
            )
        severity = rule.default_severity
        evidence_extra: dict[str, JSONValue] = {}
        if category == "shell":
            message += _arbitrary_code(cfg, evidence_extra)
        sandbox = sandboxed(cfg) if category == "shell" else None
        if sandbox:
            # the Bash sandbox confines commands (files, network); the shell still exists
            severity = Severity.MEDIUM
            message += f" Commands run in the engine's sandbox ({sandbox})."
            evidence_extra["mitigated_by"] = [f"sandbox ({sandbox})"]
        else:
            not_gates: list[str] = []
            gates = approval_gates(cfg, names, not_gates)
            if category == "shell" and cfg.confined_by is not None:
                severity = firewall_credit(cfg.confined_by, severity, evidence_extra)
                message += firewall_text(cfg.confined_by)
            if gates:
                # each call is seen by code the project wrote before it runs: lower, and say so
                severity = min(severity, Severity.MEDIUM if category == "shell" else Severity.LOW)
                message += " Mitigated: " + "; ".join(gates) + "."
                evidence_extra["mitigated_by"] = gates
            elif not_gates:
                message += " Not mitigated: " + "; ".join(not_gates) + "."
                evidence_extra["not_mitigated_by"] = not_gates
        out.append(
            rule.finding(
                message,
                locations=[_loc(cfg)],
                fix=Fix(
                    (
                        "Pre-approve only commands whose arguments cannot start other code "
                        "(`Bash(git diff:*)`, `Bash(uv run ruff:*)`), not an interpreter, a "
                        "runner or a wildcard, and give the agent no secret its task does "
                        "not need. "
                        if "arbitrary_code" in evidence_extra
                        else ""
                    )
                    + f"Remove them: list only the tools the agent needs in "
                    f"`{option_syntax(cfg, 'tools')}`, or add these to "
                    f"`{option_syntax(cfg, 'disallowed_tools')}`.",
                    snippet=escape.snippet(_list_snippet(cfg, "disallowed_tools", names)),
                ),
                evidence={
                    "engine": cfg.engine,
                    "category": category,
                    "tools": names,
                    "reason": live.reason,
                    "ambiguity": cfg.ambiguity,
                    **evidence_extra,
                },
                severity=severity,
                confidence=confidence,
                ambiguous=cfg.ambiguous,
            )
        )
    return out


def _arbitrary_code(cfg: AgentConfig, evidence: dict[str, JSONValue]) -> str:
    """What the allow-list pre-approves that runs code of the model's choosing, and the
    secrets that code can read from its environment (claude-code-action's `claude_env`)."""
    allowed = cfg.options.get("allowed_tools")
    entries = allowed.value if allowed is not None and isinstance(allowed.value, tuple) else ()
    found = [(e, why) for e in entries if isinstance(e, str) for why in [arbitrary_code(e)] if why]
    if not found:
        return ""
    evidence["arbitrary_code"] = [e for e, _ in found]
    shown = "; ".join(f"`{e}`: {why}" for e, why in found[:4])
    more = f"; and {len(found) - 4} more" if len(found) > 4 else ""
    text = f" Pre-approved without a prompt, these run any code: {shown}{more}."
    secrets = cfg.options.get("env_secrets")
    if secrets is not None and isinstance(secrets.value, tuple) and secrets.value:
        names = [str(n) for n in secrets.value]
        evidence["secrets_in_env"] = names
        text += (
            f" That code runs with {len(names)} secrets in its environment "
            f"({', '.join(names)}, from `claude_env`)."
        )
    return text


def _empty(value: Any) -> bool:
    return value is None or value == () or value == ""


def check_allow_list(cfg: AgentConfig) -> list[Finding]:
    """AG304 for a configuration with an allow-list and no removal."""
    allowed = cfg.option("allowed_tools")
    if allowed is None or cfg.option("tools") is not None:
        return []
    disallowed = cfg.option("disallowed_tools")
    if disallowed is not None and not all(_empty(v) for v in alternatives(disallowed.value)):
        return []
    if all(_empty(v) for v in alternatives(allowed.value)):
        return []
    names, complete = (
        _names(allowed.value)
        if not isinstance(allowed.value, Unknown)
        else (
            set(),
            False,
        )
    )
    # the built-in tools the allow-list names, in its order ("Bash(npm test)" names Bash);
    # MCP tools (mcp__server__tool) come from mcp_servers, not from `tools`
    written = allowed.value if isinstance(allowed.value, tuple) else ()
    bases = [n.split("(", 1)[0] for n in written if isinstance(n, str)]
    listed = [t for t in dict.fromkeys(bases) if t in BUILTIN_TOOLS]
    others = [t for t in BUILTIN_TOOLS if t not in names]
    # in `acceptEdits` the mode itself approves the edit tools among the others
    by_mode = [t for t in others if t in ACCEPT_EDITS_APPROVES]
    headless = headless_workflow(cfg, [t for t in others if t not in by_mode])
    if headless and by_mode and headless_workflow(cfg, by_mode):
        by_mode = []  # the default mode: the mode approves none of them
    sdk = not headless and headless_sdk(cfg)
    return [
        AllowListWithoutRemoval.finding(
            f"`{option_syntax(cfg, 'allowed_tools')}` = {describe(allowed.value)} only pre-approves "
            f"these tools; with `{option_syntax(cfg, 'tools')}` unset and nothing in "
            f"`{option_syntax(cfg, 'disallowed_tools')}`, every other built-in tool is still live "
            f"({', '.join(others[:8])}{', ...' if len(others) > 8 else ''})."
            + (
                " In a workflow run nobody answers a permission prompt, so a call of the "
                "others is denied"
                + (
                    f", but `--permission-mode acceptEdits` approves {', '.join(by_mode)} "
                    "without one"
                    if by_mode
                    else ""
                )
                + "; `--tools` would say so in the file."
                if headless
                else f" With no `{option_syntax(cfg, 'can_use_tool')}`, the default permission "
                f"mode and `{option_syntax(cfg, 'setting_sources')}` empty, nobody answers a "
                "permission prompt and no settings file pre-approves, so a call of the others "
                f"is denied; `{option_syntax(cfg, 'tools')}` would say so in the code."
                if sdk
                else ""
            ),
            severity=(Severity.MEDIUM if by_mode else Severity.LOW)
            if headless
            else Severity.LOW
            if sdk
            else None,
            locations=[_loc(cfg, allowed.line)],
            fix=Fix(
                f"Make the allow-list the set of tools that exist: pass the same names in "
                f"`{option_syntax(cfg, 'tools')}`.",
                snippet=escape.snippet(_list_snippet(cfg, "tools", listed)),
            ),
            evidence={
                "engine": cfg.engine,
                "allowed_tools": to_json(allowed.value),
                "still_live": others,
                "ambiguity": cfg.ambiguity,
            },
            confidence=Confidence.HIGH if complete else Confidence.MEDIUM,
            ambiguous=cfg.ambiguous,
        )
    ]


def check_settings_allow(settings: ClaudeSettings) -> list[Finding]:
    """AG304 for a Claude Code settings file with ``allow`` entries and no ``deny``."""
    if not settings.allow or settings.deny:
        return []
    return [
        AllowListWithoutRemoval.finding(
            f"{settings.scope} settings allow {', '.join(settings.allow)} without asking and "
            "deny nothing: every other built-in tool (Bash, Write, WebFetch, ...) is still live "
            "(in a session they still ask first; a headless run with bypass does not).",
            # the other tools still ask in a session (a settings file is not a tool list)
            severity=Severity.MEDIUM,
            locations=[Location(path=settings.path, line=settings.line_of("permissions.allow"))],
            fix=Fix(
                "Add `permissions.deny` for the tools the agent must never use, and run the "
                "engine with `--tools` listing the tools it needs.",
                snippet='"deny": ["Bash", "WebFetch", "WebSearch"]',
            ),
            evidence={"scope": settings.scope, "allow": list(settings.allow)},
        )
    ]

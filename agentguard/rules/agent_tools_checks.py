"""AG301-AG305: built-in tools and permissions of agent configurations (facts only, no I/O).

Which built-in tools exist under a configuration is read from the capability model
(``ToolAccess`` rows, :mod:`agentguard.engine.capability_config` makes them), not worked
out again here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentguard import escape
from agentguard.facts.agents import AgentConfig, ClaudeSettings
from agentguard.facts.builtin_tools import (
    BUILTIN_TOOLS,
    TOOL_CATEGORIES,
    listed_names,
    option_syntax,
)
from agentguard.facts.capabilities import LIVE, MAYBE, REMOVED, ToolAccess
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
from agentguard.rules.agent_tools import CATEGORY_RULES, AllowListWithoutRemoval
from agentguard.rules.arbitrary_code import arbitrary_code


def _loc(cfg: AgentConfig, line: int | None = None) -> Location:
    return Location(path=cfg.path, line=line or cfg.line, note=cfg.label)


def _list_snippet(cfg: AgentConfig, name: str, items: Sequence[str]) -> str:
    key = option_syntax(cfg, name)
    if cfg.engine == "claude CLI":
        return f'{key} "{" ".join(items)}"'
    quoted = ", ".join(f'"{i}"' for i in items)
    sep = ": " if cfg.engine.endswith("(TypeScript)") else "="
    return f"{key}{sep}[{quoted}]"


def _tool_rows(tools: Sequence[ToolAccess], category: str) -> tuple[list[str], list[str], str]:
    """(certain, maybe, why) for one category, from the model's row of the configuration.
    A row the model lacks or could not read is every tool of the category, maybe live."""
    members = TOOL_CATEGORIES[category]
    row = next((t for t in tools if t.category == category), None)
    if row is None or row.state not in (LIVE, MAYBE, REMOVED):
        return [], list(members), "which built-in tools exist could not be read"
    if row.state == REMOVED:
        return [], [], row.reading
    return (
        (list(row.tools), [], row.reading)
        if row.state == LIVE
        else ([], list(row.tools), row.reading)
    )


def check_builtin_tools(cfg: AgentConfig, tools: Sequence[ToolAccess]) -> list[Finding]:
    """AG301/AG302/AG303: one finding per category of built-in tools left live.

    ``tools``: the configuration's rows in the capability model (which built-in tools
    exist under it is worked out there, once)."""
    out: list[Finding] = []
    for category, (rule, _members) in CATEGORY_RULES.items():
        sure, maybe, reason = _tool_rows(tools, category)
        if not sure and not maybe:
            continue
        names = sure or maybe
        confidence = Confidence.HIGH if sure else Confidence.LOW
        verb = "leaves" if sure else "may leave"
        message = (
            f"{cfg.engine} configuration {verb} the built-in {category} tools live: "
            f"{', '.join(names)} ({reason})."
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
                    "reason": reason,
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
        listed_names(allowed.value)
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

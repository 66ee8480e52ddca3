"""AG301-AG305: built-in tools and permissions of agent configurations (facts only, no I/O)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.inspect.project.model import (
    AgentConfig,
    ClaudeSettings,
    ProjectFacts,
    ToolGrant,
    Unknown,
    alternatives,
    describe,
    to_json,
)
from agentguard.rules.agent_tools import (
    BUILTIN_TOOLS,
    CATEGORY_RULES,
    AllowListWithoutRemoval,
    PermissionChecksBypassed,
)


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
        if category == "shell" and _sandboxed(cfg):
            # the Bash sandbox confines commands (files, network); the shell still exists
            severity = Severity.MEDIUM
            message += f" Commands run in the engine's sandbox ({_sandboxed(cfg)})."
            evidence_extra["mitigated_by"] = [f"sandbox ({_sandboxed(cfg)})"]
        else:
            gates = approval_gates(cfg, names)
            if gates:
                # each call is seen by code the project wrote before it runs: lower, and say so
                severity = min(severity, Severity.MEDIUM if category == "shell" else Severity.LOW)
                message += " Mitigated: " + "; ".join(gates) + "."
                evidence_extra["mitigated_by"] = gates
        out.append(
            rule.finding(
                message,
                locations=[_loc(cfg)],
                fix=Fix(
                    f"Remove them: list only the tools the agent needs in "
                    f"`{option_syntax(cfg, 'tools')}`, or add these to "
                    f"`{option_syntax(cfg, 'disallowed_tools')}`.",
                    snippet=_list_snippet(cfg, "disallowed_tools", names),
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


def _sandboxed(cfg: AgentConfig) -> str | None:
    """Where the sandbox is enabled on every reading (`sandbox=`, or the `sandbox` key of
    the settings passed with `settings=`); None when it is not, or not known to be."""
    opt = cfg.options.get("sandbox")
    if opt is not None:
        alts = alternatives(opt.value)
        if all(isinstance(a, dict) and a.get("enabled") is True for a in alts):
            return "`sandbox.enabled`"
        return None
    settings = cfg.options.get("settings")
    if settings is None:
        return None
    for alt in alternatives(settings.value):
        data: Any = alt
        if isinstance(alt, str):
            import json

            try:
                data = json.loads(alt)
            except ValueError:
                return None  # a path to a settings file: not read here
        sandbox = data.get("sandbox") if isinstance(data, dict) else None
        if not (isinstance(sandbox, dict) and sandbox.get("enabled") is True):
            return None
    return "`sandbox.enabled` in `settings=`"


def _matcher(hook: Any) -> str | None:
    """The `matcher` of a HookMatcher(...) as written (None: matches every tool)."""
    import re

    expr = hook.expr if isinstance(hook, Unknown) else ""
    m = re.search(r"matcher\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", expr)
    if m is None:
        return "?" if expr else None
    return m.group(1) if m.group(1) is not None else m.group(2)


def approval_gates(cfg: AgentConfig, tools: Sequence[str]) -> list[str]:
    """What sees a call of these tools before it runs: a `can_use_tool` callback (for tools
    not pre-approved) or a PreToolUse hook whose matcher covers them."""
    gates: list[str] = []
    allowed, _ = (
        _names(cfg.options["allowed_tools"].value)
        if "allowed_tools" in cfg.options
        else (
            set(),
            True,
        )
    )
    bases = {n.split("(", 1)[0] for n in allowed}
    callback = cfg.options.get("can_use_tool") or cfg.options.get("canUseTool")
    if callback is not None and callback.value is not None and not bases & set(tools):
        gates.append(f"`{option_syntax(cfg, 'can_use_tool')}` decides each call")
    hooks = cfg.options.get("hooks")
    if hooks is not None and isinstance(hooks.value, dict):
        for matcher in hooks.value.get("PreToolUse") or ():
            pattern = _matcher(matcher)
            if pattern in (None, "", "*") or (
                pattern != "?" and any(t in pattern.split("|") for t in tools)
            ):
                gates.append(
                    f"a PreToolUse hook (matcher {pattern or 'any tool'!s}) sees each call"
                )
                break
    return gates


_GRANT_FIX = {
    "smolagents": 'Use a remote executor: `CodeAgent(..., executor_type="docker")` '
    "(or e2b, modal, wasm) instead of the local one.",
    "autogen": "Use `DockerCommandLineCodeExecutor` (a throwaway container without the "
    "project or credentials) instead of the local executor.",
    "crewai": 'Use `code_execution_mode="safe"` (Docker) instead of "unsafe".',
}
_CATEGORY_FIX = {
    "shell": "Remove the tool, or give it an executor that runs commands in a disposable "
    "container without the project or credentials.",
    "file": "Give the tool a dedicated scratch folder (`root_dir=`), not the project, or "
    "remove it.",
    "web": "Remove the tool, or restrict it to an allow-list of hosts.",
}


def check_grants(grants: Iterable[ToolGrant]) -> list[Finding]:
    """AG301/AG302/AG303 for tools handed over by other agent frameworks."""
    out: list[Finding] = []
    for g in grants:
        rule = CATEGORY_RULES[g.category][0]
        message = f"{g.framework} {g.tool}: {g.detail}."
        evidence: dict[str, JSONValue] = {
            "framework": g.framework,
            "tool": g.tool,
            "category": g.category,
        }
        severity = None
        if g.mitigated:
            # an approval step or the provider's sandbox confines it: graded lower, said so
            severity = min(rule.default_severity, Severity.LOW if g.hosted else Severity.MEDIUM)
            message += f" Mitigated: {g.mitigated}."
            evidence["mitigated_by"] = g.mitigated
        out.append(
            rule.finding(
                message,
                locations=[Location(path=g.path, line=g.line, note=g.framework)],
                fix=_GRANT_FIX.get(g.framework, _CATEGORY_FIX[g.category]),
                evidence=evidence,
                severity=severity,
                confidence=Confidence.HIGH if g.certain else Confidence.LOW,
            )
        )
    return out


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
    return [
        AllowListWithoutRemoval.finding(
            f"`{option_syntax(cfg, 'allowed_tools')}` = {describe(allowed.value)} only pre-approves "
            f"these tools; with `{option_syntax(cfg, 'tools')}` unset and nothing in "
            f"`{option_syntax(cfg, 'disallowed_tools')}`, every other built-in tool is still live "
            f"({', '.join(others[:8])}{', ...' if len(others) > 8 else ''}).",
            locations=[_loc(cfg, allowed.line)],
            fix=Fix(
                f"Make the allow-list the set of tools that exist: pass the same names in "
                f"`{option_syntax(cfg, 'tools')}`.",
                snippet=_list_snippet(cfg, "tools", listed),
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


def _bypass_readings(cfg: AgentConfig) -> tuple[list[str], bool, int, bool]:
    """(reasons, certain, line, literal: some reading sets bypass as written)."""
    reasons: list[str] = []
    certain = True
    literal = False
    line = cfg.line
    mode = cfg.option("permission_mode")
    if mode is not None:
        alts = alternatives(mode.value)
        hits = [a for a in alts if a == "bypassPermissions"]
        unknown = [a for a in alts if isinstance(a, Unknown)]
        if hits or unknown:
            reasons.append(f"`{option_syntax(cfg, 'permission_mode')}` = {describe(mode.value)}")
            certain = bool(hits) and len(hits) == len(alts)
            literal |= bool(hits)
            line = mode.line
    allow = cfg.option("allow_dangerously_skip_permissions")
    if allow is not None and any(
        a is True or isinstance(a, Unknown) for a in alternatives(allow.value)
    ):
        literal |= any(a is True for a in alternatives(allow.value))
        reasons.append(
            "`allowDangerouslySkipPermissions` = " + describe(allow.value)
            if cfg.engine != "claude CLI"
            else "`--allow-dangerously-skip-permissions`"
        )
        line = allow.line if not reasons[:-1] else line
    if (
        cfg.engine == "claude CLI"
        and mode is not None
        and mode.expr == "--dangerously-skip-permissions"
    ):
        reasons[0] = "`--dangerously-skip-permissions`"
    return reasons, certain, line, literal


def _combined(facts: ProjectFacts, cfg_cwd_is_project: bool) -> list[str]:
    out: list[str] = []
    if facts.runs_as_root:
        out.append("the container runs as root (AG401)")
    if facts.project_mounted:
        out.append("the project is mounted or copied into the agent's container")
    if cfg_cwd_is_project:
        out.append("the agent's working directory is the project (AG210)")
    return out


def check_bypass(cfg: AgentConfig, facts: ProjectFacts, *, cwd_is_project: bool) -> list[Finding]:
    """AG305 for a configuration that bypasses permission checks."""
    reasons, certain, line, literal = _bypass_readings(cfg)
    if not reasons:
        return []
    verb = (
        "bypasses permission checks"
        if certain
        else "bypasses permission checks on some branch"
        if literal
        else "may bypass permission checks (the value could not be determined)"
    )
    confidence = Confidence.HIGH if certain else Confidence.MEDIUM if literal else Confidence.LOW
    return [
        _bypass_finding(
            f"{cfg.engine} configuration {verb}: {'; '.join(reasons)}.",
            Location(path=cfg.path, line=line, note=cfg.label),
            facts,
            cwd_is_project=cwd_is_project,
            confidence=confidence,
            ambiguous=cfg.ambiguous,
            evidence={"engine": cfg.engine, "settings": reasons, "ambiguity": cfg.ambiguity},
        )
    ]


def check_settings_bypass(settings: ClaudeSettings, facts: ProjectFacts) -> list[Finding]:
    if settings.default_mode != "bypassPermissions":
        return []
    return [
        _bypass_finding(
            f'{settings.scope} settings set "defaultMode": "bypassPermissions".',
            Location(path=settings.path, line=settings.line_of("permissions.defaultMode")),
            facts,
            cwd_is_project=False,
            confidence=Confidence.HIGH,
            ambiguous=False,
            evidence={"scope": settings.scope, "defaultMode": settings.default_mode},
        )
    ]


def _bypass_finding(
    message: str,
    location: Location,
    facts: ProjectFacts,
    *,
    cwd_is_project: bool,
    confidence: Confidence,
    ambiguous: bool,
    evidence: dict[str, JSONValue],
) -> Finding:
    combined = _combined(facts, cwd_is_project)
    severity = PermissionChecksBypassed.default_severity
    if combined:
        severity = Severity.CRITICAL
        message += " Worse here: " + "; ".join(combined) + "."
    managed = [
        s.path for s in facts.settings if s.scope == "managed" and s.disable_bypass == "disable"
    ]
    if managed:
        severity = Severity.LOW
        message += f" Mitigated: managed settings at {managed[0]} disable bypass mode."
    return PermissionChecksBypassed.finding(
        message,
        locations=[location],
        fix=Fix(
            "Keep the default permission mode; list the tools the task needs (`tools=` / "
            "`--tools`) and pre-approve only those with `allowed_tools`.",
        ),
        evidence={**evidence, "combined_with": combined, "mitigated_by": managed},
        severity=severity,
        confidence=confidence,
        ambiguous=ambiguous,
    )

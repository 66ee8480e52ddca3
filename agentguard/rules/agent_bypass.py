"""AG305: configurations and settings that bypass permission checks (facts only)."""

from __future__ import annotations

from agentguard.facts.agents import AgentConfig, ClaudeSettings, ProjectFacts
from agentguard.facts.builtin_tools import option_syntax
from agentguard.facts.values import Unknown, alternatives, describe
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.agent_tools import PermissionChecksBypassed


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

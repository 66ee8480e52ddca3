"""AG306 (sandbox escape hatches in Claude settings) and the settings side of AG301 (the
shell pre-approved in `permissions.allow`) and AG305 (the bypass-mode warning skipped).
Facts only (no I/O)."""

from __future__ import annotations

from agentguard.facts.agents import ClaudeSettings
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.agent_tools import BuiltinShellTools, PermissionChecksBypassed
from agentguard.rules.base import Rule, register


@register
class SandboxEscapeHatch(Rule):
    """Claude settings let commands out of the Bash sandbox.

    ## What it does
    Reports, in a Claude Code settings file: `sandbox.excludedCommands` entries that are
    prefix rules (`docker:*`), `sandbox.allowUnsandboxedCommands`, and
    `dangerouslyDisableSandbox`.

    ## Why is this bad?
    The sandbox is what confines the agent's shell (files, network). A prefix rule runs
    every command that starts with it outside the sandbox, whatever follows; allowing
    unsandboxed commands lets the model ask to leave it; disabling it removes it. The
    sandbox still reads as enabled.

    ## Example
    ```json
    {"sandbox": {"enabled": true, "excludedCommands": ["docker:*"],
                 "allowUnsandboxedCommands": true}}
    ```

    ## Use instead
    Keep the sandbox whole: list exact commands that must run outside it (or none), and
    set `allowUnsandboxedCommands` to false:
    ```json
    {"sandbox": {"enabled": true, "allowUnsandboxedCommands": false}}
    ```
    """

    id = "AG306"
    name = "sandbox-escape-hatch"
    title = "Sandbox escape hatch in Claude settings"
    default_severity = Severity.MEDIUM
    family = "agent_sandbox"


_HATCH = {
    "sandbox.allowUnsandboxedCommands": (
        "lets the model ask to run a command outside the sandbox",
        Severity.MEDIUM,
    ),
    "sandbox.dangerouslyDisableSandbox": ("turns the sandbox off", Severity.HIGH),
    "dangerouslyDisableSandbox": ("turns the sandbox off", Severity.HIGH),
}


def check_sandbox_hatches(settings: ClaudeSettings) -> list[Finding]:
    out: list[Finding] = []
    for key, value, line in settings.hatches:
        if key == "skipDangerousModePermissionPrompt":
            continue
        if key.startswith("sandbox.excludedCommands"):
            what, severity = (
                f"runs every command that starts with `{value[:-2]}` outside the sandbox, "
                "whatever follows",
                Severity.MEDIUM,
            )
        else:
            what, severity = _HATCH.get(key, ("weakens the sandbox", Severity.MEDIUM))
        out.append(
            SandboxEscapeHatch.finding(
                f"{settings.scope} settings: `{key}` = {value} {what}.",
                locations=[Location(path=settings.path, line=line)],
                fix=Fix(
                    "Keep commands inside the sandbox: list exact commands (not prefixes) in "
                    "`excludedCommands`, or none, and set `allowUnsandboxedCommands` to false.",
                    snippet='"sandbox": {"enabled": true, "allowUnsandboxedCommands": false}',
                ),
                evidence={"scope": settings.scope, "key": key, "value": value},
                severity=severity,
            )
        )
    return out


def _unrestricted(entry: str) -> bool:
    return entry in ("Bash", "Bash(*)", "Bash(:*)", "Bash(*:*)")


def check_settings_shell(settings: ClaudeSettings) -> list[Finding]:
    """AG301: `permissions.allow` pre-approves the shell (`Bash`, `Bash(git push:*)`)."""
    shell = [a for a in settings.allow or () if a == "Bash" or a.startswith("Bash(")]
    if not shell:
        return []
    wide = [a for a in shell if _unrestricted(a)]
    severity = Severity.HIGH if wide else Severity.MEDIUM
    message = (
        f"{settings.scope} settings pre-approve the shell in `permissions.allow`: "
        f"{', '.join(shell)}: "
        + (
            "any command runs without asking."
            if wide
            else "commands that match run without asking (a prefix rule matches whatever "
            "follows it)."
        )
    )
    sandboxed = settings.sandbox_enabled is True and not any(
        k.startswith(("sandbox.", "dangerouslyDisableSandbox")) for k, _, _ in settings.hatches
    )
    if sandboxed:
        severity = min(severity, Severity.MEDIUM)
        message += " Commands run in the engine's sandbox (`sandbox.enabled`)."
    return [
        BuiltinShellTools.finding(
            message,
            locations=[Location(path=settings.path, line=settings.line_of("permissions.allow"))],
            fix=Fix(
                "Pre-approve exact commands only (`Bash(npm test)`), and leave the rest to ask "
                "or `deny`.",
                snippet='"allow": ["Bash(npm test)"]',
            ),
            evidence={"scope": settings.scope, "allow": shell, "sandboxed": sandboxed},
            severity=severity,
        )
    ]


def check_skip_bypass_prompt(settings: ClaudeSettings) -> list[Finding]:
    """AG305: `skipDangerousModePermissionPrompt` starts bypass mode without its warning."""
    return [
        PermissionChecksBypassed.finding(
            f"{settings.scope} settings set `skipDangerousModePermissionPrompt`: bypass mode "
            "(`--dangerously-skip-permissions`) starts without the warning that asks to "
            "confirm it.",
            locations=[Location(path=settings.path, line=line)],
            fix=Fix(
                "Remove `skipDangerousModePermissionPrompt`; keep the default permission mode."
            ),
            evidence={"scope": settings.scope, "key": key},
            severity=Severity.MEDIUM,
        )
        for key, _, line in settings.hatches
        if key == "skipDangerousModePermissionPrompt"
    ]

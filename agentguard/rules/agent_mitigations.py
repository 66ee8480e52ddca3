"""What confines a configuration's tools: the engine's sandbox (`sandbox=`, or the
`sandbox` key of `settings=`), a `can_use_tool` callback, a PreToolUse hook, the container
of a wrapper with a network allow-list (gh-aw's awf). Facts only.

A callback or a hook is judged by what its code does (read by the gatherers into
:attr:`AgentConfig.gates`): only one with a path that denies is a mitigation; a rubber
stamp is none, and one whose code was not read is unknown and never credited."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from agentguard.facts.agents import (
    CAN_DENY,
    NEVER_DENIES,
    AgentConfig,
    FirewallContainer,
    GateVerdict,
)
from agentguard.facts.values import Unknown, alternatives
from agentguard.findings import JSONValue, Severity
from agentguard.rules.arbitrary_code import unrestricted


def _names(value: Any) -> set[str]:
    if isinstance(value, str):
        return {v for v in value.replace(",", " ").split() if v}
    if isinstance(value, tuple):
        return {v for v in value if isinstance(v, str)}
    return set()


def sandboxed(cfg: AgentConfig) -> str | None:
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
    expr = hook.expr if isinstance(hook, Unknown) else ""
    m = re.search(r"matcher\s*=\s*(?:'([^']*)'|\"([^\"]*)\"|None)", expr)
    if m is None:
        return "?" if expr else None
    return m.group(1) if m.group(1) is not None else m.group(2)


def approval_gates(
    cfg: AgentConfig, tools: Sequence[str], not_gates: list[str] | None = None
) -> list[str]:
    """What sees a call of these tools before it runs and can refuse it: a `can_use_tool`
    callback (for tools not pre-approved) or a PreToolUse hook whose matcher covers them,
    each only when its code can deny (:class:`GateVerdict`). One that always allows, or
    whose code was not read, is no gate: said in ``not_gates`` (when given), as what it is
    (a rubber stamp, or unknown), never credited."""
    gates: list[str] = []
    passed: list[str] = [] if not_gates is None else not_gates
    allowed = (
        _names(cfg.options["allowed_tools"].value) if "allowed_tools" in cfg.options else set()
    )
    bases = {n.split("(", 1)[0] for n in allowed}
    callback = cfg.options.get("can_use_tool") or cfg.options.get("canUseTool")
    if callback is not None and callback.value is not None and not bases & set(tools):
        name = "canUseTool" if cfg.engine.endswith("(TypeScript)") else "can_use_tool"
        verdict = cfg.gate("can_use_tool")
        if verdict is not None and verdict.verdict == CAN_DENY:
            gates.append(f"`{name}` decides each call ({verdict.reason})")
        else:
            passed.append(_not_a_gate(f"`{name}`", verdict))
    run = (
        "a workflow run"
        if headless_workflow(cfg, tools)
        else f"an SDK run with no `{_option(cfg, 'can_use_tool')}` and "
        f"`{_option(cfg, 'setting_sources')}` empty (no settings file can pre-approve)"
        if headless_sdk(cfg)
        else None
    )
    if run is not None:
        approved = sorted(n for n in allowed if n.split("(", 1)[0] in tools)
        if not approved:
            gates.append(
                f"{run}: nobody answers a permission prompt, so a call that is not "
                "pre-approved is denied"
            )
        elif not any(unrestricted(n) for n in approved):
            gates.append(
                f"{run}: only calls matching {', '.join(approved)} are pre-approved, "
                "and nobody answers a permission prompt for any other"
            )
    hooks = cfg.options.get("hooks")
    if hooks is not None and isinstance(hooks.value, dict):
        for i, matcher in enumerate(hooks.value.get("PreToolUse") or ()):
            pattern = _matcher(matcher)
            if pattern in (None, "", "*") or (
                pattern != "?" and any(t in pattern.split("|") for t in tools)
            ):
                hook = f"a PreToolUse hook (matcher {pattern or 'any tool'!s})"
                verdict = cfg.gate(f"PreToolUse[{i}]")
                if verdict is not None and verdict.verdict == CAN_DENY:
                    gates.append(f"{hook} sees each call ({verdict.reason})")
                    break
                passed.append(_not_a_gate(hook, verdict))
    return gates


def ci_file(path: str) -> bool:
    """A GitHub workflow, or an action's ``action.yml`` (the root one, or a local composite
    action under ``.github/actions/``): what it runs runs in CI, with nobody at a prompt."""
    norm = "/" + path.removeprefix("./")
    if "/.github/workflows/" in norm:
        return True
    name = norm.rsplit("/", 1)[-1]
    return name in ("action.yml", "action.yaml") and (
        norm.count("/") == 1 or "/.github/actions/" in norm
    )


def _not_a_gate(what: str, verdict: GateVerdict | None) -> str:
    if verdict is not None and verdict.verdict == NEVER_DENIES:
        return f"{what} never denies a call ({verdict.reason}): a rubber stamp, not a gate"
    why = verdict.reason if verdict is not None else "its code was not read"
    return f"whether {what} can deny a call is unknown ({why}): not counted as a gate"


# what `acceptEdits` approves without a prompt: file edits, and filesystem commands
# (mkdir, touch, rm, mv, cp, sed) through Bash; every other tool still asks
ACCEPT_EDITS_APPROVES = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "Bash"})


def headless_workflow(cfg: AgentConfig, tools: Sequence[str] | None = None) -> bool:
    """A claude command line in a GitHub workflow or action (claude-code-action, `claude -p`)
    in the default permission mode: no one is there to approve a tool call. In
    `acceptEdits` the same holds for ``tools`` that mode does not approve itself (none of
    :data:`ACCEPT_EDITS_APPROVES`); without ``tools`` that mode is not headless."""
    if cfg.engine != "claude CLI" or not ci_file(cfg.path):
        return False
    mode = cfg.option("permission_mode")
    if mode is None:
        return True
    modes = set(alternatives(mode.value))
    if modes <= {"default", "plan"}:
        return True
    return (
        modes <= {"default", "plan", "acceptEdits"}
        and tools is not None
        and not ACCEPT_EDITS_APPROVES & set(tools)
    )


_CAMEL = {
    "can_use_tool": "canUseTool",
    "setting_sources": "settingSources",
    "permission_mode": "permissionMode",
    "permission_prompt_tool_name": "permissionPromptToolName",
}


def _option(cfg: AgentConfig, name: str) -> str:
    return _CAMEL.get(name, name) if cfg.engine.endswith("(TypeScript)") else name


def headless_sdk(cfg: AgentConfig) -> bool:
    """Agent SDK options (Python or TypeScript) in the default permission mode, with no
    ``can_use_tool`` callback, no hooks, no permission-prompt tool and ``setting_sources``
    written out empty: a call that is not pre-approved by ``allowed_tools`` has nobody to
    approve it and no settings file to pre-approve it, so it is denied (the mitigation the
    workflow reader credits for a ``claude -p`` step). Unset ``setting_sources`` is not
    credited: what loads then depends on the SDK's version."""
    if cfg.engine == "claude CLI" or ci_file(cfg.path) or cfg.open_ended:
        return False  # (options spread from an unknown value may set any of these)
    for name in ("can_use_tool", "hooks", "permission_prompt_tool_name"):
        opt = cfg.options.get(name) or cfg.options.get(_CAMEL.get(name, name))
        if opt is not None and opt.value is not None:
            return False
    mode = cfg.options.get("permission_mode") or cfg.options.get("permissionMode")
    if mode is not None and not all(a in ("default", "plan") for a in alternatives(mode.value)):
        return False
    sources = cfg.options.get("setting_sources") or cfg.options.get("settingSources")
    if sources is None:
        return False
    return all(isinstance(a, tuple | list) and len(a) == 0 for a in alternatives(sources.value))


def firewall_credit(
    fw: FirewallContainer, severity: Severity, evidence: dict[str, JSONValue]
) -> Severity:
    """A shell inside a container whose network egress is an allow-list the file writes
    down: graded as the engine's own sandbox is (the shell still exists, its reach is
    confined). A container whose allow-list was not read is said, never credited."""
    if fw.allow_domains is None:
        evidence["not_mitigated_by"] = [
            f"the {fw.wrapper} container (line {fw.line}): its network allow-list is not "
            f"known ({fw.domains_unread})"
        ]
        return severity
    evidence["mitigated_by"] = [
        f"the {fw.wrapper} container (line {fw.line}): network egress only to the "
        f"{len(fw.allow_domains)} domains of its allow-list (line {fw.domains_line})"
    ]
    return min(severity, Severity.MEDIUM)


def firewall_text(fw: FirewallContainer) -> str:
    if fw.allow_domains is None:
        return (
            f" Commands run inside the {fw.wrapper} container (line {fw.line}), but its "
            f"network allow-list is not known ({fw.domains_unread}): not counted as a "
            "mitigation."
        )
    shown = ", ".join(fw.allow_domains[:3]) + (", ..." if len(fw.allow_domains) > 3 else "")
    text = (
        f" Commands run inside the {fw.wrapper} container (line {fw.line}): network egress "
        f"only to the {len(fw.allow_domains)} domains of its allow-list (line "
        f"{fw.domains_line}: {shown}). The shell there still runs any command"
    )
    if fw.workdir is not None:
        text += f", in `{fw.workdir}`"
    if fw.env_all:
        kept_out = f" but {', '.join(fw.excluded_env)}" if fw.excluded_env else ""
        text += f", with every variable of the step's environment{kept_out} (`--env-all`)"
    return text + ", and can send what it reads to any of those domains."

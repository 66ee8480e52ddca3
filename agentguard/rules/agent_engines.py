"""The Codex, Gemini and OpenHands configurations (facts only, no I/O).

Engine policies feed the AG3xx rules that Claude's configurations feed (AG301 for a
shell outside the sandbox, AG305 for approvals switched off), with the engine named in
every finding. Agent actions in CI (AG330, AG331) are :mod:`.agent_actions`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from agentguard.facts.agents import CODEX, GEMINI, OPENHANDS, EnginePolicy, Option
from agentguard.facts.values import Unknown, describe
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.agent_tools import BuiltinShellTools, PermissionChecksBypassed


def _loc(p: EnginePolicy, opt: Option | None = None) -> Location:
    return Location(path=p.path, line=opt.line if opt else p.line, note=p.label)


def _value(opt: Option | None) -> object:
    return None if opt is None else opt.value


def with_project_defaults(policies: Sequence[EnginePolicy]) -> list[EnginePolicy]:
    """Command lines and actions that leave the sandbox unset get it from the project's
    own configuration file of that engine (Codex `config.toml`, Gemini `settings.json`),
    which the engine loads from the folder it starts in. Files that disagree make it
    unknown: never the first of two."""
    files: dict[str, set[str]] = {}
    lines: dict[str, Option] = {}
    for p in policies:
        if p.label in ("config.toml", "settings.json") and p.sandbox is not None:
            files.setdefault(p.engine, set()).add(repr(p.sandbox.value))
            lines.setdefault(p.engine, p.sandbox)
    out: list[EnginePolicy] = []
    for p in policies:
        found = files.get(p.engine)
        if p.sandbox is not None or not found or p.label in ("config.toml", "settings.json"):
            out.append(p)
            continue
        if len(found) == 1:
            src = lines[p.engine]
            opt = Option(src.value, p.line, f"{src.expr} in the project's {_file_of(p.engine)}")
        else:
            why = f"the project's {_file_of(p.engine)} files disagree"
            opt = Option(Unknown(", ".join(sorted(found)), why), p.line, why)
        out.append(dataclasses.replace(p, sandbox=opt))
    return out


def _file_of(engine: str) -> str:
    return ".codex/config.toml" if engine == CODEX else ".gemini/settings.json"


def check_engine_policy(p: EnginePolicy) -> list[Finding]:
    """AG301/AG305 for one Codex, Gemini or OpenHands policy."""
    if p.engine == OPENHANDS:
        return _openhands(p)
    return _codex(p) if p.engine == CODEX else _gemini(p) if p.engine == GEMINI else []


_ON_THE_HOST = ("local", "cli")  # OpenHands runtimes without a sandbox


def _openhands(p: EnginePolicy) -> list[Finding]:
    """The runtime decides where the agent's commands run (`docker`, the default, is a
    sandbox container; `local`/`cli` are the host), confirmation mode whether it asks."""
    runtime, confirm = _value(p.sandbox), _value(p.approval)
    return _openhands_volumes(p) + _openhands_runtime(p, runtime, confirm)


def _openhands_volumes(p: EnginePolicy) -> list[Finding]:
    """AG203/AG204 for `[sandbox] volumes`: the host paths every sandbox gets. (No AG202:
    mounting the project the agent works on is what the setting is for.)"""
    from agentguard.facts.image import MountFact
    from agentguard.rules.mounts import check_docker_socket_mounts, check_sensitive_mounts

    mounts = [MountFact("bind", host, inside, rw) for host, inside, rw in p.volumes]
    where = Location(path=p.path, line=p.volumes_line or p.line, note=p.label)
    subject = f"the {p.engine} sandbox ([sandbox] volumes in {p.path})"
    return check_docker_socket_mounts(
        mounts, subject=subject, locate=lambda m: where
    ) + check_sensitive_mounts(mounts, subject=subject, locate=lambda m: where)


def _openhands_runtime(p: EnginePolicy, runtime: object, confirm: object) -> list[Finding]:
    evidence = {
        "engine": p.engine,
        "sandbox": describe(runtime) if runtime is not None else None,
        "approval": describe(confirm) if confirm is not None else None,
    }
    fix = Fix(
        'Run OpenHands with its sandbox: `runtime = "docker"` under `[core]` (the default), '
        "and `confirmation_mode = true` under `[security]` where a person is there to answer.",
        snippet='[core]\nruntime = "docker"',
    )
    if isinstance(runtime, Unknown):
        return [
            BuiltinShellTools.finding(
                f"{p.engine}'s runtime could not be determined ({describe(runtime)}); if it is "
                "`local` or `cli`, the agent's commands run on the host itself.",
                locations=[_loc(p, p.sandbox)],
                fix=fix,
                evidence=evidence,
                severity=Severity.MEDIUM,
                confidence=Confidence.LOW,
            )
        ]
    if runtime not in _ON_THE_HOST:
        return []
    assert p.sandbox is not None
    if confirm != "true":
        asked = p.approval.expr if p.approval else "confirmation_mode is off by default"
        return [
            PermissionChecksBypassed.finding(
                f"{p.engine} runs the agent's commands on the host itself ({p.sandbox.expr}, no "
                f"sandbox) and asks before none of them ({asked}): every command the model "
                "writes runs with the rights of the user who started it.",
                locations=[_loc(p, p.sandbox)],
                fix=fix,
                evidence=evidence,
            )
        ]
    return [
        BuiltinShellTools.finding(
            f"{p.engine} runs the agent's commands on the host itself ({p.sandbox.expr}, no "
            f"sandbox); confirmation mode ({p.approval.expr if p.approval else ''}) is all that "
            "stands between the model and the machine.",
            locations=[_loc(p, p.sandbox)],
            fix=fix,
            evidence=evidence,
            severity=Severity.MEDIUM,  # a person answers for each action
        )
    ]


def _codex(p: EnginePolicy) -> list[Finding]:
    sandbox, approval = _value(p.sandbox), _value(p.approval)
    never = approval == "never" or (approval is None and p.headless)
    evidence = {
        "engine": p.engine,
        "sandbox": describe(sandbox) if sandbox is not None else None,
        "approval": describe(approval) if approval is not None else None,
        "profile": p.profile,
    }
    fix = Fix(
        'Keep Codex\'s sandbox on: `sandbox_mode = "workspace-write"` (or `--sandbox '
        "workspace-write`), and run it in a container that holds no credentials it does not "
        "need.",
        snippet='sandbox_mode = "workspace-write"',
    )
    if isinstance(sandbox, Unknown):
        return [
            BuiltinShellTools.finding(
                f"{p.engine} sandbox mode could not be determined ({describe(sandbox)}); if it "
                "is danger-full-access, shell commands run unconfined.",
                locations=[_loc(p, p.sandbox)],
                fix=fix,
                evidence=evidence,
                severity=Severity.MEDIUM,
                confidence=Confidence.LOW,
            )
        ]
    if sandbox != "danger-full-access":
        return []
    assert p.sandbox is not None
    if never:
        if p.approval is None:
            what = f"{p.sandbox.expr}; `codex exec` never asks"
        elif p.approval.expr == p.sandbox.expr:
            what = p.sandbox.expr
        else:
            what = f"{p.sandbox.expr}; {p.approval.expr}"
        return [
            PermissionChecksBypassed.finding(
                f"{p.engine} runs with neither its sandbox nor an approval step ({what}): "
                "every shell command the model writes runs unconfined and unasked.",
                locations=[_loc(p, p.sandbox)],
                fix=fix,
                evidence=evidence,
            )
        ]
    return [
        BuiltinShellTools.finding(
            f"{p.engine} runs shell commands outside its sandbox ({p.sandbox.expr}); the "
            f"approval policy ({describe(approval) if approval else 'the default'}) is all that "
            "stands between the model and the container.",
            locations=[_loc(p, p.sandbox)],
            fix=fix,
            evidence=evidence,
        )
    ]


def _gemini(p: EnginePolicy) -> list[Finding]:
    sandbox, approval = _value(p.sandbox), _value(p.approval)
    removed = _value(p.shell_removed)
    evidence = {
        "engine": p.engine,
        "sandbox": describe(sandbox) if sandbox is not None else None,
        "approval": describe(approval) if approval is not None else None,
        "shell": "removed"
        if removed is True
        else list(removed)
        if isinstance(removed, tuple)
        else "live",
    }
    out: list[Finding] = []
    if approval == "yolo" and p.yolo_disabled is None:  # (the engine refuses YOLO mode then)
        severity, notes = Severity.HIGH, []
        sandbox_off = isinstance(sandbox, str) and sandbox in ("false", "0", "none")
        if sandbox is None:
            severity = Severity.MEDIUM
            notes.append("the sandbox that YOLO mode turns on by default confines the tools")
        elif isinstance(sandbox, Unknown):
            severity = Severity.MEDIUM
            notes.append(f"whether the sandbox is on could not be determined ({describe(sandbox)})")
        elif not sandbox_off:
            severity = Severity.LOW
            notes.append(f"tools run in the sandbox ({p.sandbox.expr if p.sandbox else ''})")
        else:
            notes.append(f"the sandbox is off ({p.sandbox.expr if p.sandbox else ''})")
        if removed is True:
            severity = min(severity, Severity.LOW, key=_rank)
            notes.append("the shell tool is removed")
        elif isinstance(removed, tuple):
            severity = min(severity, Severity.LOW, key=_rank)
            notes.append(f"the shell is limited to {', '.join(removed)}")
        out.append(
            PermissionChecksBypassed.finding(
                f"{p.engine} approves every tool call without asking (YOLO mode: "
                f"{p.approval.expr if p.approval else ''}); " + "; ".join(notes) + ".",
                locations=[_loc(p, p.approval)],
                fix=Fix(
                    "Run without `--yolo`; list the tools the task needs in `tools.core` "
                    '(shell commands one by one, e.g. "run_shell_command(gh issue view)") '
                    "and keep the sandbox on.",
                    snippet='"tools": {"core": ["read_file", "run_shell_command(gh issue view)"]}',
                ),
                evidence=evidence,
                severity=severity,
            )
        )
    elif p.shell_preapproved is not None and removed is not True:
        out.append(
            BuiltinShellTools.finding(
                f"{p.engine} pre-approves every shell command ({p.shell_preapproved.expr} lists "
                "run_shell_command without a command): the model runs any command unasked.",
                locations=[_loc(p, p.shell_preapproved)],
                fix=Fix(
                    'Pre-approve single commands only: "run_shell_command(git status)".',
                    snippet='"allowed": ["run_shell_command(git status)"]',
                ),
                evidence=evidence,
                severity=Severity.MEDIUM
                if sandbox is not None and sandbox not in ("false",)
                else Severity.HIGH,
            )
        )
    return out


def _rank(s: Severity) -> int:
    order = [Severity.INFO, Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL]
    return order.index(s)

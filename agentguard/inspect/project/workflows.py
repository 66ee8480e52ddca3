"""Agent actions in GitHub workflows: which agent runs, on which ref, for whom, how confined.

Reads ``.github/workflows/*.yml``: every step whose ``uses:`` names an agent action
(:data:`AGENT_ACTIONS`) becomes an :class:`~.engine_model.ActionStep` with its ``with:``
inputs and the workflow's triggers. The inputs that set a policy are read as the action
documents them:

- ``openai/codex-action``: ``sandbox`` (default ``workspace-write``), ``codex-args``
  (flags passed to ``codex exec``, which never asks for approval), ``safety-strategy``,
  ``allow-users``;
- ``google-github-actions/run-gemini-cli``: it runs ``gemini --yolo``; ``settings`` is
  written to ``.gemini/settings.json``;
- ``anthropics/claude-code-action``: ``allowed_non_write_users`` (the inputs that configure
  the ``claude`` it runs are read by :mod:`.claude_action`).
"""

from __future__ import annotations

import json
from typing import Any

from agentguard.inspect.project.engine_cli import read_flags
from agentguard.inspect.project.engine_model import CODEX, GEMINI, ActionStep, EnginePolicy
from agentguard.inspect.project.engine_settings import (
    gemini_policy_from_doc,
    gemini_servers_from_doc,
)
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import DocumentError, LinedDoc
from agentguard.inspect.project.model import McpServer, Option, Unknown
from agentguard.inspect.project.yaml_lined import load_workflow_yaml

AGENT_ACTIONS = {
    "openai/codex-action": CODEX,
    "google-github-actions/run-gemini-cli": GEMINI,
    "google-gemini/gemini-cli-action": GEMINI,
    "anthropics/claude-code-action": "Claude Code",
    "anthropics/claude-code-base-action": "Claude Code",
}


def is_workflow(path: str, data: bytes = b"") -> bool:
    """A GitHub workflow: under ``.github/workflows/``, or (an example kept elsewhere) a
    YAML file with top-level ``jobs:`` and ``on:``."""
    norm = "/" + path.replace("\\", "/")
    if not norm.endswith((".yml", ".yaml")):
        return False
    if "/.github/workflows/" in norm:
        return True
    return b"\njobs:" in data and (b"\non:" in data or data.startswith(b"on:"))


def workflow_triggers(doc: dict[str, Any]) -> tuple[str, ...]:
    # YAML 1.1 reads the key `on` as the boolean true
    on = doc.get("on", doc.get("true", doc.get("True")))
    if isinstance(on, str):
        return (on,)
    if isinstance(on, list):
        return tuple(str(e) for e in on)
    if isinstance(on, dict):
        return tuple(str(k) for k in on)
    return ()


def read_workflow(path: str, data: bytes) -> list[ActionStep]:
    """Agent-action steps of one workflow. Raises :class:`DocumentError`."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    doc = load_workflow_yaml(text)
    if not isinstance(doc.value, dict):
        raise DocumentError("a workflow must be a mapping at the top level", line=1)
    triggers = workflow_triggers(doc.value)
    jobs = doc.value.get("jobs")
    out: list[ActionStep] = []
    for job, spec in jobs.items() if isinstance(jobs, dict) else ():
        steps = spec.get("steps") if isinstance(spec, dict) else None
        for n, step in enumerate(steps) if isinstance(steps, list) else ():
            uses = step.get("uses") if isinstance(step, dict) else None
            if not isinstance(uses, str):
                continue
            action, _, ref = uses.partition("@")
            if action.lower() not in AGENT_ACTIONS:
                continue
            inputs = step.get("with")
            items = []
            for key, value in inputs.items() if isinstance(inputs, dict) else ():
                items.append((str(key), value, doc.line("jobs", job, "steps", n, "with", key) or 1))
            out.append(
                ActionStep(
                    action=action.lower(),
                    ref=ref,
                    path=path,
                    line=doc.line("jobs", job, "steps", n, "uses") or 1,
                    job=str(job),
                    inputs=tuple(items),
                    triggers=triggers,
                )
            )
    return out


def _expr(value: Any) -> Any:
    """An input value: text, or unknown when GitHub fills it in (``${{ ... }}``)."""
    text = str(value)
    return Unknown(text[:80], "set by a workflow expression") if "${{" in text else text


def action_policies(step: ActionStep) -> tuple[list[EnginePolicy], list[McpServer]]:
    """The engine policy (and MCP servers) one agent-action step configures."""
    label = f"{step.action} inputs"
    if AGENT_ACTIONS.get(step.action) == CODEX:
        sandbox = step.input("sandbox")
        args = step.input("codex-args")
        from_args = _codex_args(step, args) if args else None
        policy = EnginePolicy(
            engine=CODEX,
            path=step.path,
            line=step.line,
            label=label,
            sandbox=(from_args.sandbox if from_args and from_args.sandbox else None)
            or (
                Option(_expr(sandbox[0]), sandbox[1], f"sandbox: {sandbox[0]}") if sandbox else None
            )
            or Option("workspace-write", step.line, "the action's default sandbox"),
            approval=Option("never", step.line, "the action runs `codex exec`"),
            headless=True,
        )
        return [policy], []
    if AGENT_ACTIONS.get(step.action) == GEMINI:
        yolo = Option("yolo", step.line, "the action runs `gemini --yolo`")
        settings = step.input("settings")
        if settings is None:
            return [EnginePolicy(GEMINI, step.path, step.line, label, approval=yolo)], []
        text, line = settings
        # the input's text starts on the line after `settings: |`
        start = line + 1 if isinstance(text, str) and "\n" in text else line
        try:
            if not isinstance(text, str):
                raise DocumentError("not a string")
            doc: LinedDoc = load_jsonc(text)
        except DocumentError:
            why = (
                "settings filled in by the workflow"
                if "${{" in str(text)
                else "settings are not valid JSON"
            )
            unknown = Unknown(" ".join(str(text).split())[:40], why)
            return [_gemini_unknown(step, label, Option(unknown, line, "settings"), yolo)], []
        base = gemini_policy_from_doc(step.path, doc, label, line=start)
        policy = EnginePolicy(
            engine=GEMINI,
            path=step.path,
            line=step.line,
            label=label,
            sandbox=base.sandbox,
            approval=yolo,
            shell_removed=base.shell_removed,
            shell_preapproved=base.shell_preapproved,
            yolo_disabled=base.yolo_disabled,
            headless=True,
        )
        servers = gemini_servers_from_doc(
            step.path, doc, f"{step.action} settings mcpServers", line=start
        )
        return [policy], servers
    return [], []


def _gemini_unknown(step: ActionStep, label: str, sandbox: Option, yolo: Option) -> EnginePolicy:
    return EnginePolicy(GEMINI, step.path, step.line, label, sandbox=sandbox, approval=yolo)


def _codex_args(step: ActionStep, args: tuple[Any, int]) -> EnginePolicy | None:
    value, line = args
    if not isinstance(value, str):
        return None
    if value.lstrip().startswith("["):
        try:
            argv = [str(a) for a in json.loads(value)]
        except (ValueError, TypeError):
            return None
    else:
        argv = value.split()
    return read_flags(CODEX, step.path, line, argv, "codex-args")

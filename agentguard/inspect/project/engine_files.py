"""Engine configuration files and YAML files for :mod:`.files`: sources and facts.

Codex ``config.toml`` and Gemini ``settings.json`` by name; GitHub workflows by path;
Kubernetes manifests by content (a YAML file with top-level ``apiVersion`` and ``kind``).
A file that cannot be read is a failed source; a templated manifest (Helm's ``{{ }}``)
is skipped with the reason, since its values are only known after rendering.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.findings import Source
from agentguard.inspect.project.lined import DocumentError

if TYPE_CHECKING:
    from agentguard.facts.workflows import ActionStep
    from agentguard.inspect.project.composite import LocalActionUse
    from agentguard.inspect.project.outcome import FileOutcome
    from agentguard.inspect.project.workflow_runs import AgentRunStep


def _failed(path: str, exc: DocumentError, code: str) -> Source:
    from agentguard.inspect.project.outcome import failed_source

    where = f" (line {exc.line})" if exc.line else ""
    return failed_source(path, f"{exc}{where}", f"{code}-{exc.code}")


def engine_config(path: str, kind: str, data: bytes, out: FileOutcome) -> None:
    from agentguard.inspect.project.engine_settings import (
        parse_codex_config,
        parse_gemini_settings,
    )

    try:
        if kind == "openhands-config":
            from agentguard.inspect.project.openhands_config import LABEL, parse_openhands_config

            got = parse_openhands_config(path, data)
            if got is None:
                return  # another tool's config.toml
            (policies, servers), what = got, LABEL
        elif kind == "codex-config":
            policies, servers = parse_codex_config(path, data)
            what = "Codex CLI config.toml"
        else:
            policy, servers = parse_gemini_settings(path, data)
            policies = [policy]
            what = "Gemini CLI settings.json"
    except DocumentError as exc:
        out.sources.append(_failed(path, exc, kind))
        return
    out.parsed += 1
    out.engine_policies += policies
    out.mcp_servers += servers
    out.sources.append(Source.ok("file", path, what))


def yaml_config(path: str, data: bytes, out: FileOutcome, *, origin: str = "project") -> None:
    from agentguard.inspect.project.composite import LOCAL_USES, is_action_file
    from agentguard.inspect.project.k8s_facts import (
        TemplatedManifest,
        looks_like_manifest,
        read_manifest_file,
    )
    from agentguard.inspect.project.workflows import action_policies, is_workflow, read_workflow

    if is_action_file(path):
        _composite(path, data, out, origin)
        return
    if is_workflow(path, data):
        lowered = data.lower()
        local = LOCAL_USES.search(data) is not None
        if not local and not any(a.encode() in lowered for a in _ACTION_NEEDLES):
            return
        try:
            steps = read_workflow(path, data)
            runs = _agent_runs(path, data) if any(n in lowered for n in _RUN_NEEDLES) else []
            if local:
                out.local_uses += _local_uses(path, data)
        except DocumentError as exc:
            out.sources.append(_failed(path, exc, "workflow"))
            return
        if not steps and not runs:
            return  # names an agent without starting one (or calls local actions only)
        out.parsed += 1
        out.action_steps += steps
        out.agent_runs += runs
        for step in steps:
            policies, servers = action_policies(step)
            out.engine_policies += policies
            out.mcp_servers += servers
        claude_steps(steps, out, origin)
        count = len(steps) + len(runs)
        out.sources.append(Source.ok("file", path, f"GitHub workflow ({count} agent steps)"))
        return
    if not looks_like_manifest(data):
        return
    try:
        found = read_manifest_file(path, data)
    except TemplatedManifest:
        # (it does not parse as YAML and holds `{{`: never for a `{{` in a comment)
        out.sources.append(
            Source.skipped(
                "file",
                path,
                "templated Kubernetes manifest (Helm): its values are known only after "
                "rendering; run agentguard on the output of `helm template`",
            )
        )
        return
    except DocumentError as exc:
        out.sources.append(_failed(path, exc, "kubernetes"))
        return
    containers = found.containers
    if not containers:
        return
    out.parsed += 1
    out.k8s_containers += containers
    note = (
        "; values hold `{{` (a Helm template?): read as written, as `kubectl apply` would deploy it"
        if found.braces
        else ""
    )
    out.sources.append(
        Source.ok("file", path, f"Kubernetes manifest ({len(containers)} containers){note}")
    )


def _composite(path: str, data: bytes, out: FileOutcome, origin: str) -> None:
    """A local composite action: its agent steps (AG330/AG331, engine policies) now; the
    claude inside is configured per caller after gathering (:func:`.composite.join`)."""
    from agentguard.inspect.project.composite import read_composite
    from agentguard.inspect.project.workflows import action_policies
    from agentguard.inspect.project.yaml_lined import load_workflow_yaml

    try:
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
        composite = read_composite(path, load_workflow_yaml(text))
    except DocumentError as exc:
        out.sources.append(_failed(path, exc, "action"))
        return
    if composite is None:
        return  # a JavaScript or Docker action: its code is read where it is
    steps = list(composite.agent_steps)
    if not steps and composite.agent_in_run is None:
        return  # a composite that runs no agent
    out.parsed += 1
    out.composites.append(composite)
    out.action_steps += steps
    for step in steps:
        policies, servers = action_policies(step)
        out.engine_policies += policies
        out.mcp_servers += servers
    lines = {s.line for s in steps} | {
        ln for s in steps for key, _, ln in s.inputs if key == "claude_args"
    }
    if lines:
        out.claude_step_lines = frozenset(lines)
    out.sources.append(Source.ok("file", path, f"composite action ({len(steps)} agent steps)"))


def _local_uses(path: str, data: bytes) -> list[LocalActionUse]:
    from agentguard.inspect.project.composite import read_local_uses
    from agentguard.inspect.project.yaml_lined import load_workflow_yaml

    return read_local_uses(path, load_workflow_yaml(data.decode("utf-8-sig")))


def claude_steps(steps: list[ActionStep], out: FileOutcome, origin: str) -> None:
    """The configuration of each claude-code-action step, read from its inputs."""
    from agentguard.inspect.project.claude_action import CLAUDE_ACTIONS, claude_step_config

    lines: set[int] = set(out.claude_step_lines or ())
    for step in steps:
        if step.action in CLAUDE_ACTIONS:
            out.configs.append(claude_step_config(step, origin=origin))
            lines.add(step.line)
            lines.update(ln for key, _, ln in step.inputs if key == "claude_args")
    if lines:
        out.claude_step_lines = frozenset(lines)


def _agent_runs(path: str, data: bytes) -> list[AgentRunStep]:
    from agentguard.inspect.project.workflow_runs import read_agent_runs
    from agentguard.inspect.project.yaml_lined import load_workflow_yaml

    return read_agent_runs(path, load_workflow_yaml(data.decode("utf-8-sig")))


_RUN_NEEDLES = (b"openhands",)  # agents a workflow starts with `run:` (workflow_runs)
_ACTION_NEEDLES = (
    *(n.decode() for n in _RUN_NEEDLES),
    "openai/codex-action",
    "run-gemini-cli",
    "gemini-cli-action",
    "anthropics/claude-code",
)

"""Local composite actions: an ``action.yml`` (at the root, the product of an action
repository, or under ``.github/actions/NAME/``) whose ``runs.steps`` are read like a
workflow job's steps, and the workflow steps that call it (``uses: ./.github/actions/NAME``).

Modelled on PrefectHQ/fastmcp's ``.github/actions/run-claude``: a composite that runs
``anthropics/claude-code-action`` with ``--allowedTools`` built from its own
``inputs.allowed-tools``, called by workflows that pass ``Bash(*)``, ``Write`` and
``WebFetch`` in ``with:``. The agent inside is configured by what each caller passes, so
:func:`join` reads the composite's claude step once per caller, with that caller's inputs
(and the composite's defaults for the rest); a composite nobody here calls is read with its
defaults, and an input without one is unknown. Facts only.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agentguard.inspect.project.claude_action import CLAUDE_ACTIONS, claude_step_config, substitute
from agentguard.inspect.project.engine_model import ActionStep
from agentguard.inspect.project.gha_expr import resolver
from agentguard.inspect.project.install_facts import (
    InstallCommand,
    RequirementsFile,
    find_installs,
)
from agentguard.inspect.project.lined import DocumentError, LinedDoc
from agentguard.inspect.project.model import AgentConfig, AgentDefinition, Unknown
from agentguard.inspect.project.tool_installs import AGENT_NPM, ToolInstall, find_tool_installs
from agentguard.inspect.project.workflow_runs import AgentRunStep

LOCAL_USES = re.compile(rb"uses:\s*['\"]?\./")


@dataclass(frozen=True)
class CompositeAction:
    path: str  # the action.yml
    folder: str  # what a caller's `uses: ./FOLDER` names ("" for the root)
    name: str
    defaults: tuple[tuple[str, str | None], ...]  # input -> its default (None: no default)
    agent_steps: tuple[ActionStep, ...]  # agent-action steps as written
    installs: tuple[InstallCommand, ...]  # pip/uv installs of its `run:` steps
    tool_installs: tuple[ToolInstall, ...]  # npm -g / npx / curl | sh of its `run:` steps
    agent_in_run: str | None  # an agent its `run:` steps start or install, by name
    agent_line: int | None = None  # the line of a `run:` step that installs it (None: none)


@dataclass(frozen=True)
class LocalActionUse:
    """A workflow step ``uses: ./FOLDER`` with its ``with:`` inputs."""

    path: str
    line: int
    job: str
    folder: str
    inputs: tuple[tuple[str, Any, int], ...]
    triggers: tuple[str, ...] = ()  # the calling workflow's `on:` events


def is_action_file(path: str) -> bool:
    norm = path.replace("\\", "/").removeprefix("./")
    name = posixpath.basename(norm)
    return name in ("action.yml", "action.yaml") and (
        "/" not in norm or "/.github/actions/" in "/" + norm
    )


def _folder(uses: str) -> str:
    folder = posixpath.normpath(uses.strip().removeprefix("./")).strip("/")
    return "" if folder == "." else folder


def read_composite(path: str, doc: LinedDoc) -> CompositeAction | None:
    """The composite action of one parsed ``action.yml`` (None: another kind of action)."""
    if not isinstance(doc.value, dict):
        raise DocumentError("an action must be a mapping at the top level", line=1)
    runs = doc.value.get("runs")
    if not isinstance(runs, dict) or str(runs.get("using", "")).lower() != "composite":
        return None
    from agentguard.inspect.project.workflows import AGENT_ACTIONS

    name = str(doc.value.get("name") or posixpath.basename(posixpath.dirname(path)) or path)
    raw_inputs = doc.value.get("inputs")
    defaults = tuple(
        (str(k), None if not isinstance(v, dict) or v.get("default") is None else str(v["default"]))
        for k, v in (raw_inputs.items() if isinstance(raw_inputs, dict) else ())
    )
    steps = runs.get("steps")
    agent_steps: list[ActionStep] = []
    installs: list[InstallCommand] = []
    tools: list[ToolInstall] = []
    agent_in_run: str | None = None
    agent_line: int | None = None
    for n, step in enumerate(steps if isinstance(steps, list) else ()):
        if not isinstance(step, dict):
            continue
        uses, run = step.get("uses"), step.get("run")
        if isinstance(uses, str):
            action, _, ref = uses.partition("@")
            if action.lower() in AGENT_ACTIONS:
                inputs = step.get("with")
                agent_steps.append(
                    ActionStep(
                        action=action.lower(),
                        ref=ref,
                        path=path,
                        line=doc.line("runs", "steps", n, "uses") or 1,
                        job=f"composite action {name}",
                        inputs=tuple(
                            (str(k), v, doc.line("runs", "steps", n, "with", k) or 1)
                            for k, v in (inputs.items() if isinstance(inputs, dict) else ())
                        ),
                    )
                )
        if isinstance(run, str):
            line = doc.line("runs", "steps", n, "run") or 1
            start = line + 1 if "\n" in run.rstrip("\n") else line
            installs += find_installs(run, path=path, line=start, phase="ci")
            found = find_tool_installs(run, path=path, line=start, phase="ci")
            tools += found
            if agent_in_run is None and (agent_in_run := _agent_in(run)) is not None:
                agent_line = _install_line(run, agent_in_run, start)
    folder = posixpath.dirname(path.replace("\\", "/").removeprefix("./"))
    return CompositeAction(
        path=path,
        folder=folder,
        name=name,
        defaults=defaults,
        agent_steps=tuple(agent_steps),
        installs=tuple(installs),
        tool_installs=tuple(tools),
        agent_in_run=agent_in_run,
        agent_line=agent_line,
    )


# a command line that installs or fetches a package (the one a composite runs its agent from)
_INSTALL = re.compile(r"\b(?:(?:npm|pnpm|yarn|bun)\s+(?:install|i|add|global\s+add)\b|npx\s)")


def _install_line(script: str, agent: str, start: int) -> int | None:
    """The line of ``script`` (its first at ``start``) that installs ``agent``, if any."""
    for i, text in enumerate(script.splitlines()):
        if agent in text and _INSTALL.search(text):
            return start + i
    return None


def _agent_in(script: str) -> str | None:
    """An agent CLI a `run:` script installs or starts, by name."""
    from agentguard.inspect.project.cli_flags import has_cli_use

    named = sorted(n for n in AGENT_NPM if n in script)
    if named:
        return named[0]
    return "claude CLI" if has_cli_use(script.encode()) else None


def read_local_uses(path: str, doc: LinedDoc) -> list[LocalActionUse]:
    """The steps of a parsed workflow that call a local action (``uses: ./...``)."""
    from agentguard.inspect.project.workflows import workflow_triggers

    jobs = doc.value.get("jobs") if isinstance(doc.value, dict) else None
    triggers = workflow_triggers(doc.value) if isinstance(doc.value, dict) else ()
    out: list[LocalActionUse] = []
    for job, spec in jobs.items() if isinstance(jobs, dict) else ():
        steps = spec.get("steps") if isinstance(spec, dict) else None
        for n, step in enumerate(steps if isinstance(steps, list) else ()):
            uses = step.get("uses") if isinstance(step, dict) else None
            if not isinstance(uses, str) or not uses.strip().startswith("./"):
                continue
            inputs = step.get("with")
            out.append(
                LocalActionUse(
                    path=path,
                    line=doc.line("jobs", job, "steps", n, "uses") or 1,
                    job=str(job),
                    folder=_folder(uses),
                    inputs=tuple(
                        (str(k), v, doc.line("jobs", job, "steps", n, "with", k) or 1)
                        for k, v in (inputs.items() if isinstance(inputs, dict) else ())
                    ),
                    triggers=triggers,
                )
            )
    return out


def _context(c: CompositeAction, caller: LocalActionUse | None) -> dict[str, str]:
    """The composite's inputs as this caller passes them: a literal value, else the
    default; a value the caller's workflow fills in (``${{ secrets.X }}``) is unknown."""
    given = {k.lower(): v for k, v, _ in (caller.inputs if caller else ())}
    out: dict[str, str] = {}
    for name, default in c.defaults:
        if name.lower() in given:
            value = substitute(str(given.pop(name.lower())), lambda _: None)
            if not isinstance(value, Unknown):
                out[name.lower()] = value
        elif default is not None:
            out[name.lower()] = default
    for name, raw in given.items():  # passed, though the composite does not declare it
        value = substitute(str(raw), lambda _: None)
        if not isinstance(value, Unknown):
            out[name] = value
    return out


def join(
    composites: Iterable[CompositeAction],
    uses: Iterable[LocalActionUse],
    requirements: Callable[[str], RequirementsFile | None],
    origin: str = "project",
) -> tuple[list[AgentConfig], list[AgentRunStep]]:
    """The agents inside composite actions, configured by each of their callers.
    ``requirements``: a requirements file of the checkout by its path (a composite's
    `run:` steps work in the checkout), or None when the project has none there."""
    callers: dict[str, list[LocalActionUse]] = {}
    for u in uses:
        callers.setdefault(u.folder, []).append(u)
    configs: list[AgentConfig] = []
    runs: list[AgentRunStep] = []
    for c in composites:
        claude = [s for s in c.agent_steps if s.action in CLAUDE_ACTIONS]
        contexts: list[LocalActionUse | None] = [*callers.get(c.folder, [])] or [None]
        for caller in contexts:
            resolve = resolver(_context(c, caller))
            for step in claude:
                where = (
                    f", called from {caller.path}:{caller.line} (job {caller.job})"
                    if caller
                    else " (its inputs' defaults: no caller in this project)"
                )
                label = f"{step.action} step of composite action {c.name}{where}"
                cfg = claude_step_config(step, origin=origin, resolve=resolve, label=label)
                if caller is not None:  # (the map runs it in the caller's job)
                    at = ActionStep(f"./{c.folder}", "", caller.path, caller.line, caller.job,
                                    triggers=caller.triggers)  # fmt: skip
                    cfg = dataclasses.replace(cfg, called_from=at)
                configs.append(cfg)
        engine = c.agent_steps[0].action if c.agent_steps else c.agent_in_run
        if engine is not None and (c.installs or c.tool_installs):
            line = c.agent_steps[0].line if c.agent_steps else 1
            runs.append(
                AgentRunStep(
                    engine=engine,
                    command=f"composite action {c.name}",
                    path=c.path,
                    line=line,
                    job=f"composite action {c.name}",
                    triggers=(),
                    open_events=(),
                    installs=c.installs,
                    written=tuple(
                        (ref, rf)
                        for ref in dict.fromkeys(f for i in c.installs for f in i.requirement_files)
                        for rf in [requirements(posixpath.normpath(ref))]
                        if rf is not None
                    ),
                    tool_installs=c.tool_installs,
                )
            )
    return configs, runs


def composite_definitions(
    composites: Iterable[CompositeAction], drawn: set[str]
) -> list[AgentDefinition]:
    """The map's entry of a composite action whose `run:` steps start an agent it does not
    install with a reader's install command (openai/codex-action's ``action.yml`` runs
    ``codex exec`` through its own script): drawn, not judged (no rule reads it). One whose
    file already yields an agent (``drawn``: a command line read there) is not drawn twice."""
    return [
        AgentDefinition(
            c.agent_in_run,
            "composite action",
            f"composite action {c.name}",
            c.path,
            c.agent_line,
            tools=None,
            builtin="is a composite action: it runs in the job of each workflow that uses it",
        )
        for c in composites
        if c.agent_in_run is not None and c.agent_line is not None and c.path not in drawn
        if not c.agent_steps and not (c.installs or c.tool_installs)
    ]

"""Build the agent capability map (:mod:`agentguard.facts.capabilities`) from the facts.

:func:`build_map` runs after gathering, over :class:`~agentguard.facts.agents.ProjectFacts`
and :class:`~agentguard.facts.project.BuildFileFacts`: one entry per agent configuration
(SDK options, a CLI, a Codex/Gemini configuration), per agent a workflow starts, and per
file that hands tools to a model through another framework. It reads facts only: no I/O,
no gatherer (an import-linter contract holds it).
"""

from __future__ import annotations

import posixpath
from typing import Any

from agentguard.engine.capability_parts import (
    model_of,
    reach,
    secrets_of,
    step_secrets,
)
from agentguard.engine.capability_runs import Placement, forget_copied, placements, service_paths
from agentguard.engine.capability_services import command_places, service_agents, with_hazards
from agentguard.engine.capability_tools import config_tools, grant_tools, mcp_links, policy_tools
from agentguard.engine.capability_workdir import with_cwd, workdir_of
from agentguard.facts.agents import AgentConfig, EnginePolicy, ProjectFacts, ToolGrant
from agentguard.facts.capabilities import (
    CLI,
    CODE,
    FRAMEWORK,
    IMAGE,
    IMAGE_PATH,
    PROJECT,
    WORKFLOW_JOB,
    WORKFLOW_STEP,
    AgentCapability,
    AgentSite,
    CapabilityMap,
    Evidence,
    ModelChoice,
    Runner,
    Workdir,
)
from agentguard.facts.project import BuildFileFacts
from agentguard.facts.workflows import ActionStep, AgentRunStep
from agentguard.findings import Confidence


def build_map(target: str, facts: ProjectFacts, build: BuildFileFacts | None) -> CapabilityMap:
    """The capability map of one project (or one image's files: ``facts.workdir`` set)."""
    try:
        return _build(target, facts, build)
    finally:
        forget_copied()


def _build(target: str, facts: ProjectFacts, build: BuildFileFacts | None) -> CapabilityMap:
    agents: list[AgentCapability] = []
    of_step = _step_configs(facts)
    merged = {id(c) for cs in of_step.values() for c in cs if len(cs) == 1}
    at = {id(c): i for i, c in enumerate(facts.configs)}
    by_config: dict[int, int] = {}  # configuration index -> its entry's place in `agents`
    for i, cfg in enumerate(facts.configs):
        if id(cfg) not in merged:
            by_config[i] = len(agents)
            agents.append(_config_agent(len(agents) + 1, cfg, facts, build, target))
    steps_done: set[tuple[str, int]] = set()
    for i, step in enumerate(facts.action_steps):
        steps_done.add((step.path, step.line))
        cfgs = of_step.get(i, [])
        if len(cfgs) > 1 and all(c.called_from and c.called_from.path != step.path for c in cfgs):
            continue  # a composite action's step: each caller's configuration is an entry
        if len(cfgs) == 1:  # the configuration read from its inputs: the step's entry
            by_config[at[id(cfgs[0])]] = len(agents)
        agents.append(
            _action_agent(len(agents) + 1, step, facts, cfgs[0] if len(cfgs) == 1 else None)
        )
    for run in facts.agent_runs:
        agents.append(_run_agent(len(agents) + 1, run, facts))
    for policy in facts.engine_policies:
        if any(policy.path == p for p, _ in steps_done) and policy.label.endswith("inputs"):
            continue  # an agent action's inputs: that step's entry
        agents.append(_policy_agent(len(agents) + 1, policy, facts, build, target))
    from agentguard.engine.capability_settings import settings_agent

    def draw_settings(site: AgentSite, tools: Any, mcp: Any) -> AgentCapability:
        workdir = workdir_of(None, site.evidence.path, [], facts, build)
        note = "an engine configuration: it applies wherever the engine runs on this project"
        return _entry(len(agents) + 1, site, (), note, workdir, [], facts, tools=tools,
                      tools_known=True, mcp=mcp)  # fmt: skip

    agents += settings_agent(facts, draw_settings, agents)
    by_file: dict[tuple[str, str], list[ToolGrant]] = {}
    for g in facts.grants:
        by_file.setdefault((g.path, g.framework), []).append(g)
    for (path, framework), grants in by_file.items():
        agents.append(_grant_agent(len(agents) + 1, path, framework, grants, facts, build, target))
    from agentguard.engine.capability_defs import definition_agents, definition_notes

    def draw(n: int, site: AgentSite, tools: Any, model: ModelChoice) -> AgentCapability:
        places, runners, note = _runners(site.evidence.path, facts, build, target)
        workdir = workdir_of(None, site.evidence.path, places, facts, build)
        return _entry(n, site, runners, note, workdir, places, facts, tools=tools,
                      tools_known=True, model=model)  # fmt: skip

    agents += definition_agents(len(agents), set(by_file), facts, draw)
    agents += service_agents(agents, build)
    return CapabilityMap(
        target=target,
        agents=tuple(agents),
        notes=definition_notes(facts),
        by_config=tuple(by_config[i] for i in range(len(facts.configs))),
    )


def _step_configs(facts: ProjectFacts) -> dict[int, list[AgentConfig]]:
    """The Claude configurations read from an agent action's inputs, by the index of their
    step: a configuration of the same workflow file whose line falls within the step (at or
    after its `uses:` line, before the next agent step of the file)."""
    out: dict[int, list[AgentConfig]] = {}
    for cfg in facts.configs:
        if cfg.engine != "claude CLI":
            continue
        here = [
            (s.line, i) for i, s in enumerate(facts.action_steps)
            if s.path == cfg.path and s.line <= cfg.line
        ]  # fmt: skip
        if here:
            out.setdefault(max(here)[1], []).append(cfg)
    return out


# -- where it runs, and in which folder ----------------------------------------------


def _runners(
    path: str, facts: ProjectFacts, build: BuildFileFacts | None, target: str,
    line: int | None = None,
) -> tuple[list[Placement], tuple[Runner, ...], str]:  # fmt: skip
    """The containers that hold ``path``; ``line``: a command line's, written in a
    container file (a compose service's command runs in that service, not in an image
    that copies the compose file)."""
    if facts.workdir is not None:  # files of an image
        return [], (Runner(IMAGE, target, (Evidence(path, None, "a file of the image"),),
                           Confidence.HIGH, how="the image holds this file"),), ""  # fmt: skip
    places = None if line is None else command_places(path, line, build, facts.k8s_containers)
    if places is not None and not places:
        return [], (), f"the container whose command this is was not read in {path}"
    if places is None:
        places = placements(path, build)
    if not places:
        return (
            [],
            (),
            (
                "no Dockerfile copies this file and no compose service mounts it: it runs where "
                "its process is started (not read)"
            ),
        )
    note = ""
    if len(places) > 1:
        note = "several containers hold this file: " + ", ".join(
            f"{p.runner.kind} {p.runner.name}" for p in places
        )
    return places, tuple(p.runner for p in places), note


def _entry(
    n: int,
    site: AgentSite,
    runners: tuple[Runner, ...],
    note: str,
    workdir: Workdir,
    places: list[Placement],
    facts: ProjectFacts,
    *,
    tools: Any,
    tools_known: bool,
    mcp: Any = (),
    model: Any = None,
    secrets: Any = (),
) -> AgentCapability:
    from agentguard.engine.capability_parts import no_model

    paths = tuple(p for place in places for p in service_paths(place))
    agent = AgentCapability(
        id=f"agent-{n}",
        site=site,
        runners=runners,
        runner_note=note,
        workdir=workdir,
        tools=tuple(tools),
        tools_known=tools_known,
        paths=paths,
        reach=reach(places, tuple(tools), runners),
        mcp=tuple(mcp),
        secrets=(*secrets, *secrets_of(places)),
        model=model if model is not None else no_model(site.evidence),
    )
    return with_hazards(agent, next((p for p in places if p.k8s is not None), None))


def _config_agent(
    n: int, cfg: AgentConfig, facts: ProjectFacts, build: BuildFileFacts | None, target: str
) -> AgentCapability:
    kind = IMAGE_PATH if facts.workdir is not None else CLI if cfg.engine == "claude CLI" else CODE
    site = AgentSite(kind, cfg.engine, cfg.label, Evidence(cfg.path, cfg.line, cfg.label))
    line = cfg.line if kind == CLI else None  # (a command line: the container it starts)
    places, runners, note = _runners(cfg.path, facts, build, target, line)
    workdir = workdir_of(cfg, cfg.path, places, facts, build)
    at = cfg.called_from
    if at is not None:  # a composite action's step, as this caller configures it
        runners = tuple(_job_runner(j.path, j.line, j.job, j.triggers, None)
                        for j in (at, *cfg.also_from))  # fmt: skip
        places, note = [], ""
        jobs = ", ".join(j.job for j in (at, *cfg.also_from))
        note = f"uses: {at.action}" if at.action else f"job{'s' * bool(cfg.also_from)} {jobs}"
        workdir = with_cwd(_checkout(Evidence(at.path, at.line, note)), cfg, facts)
    tools = config_tools(cfg, facts)
    return _entry(
        n,
        site,
        runners,
        note,
        workdir,
        places,
        facts,
        tools=tools,
        tools_known=True,
        mcp=mcp_links(cfg, facts, workdir),
        model=model_of(cfg, facts),
    )


def _job_runner(path: str, line: int, job: str, triggers: tuple[str, ...],
                open_events: tuple[str, ...] | None) -> Runner:  # fmt: skip
    return Runner(
        WORKFLOW_JOB,
        job,
        (Evidence(path, line, f"job {job}"),),
        Confidence.HIGH,
        how=f"job {job} of {path}, on: {', '.join(triggers) or 'unknown'}",
        triggers=triggers,
        open_triggers=open_events,
    )


def _checkout(ev: Evidence) -> Workdir:
    return Workdir(
        ".",
        PROJECT,
        (ev,),
        Confidence.MEDIUM,
        how="the job's checkout (a `working-directory:` is not read)",
        holds_known=False,
    )


def _action_agent(
    n: int, step: ActionStep, facts: ProjectFacts, cfg: AgentConfig | None
) -> AgentCapability:
    """An agent action's step; ``cfg``: the Claude configuration read from its inputs."""
    ev = Evidence(step.path, step.line, f"uses: {step.action}@{step.ref}")
    site = AgentSite(WORKFLOW_STEP, step.action, f"workflow step (job {step.job})", ev)
    runner = _job_runner(step.path, step.line, step.job, step.triggers, None)
    callers = tuple(
        _job_runner(c.path, c.line, c.job, c.triggers, None)
        for c in dict.fromkeys(k.called_from for k in facts.configs if k.called_from)
        if c.path != step.path and _calls(c.action, step.path)
    )
    workdir = _checkout(ev)
    if cfg is not None:
        workdir = with_cwd(workdir, cfg, facts)
        return _entry(
            n,
            site,
            callers or (runner,),
            "",
            workdir,
            [],
            facts,
            tools=config_tools(cfg, facts),
            tools_known=True,
            mcp=mcp_links(cfg, facts, workdir),
            model=model_of(cfg, facts),
            secrets=step_secrets(step),
        )
    tools = policy_tools([p for p in facts.engine_policies if p.path == step.path])
    return _entry(
        n,
        site,
        callers or (runner,),
        "",
        workdir,
        [],
        facts,
        tools=tools,
        tools_known=bool(tools),
        secrets=step_secrets(step),
    )


def _calls(action: str, path: str) -> bool:
    """Whether ``uses: ACTION`` (``./FOLDER``) names the action whose file is ``path``."""
    folder = posixpath.normpath(action.removeprefix("./") or ".")
    return folder == posixpath.normpath(posixpath.dirname(path) or ".")


def _run_agent(n: int, run: AgentRunStep, facts: ProjectFacts) -> AgentCapability:
    ev = Evidence(run.path, run.line, run.command)
    site = AgentSite(WORKFLOW_STEP, run.engine, "run: step", ev)
    runner = _job_runner(run.path, run.line, run.job, run.triggers, run.open_events)
    return _entry(n, site, (runner,), "", _checkout(ev), [], facts, tools=(), tools_known=False)


def _policy_agent(
    n: int, policy: EnginePolicy, facts: ProjectFacts, build: BuildFileFacts | None, target: str
) -> AgentCapability:
    ev = Evidence(policy.path, policy.line, policy.label)
    site = AgentSite(CLI, policy.engine, policy.label, ev)
    places, runners, note = _runners(policy.path, facts, build, target, policy.line)
    if not places and not runners:
        note = "an engine configuration: it applies wherever the engine runs on this project"
    workdir = workdir_of(None, policy.path, places, facts, build)
    return _entry(
        n,
        site,
        runners,
        note,
        workdir,
        places,
        facts,
        tools=policy_tools([policy]),
        tools_known=True,
    )


def _grant_agent(
    n: int,
    path: str,
    framework: str,
    grants: list[ToolGrant],
    facts: ProjectFacts,
    build: BuildFileFacts | None,
    target: str,
) -> AgentCapability:
    first = min(grants, key=lambda g: g.line)
    site = AgentSite(
        FRAMEWORK, framework, f"{framework} tools", Evidence(path, first.line, first.tool)
    )
    places, runners, note = _runners(path, facts, build, target)
    workdir = workdir_of(None, path, places, facts, build)
    fallbacks = [s for s in facts.fallbacks if s.path == path]
    from agentguard.engine.capability_defs import function_rows
    from agentguard.engine.capability_parts import fallback_model

    return _entry(
        n,
        site,
        runners,
        note,
        workdir,
        places,
        facts,
        tools=[*grant_tools(grants), *function_rows(path, framework, facts)],
        tools_known=True,
        model=fallback_model(fallbacks, site.evidence),
    )

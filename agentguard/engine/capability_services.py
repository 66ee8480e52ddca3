"""The map entry of each container whose own start runs an agent app
(:class:`~agentguard.facts.agent_services.AgentService`): the OpenHands app service, a
compose service that starts ``claude``, the image of a Dockerfile whose CMD runs ``aider``.

The entry is joined to its service as a code agent is to the service that holds its file:
the mounts (the Docker socket and credentials folders marked), the network mode, the
environment's secrets by name, the image and the Dockerfile it builds, its working
directory. What the app's agent can do inside is its own configuration: its tools are
unknown (not read), never "none". How the service was recognised, and with what
confidence, is its site's label and its runner's confidence.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentguard.engine.capability_parts import hazards, no_model, reach, secrets_of
from agentguard.engine.capability_runs import Placement, holds_at, service_paths
from agentguard.facts.agent_services import AgentService
from agentguard.facts.capabilities import (
    COMPOSE_SERVICE,
    DOCKERFILE,
    SERVICE,
    UNKNOWN,
    AgentCapability,
    AgentSite,
    Evidence,
    Runner,
    Workdir,
)
from agentguard.facts.compose import ComposeFile, ComposeService
from agentguard.facts.project import BuildFileFacts
from agentguard.findings import Confidence


def service_agents(
    drawn: Sequence[AgentCapability], build: BuildFileFacts | None
) -> list[AgentCapability]:
    """One entry per agent service, numbered after ``drawn``; a service whose own command
    line is already an entry (a ``claude`` command read with its flags) is not drawn twice."""
    if build is None:
        return []
    sites = {(a.site.evidence.path, a.site.evidence.line) for a in drawn}
    out: list[AgentCapability] = []
    for s in build.agent_services:
        if any((e.path, e.line) in sites for e in s.evidence if e.line is not None):
            continue
        found = _compose(build, s)
        if s.compose_path is not None and found is None:
            continue  # (its compose file is not among the facts: nothing to join)
        out.append(_agent(len(drawn) + len(out) + 1, s, build, found))
    return out


def _compose(
    build: BuildFileFacts, s: AgentService
) -> tuple[ComposeFile, ComposeService, tuple[str | None, str]] | None:
    for cf, workdirs in build.composes:
        if cf.path != s.compose_path:
            continue
        for svc in cf.services:
            if svc.name == s.service:
                return cf, svc, workdirs.get(svc.name, (svc.working_dir, "working_dir"))
    return None


def _agent(
    n: int,
    s: AgentService,
    build: BuildFileFacts,
    found: tuple[ComposeFile, ComposeService, tuple[str | None, str]] | None,
) -> AgentCapability:
    conf = f"{s.confidence.value} confidence: " if s.confidence is not Confidence.HIGH else ""
    if found is not None:
        cf, svc, (wd, wd_from) = found
        where = Evidence(cf.path, svc.line, f"compose service {svc.name}")
        runner = Runner(COMPOSE_SERVICE, svc.name, (where, *s.evidence), s.confidence,
                        how=s.how, image=svc.image, dockerfile=s.dockerfile)  # fmt: skip
        wd_ev: tuple[Evidence, ...] = ()
        if wd is not None:
            line = svc.line_of("working_dir") if wd_from == "working_dir" else svc.line
            wd_ev = (Evidence(cf.path, line, f"{wd_from}: {wd}"),)
        place = Placement(runner, None, wd, wd_ev, svc, cf.path, None, None)
        label = f"agent service {svc.name} ({conf}{s.how})"
    else:
        df = next((d for d, _c in build.dockerfiles if d.path == s.dockerfile), None)
        where = s.evidence[0]
        runner = Runner(DOCKERFILE, s.dockerfile or UNKNOWN, s.evidence, s.confidence,
                        how=s.how, dockerfile=s.dockerfile)  # fmt: skip
        wd, line = df.effective_workdir(df.final) if df is not None and df.final else (None, None)
        wd_ev = (Evidence(df.path, line, f"WORKDIR {wd}"),) if df is not None and wd else ()
        place = Placement(runner, None, wd, wd_ev, None, None, None, None)
        label = f"agent image ({conf}{s.how})"
    site = AgentSite(SERVICE, s.engine, label, where)
    places = [place]
    agent = AgentCapability(
        id=f"agent-{n}",
        site=site,
        runners=(runner,),
        runner_note="",
        workdir=_workdir(place, build),
        tools=(),
        tools_known=False,
        paths=tuple(service_paths(place)),
        reach=reach(places, (), (runner,)),
        mcp=(),
        secrets=secrets_of(places),
        model=no_model(where),
    )
    return AgentCapability(**{**agent.__dict__, "hazards": hazards(agent)})


def _workdir(place: Placement, build: BuildFileFacts) -> Workdir:
    """The container's working directory and what is there (where the app's agent works on
    a task is the app's own setting: not read)."""
    if place.workdir is None:
        return Workdir(None, UNKNOWN, place.workdir_ev, Confidence.LOW,
                       how="the working directory is not set in the files (the image decides)")  # fmt: skip
    kind, source, holds, ev, how = holds_at(place.workdir, place, build.tree)
    return Workdir(
        place.workdir,
        kind,
        (*place.workdir_ev, *ev),
        Confidence.MEDIUM,
        how=f"the container's working directory; {how}",
        host_source=source,
        holds=holds,
        holds_known=build.tree is not None and bool(ev),
    )

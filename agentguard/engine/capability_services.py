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

import dataclasses
import posixpath
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentguard.engine.capability_k8s import containers_at, k8s_hazards, k8s_runner
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
from agentguard.facts.project import BuildFileFacts
from agentguard.findings import Confidence

if TYPE_CHECKING:  # (annotations only: a project without a compose file reads none)
    from agentguard.facts.compose import ComposeFile, ComposeService
    from agentguard.facts.k8s import K8sContainer


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
        place = service_place(s, build)
        if place is None:
            continue  # (its compose file is not among the facts: nothing to join)
        out.append(_agent(len(drawn) + len(out) + 1, s, build, place))
    return out


def _compose(
    build: BuildFileFacts, path: str | None, name: str | None
) -> tuple[ComposeFile, ComposeService, tuple[str | None, str]] | None:
    for cf, workdirs in build.composes:
        if cf.path != path:
            continue
        for svc in cf.services:
            if svc.name == name:
                return cf, svc, workdirs.get(svc.name, (svc.working_dir, "working_dir"))
    return None


def _compose_place(
    build: BuildFileFacts,
    found: tuple[ComposeFile, ComposeService, tuple[str | None, str]],
    more: tuple[Evidence, ...],
    confidence: Confidence,
    how: str,
    dockerfile: str | None,
) -> Placement:
    cf, svc, (wd, wd_from) = found
    where = Evidence(cf.path, svc.line, f"compose service {svc.name}")
    runner = Runner(COMPOSE_SERVICE, svc.name, (where, *more), confidence,
                    how=how, image=svc.image, dockerfile=dockerfile)  # fmt: skip
    wd_ev: tuple[Evidence, ...] = ()
    if wd is not None:
        line = svc.line_of("working_dir") if wd_from == "working_dir" else svc.line
        wd_ev = (Evidence(cf.path, line, f"{wd_from}: {wd}"),)
    return Placement(runner, None, wd, wd_ev, svc, cf.path, None, None)


def _image_place(build: BuildFileFacts, runner: Runner, dockerfile: str | None) -> Placement:
    df = next((d for d, _c in build.dockerfiles if d.path == dockerfile), None)
    wd, line = df.effective_workdir(df.final) if df is not None and df.final else (None, None)
    wd_ev = (Evidence(df.path, line, f"WORKDIR {wd}"),) if df is not None and wd else ()
    return Placement(runner, None, wd, wd_ev, None, None, None, None)


def _k8s_place(
    build: BuildFileFacts, c: K8sContainer, confidence: Confidence, how: str,
    more: tuple[Evidence, ...], dockerfile: str | None,
) -> Placement:  # fmt: skip
    runner = k8s_runner(c, confidence, how, more, dockerfile)
    if c.working_dir is not None:
        ev = (Evidence(c.path, c.line_of("workingDir"), f"workingDir: {c.working_dir}"),)
        return Placement(runner, None, c.working_dir, ev, None, None, None, None, k8s=c)
    image = _image_place(build, runner, dockerfile)  # (the Dockerfile built here, if any)
    return dataclasses.replace(image, k8s=c)


def service_place(s: AgentService, build: BuildFileFacts) -> Placement | None:
    """The container an agent service is: its compose service, Kubernetes container, or
    the image of its Dockerfile (None: its compose file is not among the facts)."""
    if s.kubernetes is not None:
        return _k8s_place(build, s.kubernetes, s.confidence, s.how, s.evidence, s.dockerfile)
    found = _compose(build, s.compose_path, s.service)
    if found is not None:
        return _compose_place(build, found, s.evidence, s.confidence, s.how, s.dockerfile)
    if s.compose_path is not None:
        return None
    runner = Runner(DOCKERFILE, s.dockerfile or UNKNOWN, s.evidence, s.confidence,
                    how=s.how, dockerfile=s.dockerfile)  # fmt: skip
    return _image_place(build, runner, s.dockerfile)


def command_places(
    path: str, line: int, build: BuildFileFacts | None, k8s: Sequence[K8sContainer]
) -> list[Placement] | None:
    """The containers a command line written in a container file runs in: the agent
    service whose start it is, the compose service or Kubernetes container whose text holds
    it, the image of the Dockerfile it is written in (each service that builds it). None:
    ``path`` is no container file (its file's own placements apply). A compose file copied
    into an image is not the container that runs the commands written in it."""
    if build is not None:
        for s in build.agent_services:
            if any(e.path == path and e.line == line for e in s.evidence):
                place = service_place(s, build)
                return [place] if place is not None else []
        for cf, _wds in build.composes:
            if cf.path == path:
                svc = _service_at(cf, line)
                if svc is None:
                    return []
                found = _compose(build, cf.path, svc.name)
                if found is None:
                    return []
                how = f"its command (line {line}) starts it"
                df = _builds(cf, svc, build)
                return [_compose_place(build, found, (), Confidence.HIGH, how, df)]
        built = _dockerfile_places(path, line, build)
        if built is not None:
            return built
    if not any(c.path == path for c in k8s):
        return None
    how = f"its command (line {line}) starts it"
    return [
        _k8s_place(build or _EMPTY, c, Confidence.HIGH, how, (), None)
        for c in containers_at(k8s, path, line)
    ]  # (a line no container of the manifest holds: none, said so)


_EMPTY = BuildFileFacts((), (), (), (), (), (), None)


def _service_at(cf: ComposeFile, line: int) -> ComposeService | None:
    at = [svc for svc in cf.services if svc.line is not None and svc.line <= line]
    return max(at, key=lambda svc: svc.line or 0) if at else None


def _builds(cf: ComposeFile, svc: ComposeService, build: BuildFileFacts) -> str | None:
    if svc.build_context is None or "://" in svc.build_context:
        return None
    ctx = posixpath.normpath(posixpath.join(posixpath.dirname(cf.path), svc.build_context))
    df = posixpath.normpath(posixpath.join(ctx, svc.build_dockerfile or "Dockerfile"))
    return df if any(d.path == df for d, _c in build.dockerfiles) else None


def _dockerfile_places(path: str, line: int, build: BuildFileFacts) -> list[Placement] | None:
    """A command in a Dockerfile runs in the image it builds: each compose service that
    builds it, else the image itself (None: ``path`` is no Dockerfile of the facts)."""
    if not any(d.path == path for d, _c in build.dockerfiles):
        return None
    out: list[Placement] = []
    how = f"its command is written in {path} (line {line})"
    for cf, _wds in build.composes:
        for svc in cf.services:
            found = _compose(build, cf.path, svc.name)
            if found is not None and _builds(cf, svc, build) == path:
                ev = (Evidence(path, line, "the command"),)
                out.append(_compose_place(build, found, ev, Confidence.MEDIUM, how, path))
    if out:
        return out
    runner = Runner(DOCKERFILE, path, (Evidence(path, line, "the command"),), Confidence.MEDIUM,
                    how=f"the image built from {path}; {how}", dockerfile=path)  # fmt: skip
    return [_image_place(build, runner, path)]


def _agent(n: int, s: AgentService, build: BuildFileFacts, place: Placement) -> AgentCapability:
    conf = f"{s.confidence.value} confidence: " if s.confidence is not Confidence.HIGH else ""
    runner = place.runner
    if place.k8s is not None:
        where = Evidence(place.k8s.path, place.k8s.line, runner.name)
        label = f"agent container {place.k8s.name} of {place.k8s.workload} ({conf}{s.how})"
    elif place.service is not None:
        where = runner.evidence[0]
        label = f"agent service {place.service.name} ({conf}{s.how})"
    else:
        where = s.evidence[0]
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
    return with_hazards(agent, place)


def with_hazards(agent: AgentCapability, place: Placement | None = None) -> AgentCapability:
    """``agent`` with its hazards (and the Kubernetes rules' on its container)."""
    extra = k8s_hazards(place.k8s) if place is not None and place.k8s is not None else ()
    return AgentCapability(**{**agent.__dict__, "hazards": (*hazards(agent), *extra)})


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

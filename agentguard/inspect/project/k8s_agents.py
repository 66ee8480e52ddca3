"""Containers of Kubernetes manifests whose start runs an agent app (facts for the map
only; nothing here judges), recognised as compose agent services are:

- its ``command`` (with its ``args``) starts an agent engine (high): ``claude``, ``codex``,
  ``gemini``, ``aider``, ``openhands`` in command position, through ``sh -c``, ``npx``...;
  ``args`` alone that start one, handed to the image's ENTRYPOINT (medium);
- the ``CMD``/``ENTRYPOINT`` of the Dockerfile that builds its image here (a compose
  service that ``build``s and names that ``image``), where ``command``/``args`` do not
  replace them (medium: Kubernetes' ``command`` replaces the ENTRYPOINT and drops the CMD,
  ``args`` replace the CMD);
- its image is an agent app's published image (medium), or only its name is an agent's
  (low).

An image built elsewhere (a registry's, a CI job's) is not read: what it starts is unknown,
and a container nothing here says anything about is not drawn.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import replace

from agentguard.facts.agent_services import AgentService
from agentguard.facts.capabilities import Evidence
from agentguard.facts.k8s import K8sContainer
from agentguard.facts.project import BuildFileFacts
from agentguard.findings import Confidence
from agentguard.inspect.project.agent_services import (
    dockerfile_starts,
    engines_started,
    from_dockerfile,
    image_engine,
    service_record,
)
from agentguard.inspect.project.k8s_facts import NOT_A_LIST


def _image_key(image: str) -> str:
    """An image reference without its tag or digest (``docker.io/`` dropped)."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    if ":" in last:
        ref = ref[: len(ref) - len(last)] + last.split(":", 1)[0]
    for prefix in ("docker.io/library/", "docker.io/"):
        ref = ref.removeprefix(prefix)
    return ref


def built_here(build: BuildFileFacts | None) -> dict[str, set[str]]:
    """Image name -> the Dockerfiles that build it here: a compose service that both
    ``build``s and names its ``image`` (two Dockerfiles for one name: both kept)."""
    out: dict[str, set[str]] = {}
    if build is None:
        return out
    known = {df.path for df, _ctxs in build.dockerfiles}
    for cf, _workdirs in build.composes:
        for svc in cf.services:
            if not svc.image or "$" in svc.image or svc.build_context is None:
                continue
            if "://" in svc.build_context:
                continue
            base = posixpath.dirname(cf.path)
            context = posixpath.normpath(posixpath.join(base, svc.build_context))
            dockerfile = posixpath.normpath(
                posixpath.join(context, svc.build_dockerfile or "Dockerfile")
            )
            if dockerfile in known:
                out.setdefault(_image_key(svc.image), set()).add(dockerfile)
    return out


def k8s_agent_services(
    containers: Iterable[K8sContainer], build: BuildFileFacts | None
) -> tuple[AgentService, ...]:
    """Every container of the manifests that starts an agent app."""
    images = built_here(build)
    dockerfiles = {df.path: df for df, _ctxs in build.dockerfiles} if build is not None else {}
    out: list[AgentService] = []
    for c in containers:
        found: dict[str, list[tuple[Evidence, Confidence, str]]] = {}
        if c.command is not None and NOT_A_LIST not in c.command:
            words = [*c.command, *(a for a in c.args or () if a != NOT_A_LIST)]
            for engine, text in engines_started(words):
                ev = Evidence(c.path, c.line_of("command"), f"starts {text}")
                found.setdefault(engine, []).append(
                    (ev, Confidence.HIGH, f"its command starts {text}")
                )
        elif c.args is not None and NOT_A_LIST not in c.args:
            for engine, text in engines_started(list(c.args)):
                ev = Evidence(c.path, c.line_of("args"), f"args {text}")
                how = f"its args {text}, handed to the image's ENTRYPOINT (not read here)"
                found.setdefault(engine, []).append((ev, Confidence.MEDIUM, how))
        built = sorted(images.get(_image_key(c.image), ())) if c.image else []
        dockerfile = built[0] if len(built) == 1 else None  # (two: neither is picked)
        df = dockerfiles.get(dockerfile) if dockerfile else None
        if df is not None:
            steps = dockerfile_starts(df, c.command is None, c.command is None and c.args is None)
            for engine, ev in from_dockerfile(df, steps):
                how = f"its image {c.image} is built here from {df.path}, which starts {ev.note} (line {ev.line})"
                found.setdefault(engine, []).append((ev, Confidence.MEDIUM, how))
        named = image_engine(c.image)
        if named is not None:
            engine, conf = named
            what = (
                "an agent app's published image" if conf is Confidence.MEDIUM else "only its name"
            )
            ev = Evidence(c.path, c.line_of("image"), f"image: {c.image}")
            found.setdefault(engine, []).append((ev, conf, f"its image {c.image} ({what})"))
        for engine, items in found.items():
            rec = service_record(engine, items, None, None, dockerfile, c.image, c.line)
            out.append(replace(rec, kubernetes=c))
    return tuple(out)

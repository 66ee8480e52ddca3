"""The capability map's container joins: which Dockerfile copies an agent's file, which
compose service builds (or mounts) it, and what is in the working directory there.

Facts in, records out; no I/O, no gatherer. Two candidates are both returned.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from agentguard.engine.capability_k8s import k8s_holds_at, k8s_paths
from agentguard.facts.build_copies import copied_files
from agentguard.facts.capabilities import (
    COMPOSE_SERVICE,
    DOCKERFILE,
    EMPTY,
    HOST_FOLDER,
    IMAGE_CONTENT,
    PROJECT,
    SUBFOLDER,
    UNKNOWN,
    Evidence,
    PathAccess,
    Runner,
)
from agentguard.facts.host_paths import holds_project, host_path, sensitive_reason, socket_reason
from agentguard.findings import Confidence

if TYPE_CHECKING:  # (annotations only: a project without container files builds none)
    from agentguard.facts.compose import ComposeFile, ComposeService
    from agentguard.facts.dockerfile import CopyStep, DockerfileFacts
    from agentguard.facts.k8s import K8sContainer
    from agentguard.facts.project import BuildFileFacts, DockerIgnore, TreeFacts

T = TypeVar("T")


def _dir(path: str) -> str:
    return posixpath.dirname(path) or "."


def _join(base: str, rel: str) -> str:
    if rel.startswith("/"):
        return posixpath.normpath(rel)
    return posixpath.normpath(posixpath.join(base, rel))


def _below(path: str, folder: str) -> str | None:
    """``path`` relative to ``folder`` ("" = the folder itself), or None."""
    folder = posixpath.normpath(folder)
    path = posixpath.normpath(path)
    if folder in (".", ""):
        return "" if path == "." else path
    if path == folder:
        return ""
    return path[len(folder) + 1 :] if path.startswith(folder + "/") else None


@dataclass(frozen=True)
class Placement:
    """An agent's file in a container: where the file lands (``in_container``), the
    runner, its working directory and where that came from, and the mount or COPY that
    puts the project there."""

    runner: Runner
    in_container: str | None  # the file's path inside (None: not known)
    workdir: str | None
    workdir_ev: tuple[Evidence, ...]
    service: ComposeService | None
    compose_path: str | None
    copy: tuple[str, str, CopyStep, DockerIgnore | None] | None  # (dockerfile, context, step)
    mount_source: str | None  # the host folder (project-relative) mounted over the file
    k8s: K8sContainer | None = None  # a Kubernetes container (``service`` is then None)


def _copies_of(path: str, df: DockerfileFacts, context: str) -> list[tuple[CopyStep, str]]:
    """COPY/ADD steps (from the context, final stage) that take ``path``, with where it lands."""
    final = df.final
    if final is None:
        return []
    out = []
    for step in final.copies:
        if step.from_stage is not None:
            continue
        for src in step.sources:
            if "://" in src or any(c in src for c in "*?["):
                continue
            rel = _below(path, _join(context, src.lstrip("/")))
            if rel is None:
                continue
            dest = step.destination_abs
            if rel == "" and not step.destination.endswith("/"):
                landed = dest
            else:
                landed = posixpath.join(dest, rel or posixpath.basename(path))
            out.append((step, posixpath.normpath(landed)))
    return out


def _service_builds(cf: ComposeFile, svc: ComposeService) -> tuple[str, str] | None:
    if svc.build_context is None or "://" in svc.build_context:
        return None
    context = _join(_dir(cf.path), svc.build_context)
    return _join(context, svc.build_dockerfile or "Dockerfile"), context


def _mount_over(path: str, cf: ComposeFile, svc: ComposeService) -> tuple[str, str] | None:
    """(host source, where the file is inside) for a bind mount that holds ``path``."""
    for v in svc.volumes:
        if v.type != "bind" or v.source is None or v.target is None:
            continue
        src = host_path(v.source) or ""
        if src.startswith(("~", "$", "/")):
            continue
        rel = _below(path, _join(_dir(cf.path), src))
        if rel is not None:
            return v.source, posixpath.normpath(posixpath.join(v.target, rel))
    return None


def placements(path: str, build: BuildFileFacts | None) -> list[Placement]:
    """Every container that holds the agent file ``path``: a compose service that builds
    a Dockerfile which COPYs it or bind-mounts a folder that holds it; a Dockerfile no
    service builds, as its own image. (One file holds many configurations, a test file
    hundreds: each file's placements are worked out once per map.)"""
    if build is None:
        return []
    key = (id(build), path)
    hit = _PLACED.get(key)
    if hit is None:
        hit = _PLACED[key] = _placements(path, build)
    return list(hit)


# (build, path) -> the placements of that file; dropped with the COPY cache below
_PLACED: dict[tuple[int, str], list[Placement]] = {}
# (what, placement) -> what the map reads of one placement (its paths, network, secrets):
# the configurations of one file share their placements, so each is read once per map
_OF_PLACE: dict[tuple[str, int], Any] = {}


def of_place(what: str, place: Placement, read: Callable[[Placement], T]) -> T:
    """``read(place)``, once per map and placement."""
    key = (what, id(place))
    if key not in _OF_PLACE:
        _OF_PLACE[key] = (place, read(place))  # (the placement is kept: its id stays its own)
    got: T = _OF_PLACE[key][1]
    return got


def _placements(path: str, build: BuildFileFacts) -> list[Placement]:
    out: list[Placement] = []
    built: set[str] = set()
    df_by_path = {df.path: (df, ctxs) for df, ctxs in build.dockerfiles}
    for cf, workdirs in build.composes:
        for svc in cf.services:
            wd, wd_from = workdirs.get(svc.name, (svc.working_dir, "working_dir"))
            copy = None
            inside = None
            ev = [Evidence(cf.path, svc.line, f"compose service {svc.name}")]
            how = []
            b = _service_builds(cf, svc)
            if b is not None and b[0] in df_by_path:
                df, ctxs = df_by_path[b[0]]
                built.add(df.path)
                ignore = next((i for c, i in ctxs if c == b[1]), None)
                steps = _copies_of(path, df, b[1])
                if steps:
                    step, inside = steps[-1]
                    copy = (df.path, b[1], step, ignore)
                    ev.append(
                        Evidence(df.path, step.line, f"{step.instruction} to {step.destination}")
                    )
                    how.append(f"builds {df.path}, which copies {path}")
            mount = _mount_over(path, cf, svc)
            if mount is not None:
                inside = mount[1]
                line = next((v.line for v in svc.volumes if v.source == mount[0]), None)
                ev.append(Evidence(cf.path, line, f"mounts {mount[0]}"))
                how.append(f"mounts {mount[0]}, which holds {path}")
            if not how:
                continue
            wd_ev = _workdir_evidence(cf, svc, wd, wd_from, copy)
            runner = Runner(
                kind=COMPOSE_SERVICE,
                name=svc.name,
                evidence=tuple(ev),
                confidence=Confidence.HIGH,
                how="; ".join(how),
                image=svc.image,
                dockerfile=copy[0] if copy else (b[0] if b and b[0] in df_by_path else None),
            )
            out.append(
                Placement(
                    runner, inside, wd, wd_ev, svc, cf.path, copy, mount[0] if mount else None
                )
            )
    for path_df, (df, ctxs) in df_by_path.items():
        if path_df in built:
            continue
        for ctx, ignore in ctxs:
            steps = _copies_of(path, df, ctx)
            if not steps:
                continue
            step, inside = steps[-1]
            wd, wd_line = df.effective_workdir(df.final) if df.final else (None, None)
            runner = Runner(
                kind=DOCKERFILE,
                name=df.path,
                evidence=(
                    Evidence(df.path, step.line, f"{step.instruction} to {step.destination}"),
                ),
                confidence=Confidence.MEDIUM,
                how=f"the image built from {df.path} copies {path} (no compose service builds it)",
                dockerfile=df.path,
            )
            wd_ev = (Evidence(df.path, wd_line, f"WORKDIR {wd}"),) if wd else ()
            out.append(
                Placement(runner, inside, wd, wd_ev, None, None, (df.path, ctx, step, ignore), None)
            )
    return out


def _workdir_evidence(
    cf: ComposeFile,
    svc: ComposeService,
    wd: str | None,
    wd_from: str,
    copy: tuple[str, str, CopyStep, DockerIgnore | None] | None,
) -> tuple[Evidence, ...]:
    if wd is None:
        return ()
    if wd_from == "working_dir":
        return (Evidence(cf.path, svc.line_of("working_dir"), f"working_dir: {wd}"),)
    return (Evidence(cf.path, svc.line, f"{wd_from}: {wd}"),)


def holds_at(
    workdir: str,
    place: Placement,
    tree: TreeFacts | None,
) -> tuple[str, str | None, tuple[str, ...], tuple[Evidence, ...], str]:
    """What is in ``workdir`` inside the container: (kind, host source, what of the
    project is there, evidence, how)."""
    if place.k8s is not None:
        return k8s_holds_at(workdir, place.k8s)
    svc, cf_path = place.service, place.compose_path
    if svc is not None and cf_path is not None:
        for v in svc.volumes:
            if v.target is None or posixpath.normpath(v.target) != posixpath.normpath(workdir):
                continue
            ev = (Evidence(cf_path, v.line, f"{v.short or v.source}"),)
            if v.type != "bind" or v.source is None:
                return (
                    UNKNOWN if v.type == "volume" else EMPTY,
                    v.source,
                    (),
                    ev,
                    f"a {v.type} is mounted there",
                )
            src = host_path(v.source) or v.source
            holds: tuple[str, ...] = ()
            if tree is not None and not src.startswith(("/", "~", "$")):
                base = _join(_dir(cf_path), src)
                holds = tuple(
                    p
                    for p, cat in tree.keep_out
                    if cat != "env-template" and _below(p.rstrip("/"), base) not in (None, "")
                )
            return HOST_FOLDER, v.source, holds, ev, f"host folder {v.source} is mounted there"
    if place.copy is not None:
        df_path, ctx, step, ignore = place.copy
        if posixpath.normpath(step.destination_abs) == posixpath.normpath(workdir):
            holds = _copied(tree, ignore, ctx, step.sources) if tree is not None else ()
            whole = any(posixpath.normpath(s) == "." for s in step.sources)
            return (
                PROJECT if whole else IMAGE_CONTENT,
                None,
                holds,
                (
                    Evidence(
                        df_path,
                        step.line,
                        f"{step.instruction} {' '.join(step.sources)} {step.destination}",
                    ),
                ),
                f"{df_path} copies {'the build context' if whole else ' '.join(step.sources)} there",
            )
    return UNKNOWN, None, (), (), "what is there is not read (the image decides)"


# (tree, .dockerignore, context, sources) -> what of the project a COPY takes: agents in
# one image share it (matching a tree against a .dockerignore is the map's dearest step)
_COPIED: dict[tuple[int, int, str, tuple[str, ...]], tuple[str, ...]] = {}


def _copied(
    tree: TreeFacts, ignore: DockerIgnore | None, ctx: str, sources: tuple[str, ...]
) -> tuple[str, ...]:
    key = (id(tree), id(ignore), ctx, sources)
    hit = _COPIED.get(key)
    if hit is None:
        got: dict[str, list[str]] = {}
        for src in sources:
            got.update(copied_files(tree, ignore, ctx, src))
        hit = _COPIED[key] = tuple(p for paths in got.values() for p in paths)
    return hit


def forget_copied() -> None:
    """Drop the caches (the facts they are keyed on live no longer than one map)."""
    _COPIED.clear()
    _PLACED.clear()
    _OF_PLACE.clear()


def service_paths(place: Placement) -> list[PathAccess]:
    """The mounts of the agent's compose service (or Kubernetes container), credentials
    folders marked."""
    return list(of_place("paths", place, _service_paths))


def _service_paths(place: Placement) -> list[PathAccess]:
    svc, cf_path = place.service, place.compose_path
    out: list[PathAccess] = []
    if place.k8s is not None:
        return k8s_paths(place.k8s)
    if place.copy is not None:
        df_path, _ctx, step, _ign = place.copy
        out.append(
            PathAccess(
                "copy",
                " ".join(step.sources),
                step.destination_abs,
                None,
                (Evidence(df_path, step.line, step.instruction),),
                Confidence.HIGH,
            )
        )
    if svc is None or cf_path is None:
        return out
    for v in svc.volumes:
        src = host_path(v.source)
        sensitive = socket_reason(src) or sensitive_reason(src)
        if sensitive is None and v.type == "bind" and holds_project(v.source):
            sensitive = None
        out.append(
            PathAccess(
                v.type,
                v.source,
                v.target,
                None if v.read_only is None else not v.read_only,
                (Evidence(cf_path, v.line, v.short or f"{v.source}:{v.target}"),),
                Confidence.HIGH if v.read_only is not None else Confidence.LOW,
                sensitive,
            )
        )
    return out


def project_holds(tree: TreeFacts | None) -> tuple[tuple[str, ...], bool]:
    """What of the project's root a reviewer would keep from an agent (docs, plans...)."""
    if tree is None:
        return (), False
    return tuple(p for p, cat in tree.keep_out if cat != "env-template"), True


def subfolder_kind(sub: str) -> str:
    return PROJECT if sub in ("", ".") else SUBFOLDER

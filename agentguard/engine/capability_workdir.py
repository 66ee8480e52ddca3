"""The capability map's working directory of an agent: its ``cwd`` (unset: the process's
directory) placed in each container that holds its file, or in the checkout, and what is
there. Facts in, records out; no I/O, no gatherer, no rule. Two containers that disagree
make it unknown, never the first."""

from __future__ import annotations

import dataclasses
import posixpath
from typing import Any

from agentguard.engine.capability_config import cwd_reading
from agentguard.engine.capability_runs import Placement, holds_at, project_holds
from agentguard.facts.agents import AgentConfig, ProjectFacts
from agentguard.facts.capabilities import (
    IMAGE,
    IMAGE_CONTENT,
    PROJECT,
    SUBFOLDER,
    UNKNOWN,
    Evidence,
    Runner,
    Workdir,
)
from agentguard.facts.project import BuildFileFacts
from agentguard.facts.values import PathSym, Unknown, alternatives, describe
from agentguard.findings import Confidence


def workdir_of(
    cfg: AgentConfig | None,
    path: str,
    places: list[Placement],
    facts: ProjectFacts,
    build: BuildFileFacts | None,
) -> Workdir:
    """The working directory of the agent in ``path`` (``cfg``: its configuration, whose
    ``cwd`` reading the rules read from ``Workdir.cwd``)."""
    wd = _workdir(cfg, path, places, facts, build)
    return wd if cfg is None else with_cwd(wd, cfg, facts)


def with_cwd(wd: Workdir, cfg: AgentConfig, facts: ProjectFacts) -> Workdir:
    """``wd`` with the reading of ``cfg``'s ``cwd`` (AG210, AG211 and AG305 read it)."""
    return dataclasses.replace(wd, cwd=cwd_reading(cfg, facts.workdir))


def _cwd_value(cfg: AgentConfig | None) -> tuple[Any, Evidence | None, bool]:
    """(cwd value, its evidence, set): unset reads as the process's directory."""
    if cfg is None:
        return PathSym("process-cwd"), None, False
    opt = cfg.option("cwd")
    if opt is None:
        return PathSym("process-cwd"), Evidence(cfg.path, cfg.line, "`cwd` not set"), False
    return opt.value, Evidence(cfg.path, opt.line, f"cwd = {describe(opt.value)}"), True


def _in_container(value: Any, place: Placement) -> str | None:
    """The container path a cwd value names, for the file placed at ``place``."""
    if isinstance(value, str):
        if value.startswith("/"):
            return posixpath.normpath(value)
        return posixpath.normpath(posixpath.join(place.workdir, value)) if place.workdir else None
    if isinstance(value, PathSym):
        if value.base == "process-cwd":
            base = place.workdir
        elif value.base in ("source-dir", "source-file") and place.in_container:
            base = posixpath.dirname(place.in_container)
            for _ in range(value.up):
                base = posixpath.dirname(base)
        else:
            return None
        if base is None:
            return None
        return posixpath.normpath(posixpath.join(base, value.sub)) if value.sub else base
    return None


def _project_rel(value: Any, path: str) -> str | None:
    """The project-relative folder a cwd value names when no container is joined."""
    if isinstance(value, str) and not value.startswith("/"):
        return posixpath.normpath(value)
    if isinstance(value, PathSym) and value.base in ("source-dir", "source-file"):
        base = posixpath.dirname(path) or "."
        for _ in range(value.up):
            base = posixpath.dirname(base) or "."
        return posixpath.normpath(posixpath.join(base, value.sub))
    return None


def _workdir(
    cfg: AgentConfig | None,
    path: str,
    places: list[Placement],
    facts: ProjectFacts,
    build: BuildFileFacts | None,
) -> Workdir:
    value, cwd_ev, was_set = _cwd_value(cfg)
    ev0 = (cwd_ev,) if cwd_ev else ()
    alts = alternatives(value)
    if any(isinstance(a, Unknown) for a in alts) or len(alts) != 1:
        return Workdir(None, UNKNOWN, ev0, Confidence.LOW, how=f"cwd is {describe(value)}")
    tree = build.tree if build is not None else None
    if facts.workdir is not None:  # an image's files
        wd = _in_container(
            value,
            Placement(
                Runner(IMAGE, "", (), Confidence.HIGH),
                path,
                facts.workdir,
                (),
                None,
                None,
                None,
                None,
            ),
        )
        return Workdir(
            wd, IMAGE_CONTENT if wd else UNKNOWN, ev0, Confidence.MEDIUM, how="the image's files"
        )
    if places:
        seen = []
        for place in places:
            wd = _in_container(value, place)
            if wd is None:
                seen.append(
                    Workdir(
                        None,
                        UNKNOWN,
                        (*ev0, *place.workdir_ev),
                        Confidence.LOW,
                        how=f"{place.runner.name}: the working directory is not set "
                        "in the files (the image decides)",
                    )
                )
                continue
            kind, source, holds, ev, how = holds_at(wd, place, tree)
            seen.append(
                Workdir(
                    wd,
                    kind,
                    (*ev0, *place.workdir_ev, *ev),
                    Confidence.HIGH if was_set else Confidence.MEDIUM,
                    how=how,
                    host_source=source,
                    holds=holds,
                    holds_known=tree is not None,
                )
            )
        if len({(w.path, w.holds_kind, w.host_source) for w in seen}) == 1:
            return seen[0]
        return Workdir(
            None,
            UNKNOWN,
            tuple(e for w in seen for e in w.evidence),
            Confidence.LOW,
            how="the containers that hold it differ: "
            + "; ".join(f"{w.path or 'unknown'} ({w.holds_kind})" for w in seen),
        )
    rel = _project_rel(value, path)
    if isinstance(value, PathSym) and value.base == "process-cwd":
        holds, known = project_holds(tree)
        return Workdir(
            ".",
            PROJECT,
            ev0,
            Confidence.LOW if not was_set else Confidence.MEDIUM,
            how="the process's working directory: usually the checkout",
            holds=holds,
            holds_known=known,
        )
    if rel is not None:
        kind = PROJECT if rel == "." else SUBFOLDER
        holds, known = project_holds(tree) if rel == "." else ((), False)
        return Workdir(
            rel,
            kind,
            ev0,
            Confidence.MEDIUM,
            how="relative to the process's directory"
            if isinstance(value, str)
            else "the source file's folder",
            holds=holds,
            holds_known=known,
        )
    if isinstance(value, str):
        return Workdir(
            value,
            UNKNOWN,
            ev0,
            Confidence.MEDIUM,
            how="a folder of the machine that runs it (not in the project)",
        )
    return Workdir(None, UNKNOWN, ev0, Confidence.LOW, how=f"cwd is {describe(value)}")

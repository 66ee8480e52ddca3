"""``check --base REF``: gather the base revision as the head was gathered (the head's
configuration: CI's, by the usual trust rules; the base's own files configure nothing)
and compare: the findings the change adds and resolves, the locks' delta, and the growth
the policy's ``fail-on-growth`` names."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from agentguard.config import Config
from agentguard.delta.capabilities import capability_delta
from agentguard.delta.compare import Delta, finding_delta, growth_of
from agentguard.delta.locks import LockDelta, lock_delta
from agentguard.delta.tools import snapshot_edits
from agentguard.facts.capabilities import CapabilityMap
from agentguard.facts.mcp_tools import ToolsCompared, ToolsDropped
from agentguard.findings import Finding, JSONValue, Severity, Source
from agentguard.inspect.git_base import read_base
from agentguard.policy import apply_policy
from agentguard.scratch import make as make_scratch
from agentguard.scratch import remove as remove_scratch

FolderSteps = Callable[[Path], tuple[list[Finding], list[Source], list[CapabilityMap]]]


class _Step(Protocol):
    @property
    def findings(self) -> tuple[Finding, ...]: ...


@dataclass(frozen=True)
class DeltaResult:
    findings: tuple[Finding, ...]  # what the report shows: the new ones (all, uncompared)
    sources: tuple[Source, ...]
    facts: dict[str, JSONValue]
    notes: tuple[str, ...]
    growth: bool  # the gate fails on growth the policy named


GROWTH_NOT_TRUSTED = (
    "delta: `fail-on-growth` in the project's own configuration is not honoured (a pull "
    "request could remove it); put it in a file given with --config"
)


def _renamed(src: Source, folder: Path, ref: str) -> Source:
    """A base step's source, named by the ref instead of the private folder."""
    name = src.name.replace(str(folder), f"{ref}:").replace(":/", ":")
    return dataclasses.replace(src, kind=f"base {src.kind}", name=name)


@dataclass(frozen=True)
class BaseSide:
    """What the base revision gave: picklable (it may be gathered in a forked child)."""

    ref: str
    commit: str | None
    compared: bool
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    locks: tuple[LockDelta, ...] = ()
    maps: tuple[CapabilityMap, ...] = ()
    # the tools/list snapshots the change re-records or drops (AG146), and why not known
    tools_edits: tuple[ToolsCompared, ...] = ()
    tools_dropped: tuple[ToolsDropped, ...] = ()
    tools_sources: tuple[Source, ...] = ()


def gather_base(ref: str, project: Path, config: Config, folder_steps: FolderSteps) -> BaseSide:
    """Read ``ref`` into a private folder, run ``folder_steps`` on it with ``config`` (the
    head's), compare its locks with the head's, and remove the folder. Never raises: a
    failure is a failed ``base`` source."""
    scratch = make_scratch("agentguard-base-")
    try:
        tree = read_base(project, ref, scratch)
        if tree.folder is None:
            return BaseSide(ref, tree.commit, False, sources=tree.sources)
        found, sources, maps = folder_steps(tree.folder)
        # (the base's inline comments suppress nothing: matching is by fingerprint anyway)
        plain = dataclasses.replace(config, inline_ignores=False)
        base = apply_policy(found, plain, root=tree.folder).findings
        renamed = (*tree.sources, *(_renamed(s, tree.folder, ref) for s in sources))
        locks = lock_delta(tree.folder, project)
        edits, dropped, why = snapshot_edits(tree.folder, project, ref)
        return BaseSide(ref, tree.commit, True, tuple(base), renamed, locks, tuple(maps),
                        edits, dropped, why)  # fmt: skip
    except Exception as exc:  # a crash is a failed source, never "no change"
        failed = Source.failed(
            "base",
            ref,
            f"agentguard failed reading the base: {type(exc).__name__}: {exc}",
            error_code="internal-error",
            retryable=False,
        )
        return BaseSide(ref, None, False, sources=(failed,))
    finally:
        remove_scratch(scratch)


def base_delta(
    side: BaseSide,
    config: Config,
    head: Sequence[Finding],
    steps: Sequence[tuple[str, _Step]],
    head_maps: Sequence[CapabilityMap],
) -> DeltaResult:
    """Compare the base's ``side`` with ``head`` (the head's findings, configuration
    applied)."""
    fail_on = config.fail_on or Severity.HIGH
    not_compared = tuple(n for n, s in steps if n.startswith(("image:", "smoke")) and s.findings)
    notes: list[str] = []
    if not_compared:
        notes.append(
            "delta: the findings of "
            + ", ".join(not_compared)
            + " have no base to compare with (the base is not built or run): all are shown"
        )
    if config.fail_on_growth and not config.growth_trusted:
        notes.append(GROWTH_NOT_TRUSTED)
    if not side.compared:
        delta = Delta(side.ref, side.commit, False, None, not_compared=not_compared)
        notes.append(
            f"delta: the base {side.ref} could not be read: nothing is known to be new, "
            "every finding is shown"
        )
        return DeltaResult(tuple(head), side.sources, delta.to_json(fail_on), tuple(notes), False)
    kinds = config.fail_on_growth if config.growth_trusted else ()
    agents = capability_delta(side.maps, head_maps)
    growth = growth_of(side.locks, agents, kinds)
    found = finding_delta(head, side.findings)
    delta = Delta(side.ref, side.commit, True, found, side.locks, growth, agents, not_compared)
    return DeltaResult(found.new, side.sources, delta.to_json(fail_on), tuple(notes), bool(growth))

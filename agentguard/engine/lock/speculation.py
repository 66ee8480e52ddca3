"""The analysis of a re-lock made beside the resolver: the previous pins are analysed while
the resolver runs, and that analysis is used when the resolver returns exactly those pins
(:mod:`agentguard.engine.lock.requirements_flow`); the AG1xx rules over an analysed graph."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard import redact
from agentguard.findings import Finding, Severity
from agentguard.lock.previous import Previous, previous_pins

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.facts.fixes import FixGroup, FixSetCheck, GroupKey
    from agentguard.lock.analysis import Analysis
    from agentguard.lock.graph import LockedPackage, LockGraph
    from agentguard.lock.index import IndexClient
    from agentguard.lock.inputs import ProjectInputs
    from agentguard.lock.lockfile import PylockPackages, QuickPrevious


@dataclass(frozen=True)
class Speculated:
    analysis: Analysis
    graph: LockGraph
    findings: tuple[Finding, ...]
    crossings: tuple[Finding, ...]
    # the packages of the pylock.toml these pins make, from the index read (None: made
    # once the resolver returns, as on a first lock)
    pylock: PylockPackages | None = None


def outcome(future: Future[Speculated]) -> Speculated | None:
    """The analysis made beside the resolver, or None when it did not finish cleanly (then
    the pins are analysed again, where any error is reported the usual way)."""
    try:
        return future.result()
    except Exception:
        return None


def speculate(
    previous: QuickPrevious,
    inputs: ProjectInputs,
    client: IndexClient,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
    check: Callable[[Mapping[GroupKey, FixGroup]], FixSetCheck] | None = None,
) -> Speculated:
    from agentguard.lock.analysis import analyse

    analysis = analyse(previous.pins, inputs.requirement_lines(), client, watched=policy.watched)
    graph, findings, crossings = rules(
        analysis, previous, policy, allow_major, inputs.requires_python, check
    )
    # The report is redacted on the main thread once uv returns; each text's redaction is
    # cached (agentguard.redact), so doing it here first takes most of that off the clock.
    redact.scrub((findings, analysis.sources))
    return Speculated(
        analysis, graph, tuple(findings), tuple(crossings), _pylock(analysis, graph, client)
    )


def _pylock(analysis: Analysis, graph: LockGraph, client: IndexClient) -> PylockPackages | None:
    """The lock's packages table, made while the resolver still runs (about 30 ms of the
    time after it, otherwise): for the index the resolver names when it reads this client's
    (the report takes it only then, :func:`agentguard.lock.lockfile.build_pylock`)."""
    from agentguard.lock.lockfile import pylock_packages
    from agentguard.lock.urls import clean_url

    urls = client.index_urls_given
    try:
        return pylock_packages(graph, analysis.files, clean_url(urls[0]) if urls else None)
    except Exception:  # made again after the resolver, where a failure is reported
        return None


def rules(
    analysis: Analysis,
    previous: Previous | None,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
    requires_python: str | None,
    check: Callable[[Mapping[GroupKey, FixGroup]], FixSetCheck] | None = None,
) -> tuple[LockGraph, list[Finding], list[Finding]]:
    """The graph with each edge's admitted majors, all AG1xx findings, and the crossings.
    ``check``: resolves AG101's first fixes as one set (:mod:`agentguard.lock.fix_check`);
    None: not checked (each fix is still its group's)."""
    from agentguard.rules.deps import check_unknown_metadata
    from agentguard.rules.deps_fix_plan import fix_groups
    from agentguard.rules.deps_gate import check_major_crossings
    from agentguard.rules.deps_spans import check_major_spans

    graph = analysis.graph
    crossings: list[Finding] = []
    if previous is not None:
        crossings = check_major_crossings(
            previous_pins(previous), graph, allow_major, requires_python
        )
    refused = any(f.severity > Severity.INFO for f in crossings) or any(
        s.status.value == "failed" for s in analysis.sources
    )
    kept = previous_pins(previous) if refused and previous is not None else None
    groups = fix_groups(graph)
    fixes = check(groups) if check is not None and groups else None
    findings = [
        *check_major_spans(graph, policy, kept=kept, fixes=fixes, groups=groups),
        *check_unknown_metadata(graph),
        *crossings,
    ]
    return graph, findings, crossings


def same_pins(a: tuple[LockedPackage, ...], b: tuple[LockedPackage, ...]) -> bool:
    """The same lock entries, whatever order the resolver printed them in (it orders a
    forked package's entries by marker, the lock file by version)."""
    return sorted(a, key=_pin_key) == sorted(b, key=_pin_key)


def _pin_key(p: LockedPackage) -> tuple[str, str, str, tuple[str, ...]]:
    return (p.name, p.version, p.marker or "", p.hashes)

"""The report of `agentguard lock` on a requirements project, once the pins are analysed:
the young releases (AG106), the provenance and facts, the notes, and the lock files written
(or why not). Also the report of a run that stopped before that, and the command shown."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentguard.findings import Finding, JSONValue, Report, Severity, Source
from agentguard.lock.deadline import DEADLINE_CODE
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK
from agentguard.lock.pins import pins_by_name
from agentguard.lock.previous import Previous, previous_digest, same_lock
from agentguard.lock.urls import clean_url
from agentguard.provenance import make_report, now_utc

# (imported with the report, not after the resolver returns: the run's last milliseconds
# are wall time, while the resolver runs they are not)
from agentguard.rules.deps_age import check_young_releases
from agentguard.rules.deps_cover import check_environment_cover

if TYPE_CHECKING:
    from agentguard.lock.analysis import Analysis
    from agentguard.lock.backend import Resolution
    from agentguard.lock.deadline import Deadline
    from agentguard.lock.graph import LockGraph
    from agentguard.lock.inputs import ProjectInputs
    from agentguard.lock.lockfile import PylockPackages
    from agentguard.lock.start import LockOptions, Settings


def command_line(opts: LockOptions) -> str:
    """The command as run, with the flags that change what a re-lock may move."""
    parts = ["lock", *(["--check"] if opts.check else []), *(["--upgrade"] if opts.upgrade else [])]
    parts += [f"--upgrade-package {p}" for p in opts.upgrade_packages]
    return " ".join(parts)


def failed_report(
    inputs: ProjectInputs,
    *sources: Source,
    notes: tuple[str, ...] = (),
    command: str = "lock",
) -> Report:
    return make_report(
        command,
        [],
        sources,
        target=str(inputs.root),
        inputs={"input_hash": inputs.input_hash, "input_source": inputs.source},
        notes=(*notes, "No lock file was written or changed."),
        status=None if "--check" in command else "not-written",
    )


def young_releases(
    graph: LockGraph, analysis: Analysis, min_release_age: str | None
) -> tuple[list[Finding], int]:
    """AG106 from the upload times of the locked files (the earliest file of a release)."""
    import datetime as dt

    uploaded: dict[tuple[str, str], str | None] = {}
    for key, files in analysis.files.items():
        times = sorted(f.upload_time for f in files if f.upload_time)
        uploaded[key] = times[0] if times else None
    return check_young_releases(graph, uploaded, dt.datetime.now(dt.timezone.utc), min_release_age)


def assemble(
    opts: LockOptions,
    inputs: ProjectInputs,
    settings: Settings,
    deadline: Deadline,
    resolution: Resolution,
    analysis: Analysis,
    graph: LockGraph,
    findings: list[Finding],
    crossings: list[Finding],
    sources: list[Source],
    previous: Previous | None,
    pylock: PylockPackages | None = None,
) -> Report:
    """The report, with the lock files written when nothing blocks and no source failed.
    ``pylock``: the lock's packages made ahead (taken when they are of ``graph``)."""
    from agentguard.lock.lockfile import (
        build_pylock,
        env_marker,
        render_pylock,
        render_requirements,
        write_atomically,
    )

    root = inputs.root
    sources.extend(analysis.sources)
    blocking = [f for f in crossings if f.severity > Severity.INFO]
    young, unknown_times = young_releases(graph, analysis, settings.min_release_age)
    findings += young
    findings += check_environment_cover(
        resolution.universal, resolution.environment, inputs.requires_python, PYLOCK
    )

    provenance: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "backend": resolution.backend,
        "index_urls": list(resolution.index_urls),
    }
    notes: list[str] = []
    by_name = pins_by_name(graph.packages)
    names = sorted(by_name)
    facts: dict[str, JSONValue] = {
        "packages": len(names),
        "pins": len(graph.packages),  # lock entries: a forked package has one per fork
        "forked_packages": sorted(n for n, ps in by_name.items() if len(ps) > 1),
        "edges": len(graph.edges),
        "releases_younger_than_7_days": len(young),
        "upload_times_unknown": unknown_times,  # their age is unknown, not counted as old
        "only_binary": settings.only_binary,
        "min_release_age": settings.min_release_age,
    }
    cooldown = settings.cooldown_note()
    if cooldown:
        notes.append(cooldown)
    incomplete = any(s.status.value == "failed" for s in sources)
    status = "not-written"
    if blocking:
        status = "refused"
        notes.append(
            f"A re-lock would cross a major ({', '.join(str(f.evidence['package']) for f in blocking)}); "
            "both lock files were left untouched."
        )
    elif incomplete:
        late = [s.name for s in sources if s.error_code == DEADLINE_CODE]
        if late:
            notes.append(
                f"{deadline.describe().capitalize()}; out of time: {', '.join(late[:10])}"
                + (f" and {len(late) - 10} more" if len(late) > 10 else "")
                + "."
            )
        notes.append(
            "A source failed, so the analysis is incomplete; no lock file was written or changed."
        )
    else:
        resolved_at = now_utc()
        data = build_pylock(
            inputs,
            resolution,
            graph,
            analysis.files,
            resolved_at,
            settings.tool_table(),
            built=pylock,
        )
        index_line = clean_url(opts.index_url) if opts.index_url and not opts.no_index else None
        requirements_text = render_requirements(
            resolution.pins,
            inputs,
            index_line,
            opts.find_links,
            lock_digest=data["tool"]["agentguard"]["lock-digest"],
            index_urls=tuple(resolution.index_urls),
            environment=env_marker(resolution),
        )
        if previous is not None and same_lock(previous, requirements_text):
            notes.append("The lock is up to date; files left untouched.")
            status = "up-to-date"
        else:
            texts = {
                root / REQUIREMENTS_LOCK: requirements_text,
                root / PYLOCK: render_pylock(data),
            }
            try:
                write_atomically(texts)
            except OSError as exc:
                sources.append(
                    Source.failed(
                        "lockfile",
                        str(root),
                        f"cannot write the lock files: {exc}",
                        error_code="lockfile-write-failed",
                        retryable=False,
                        remedy="Free disk space or fix the folder's permissions.",
                    )
                )
                notes.append("Writing failed; the previous lock files are unchanged.")
            else:
                status = "written"
                notes.append(
                    f"Wrote {REQUIREMENTS_LOCK} and {PYLOCK} ({len(names)} packages, "
                    f"{len(graph.packages)} pins)."
                )
        # The digest both files carry in their headers (what the lock says, not when).
        provenance["lock_digest"] = data["tool"]["agentguard"]["lock-digest"]
    if "lock_digest" not in provenance and previous is not None:
        provenance["lock_digest"] = previous_digest(previous)  # the files as they stand
    from agentguard.lock.sites import requirement_sites

    facts["requirement_sites"] = requirement_sites(inputs)  # where SARIF places AG101/AG102
    return make_report(
        command_line(opts),
        findings,
        sources,
        target=str(root),
        inputs=provenance,
        facts=facts,
        notes=notes,
        status=status,
    )

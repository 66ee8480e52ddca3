"""``agentguard check``: the gate before deploy. One report and one exit code for a project.

Steps, each recorded with its sources: ``lock --check`` (offline: lock files against the
inputs), the project-folder rules (agent configuration, Dockerfiles, compose files), and
the inspection of each image named with ``--image`` or in the compose file(s). Then the
configuration (policy, ignores, inline comments) and the baseline are applied.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from agentguard.baseline import Baseline, entry_for, read_baseline, write_baseline
from agentguard.check_steps import (
    Progress,
    StepResult,
    guarded,
    image_step,
    lock_step,
    project_step,
    same_finding_once,
)
from agentguard.config import Config, load_target_config
from agentguard.engine import UsageError, make_report
from agentguard.facts.capabilities import CapabilityMap
from agentguard.facts.capabilities_json import map_json
from agentguard.findings import Finding, JSONValue, Report, Severity, Source
from agentguard.lock.deadline import Deadline
from agentguard.policy import apply_policy

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass


@dataclass(frozen=True)
class CheckOptions:
    project: Path
    images: tuple[str, ...] = ()
    images_from_compose: bool = False
    config_file: Path | None = None
    project_config: bool = True  # False: --no-project-config
    inline_ignores: bool = True  # False: --no-inline-ignores
    baseline: Path | None = None
    write_baseline: Path | None = None
    smoke: bool | None = None  # --smoke / --no-smoke (None: the configuration decides)
    smoke_timeout: float | None = None
    base: str | None = None  # --base REF: report what the change adds and removes
    timeout: float | None = None  # --timeout: the run's (see index_deadline)


@dataclass(frozen=True)
class CheckResult:
    report: Report
    config: Config
    growth: bool = False  # --base: the change grew what `fail-on-growth` names (exit 1)

    @property
    def fail_on(self) -> Severity:
        return self.config.fail_on or Severity.HIGH


def _smoke(
    project: Path,
    opts: CheckOptions,
    config: Config,
    steps: list[tuple[str, StepResult]],
    progress: Progress,
    deadline: Deadline,
) -> None:
    """The smoke run (``--smoke``, or ``smoke = true`` from ``--config``) as a step, ended
    by its own budget or by ``deadline`` (the run's share for it), whichever comes first."""
    from agentguard.smoke.step import wanted

    run, note = wanted(opts.smoke, config)
    if note:
        steps.append(("smoke", StepResult(notes=(note,))))
    if not run:
        return
    from agentguard.smoke.run import DEFAULT_TIMEOUT, SmokeOptions
    from agentguard.smoke.step import smoke_step

    smoke = SmokeOptions(
        timeout=opts.smoke_timeout or DEFAULT_TIMEOUT, exclude=config.exclude, deadline=deadline
    )
    prior = steps[0][1].findings

    def step() -> StepResult:
        done = smoke_step(project, smoke, prior)
        return StepResult(done.findings, done.sources, done.facts, done.notes)

    progress("smoke run: installing the lock and starting the agent stack")
    steps.append(("smoke", guarded("smoke", str(project), step)))


def _images(opts: CheckOptions) -> tuple[list[str], list[Source]]:
    images = list(dict.fromkeys(opts.images))
    sources: list[Source] = []
    if opts.images_from_compose:
        from agentguard.inspect.compose_images import compose_images

        found = compose_images(opts.project)
        sources.extend(found.sources)
        images.extend(i for i in found.images if i not in images)
    return images, sources


def _something_to_check(
    project: Path, steps: list[tuple[str, StepResult]], images: list[str]
) -> None:
    """A folder with no file any step reads (empty, or the wrong folder) is a usage error:
    a gate that looked at nothing never passes."""
    if images:
        return
    lock = dict(steps).get("lock")
    scanned = dict(steps).get("project")
    if lock is None or scanned is None or lock.findings or scanned.findings:
        return
    if any(src.kind != "lock" or src.status.value != "skipped" for src in lock.sources):
        return
    if scanned.facts.get("files_read") == 0 and not any(
        src.status.value == "failed" for src in scanned.sources
    ):
        raise UsageError(
            f"{project}: nothing to check: no agent code or settings, Dockerfile, compose "
            "file, devcontainer or dependency declaration in it (is it the right folder?)"
        )


# The lock step's index reads and the smoke run end at this share of the run's --timeout, so
# that a hanging index (or server, or probe) is a failed source of that step and the other
# steps are still reported, where the run's own timer would report nothing (it still bounds
# everything else).
INDEX_SHARE = 0.8


def index_deadline(timeout: float | None) -> Deadline:
    from agentguard.watchdog import DEFAULT_TIMEOUT

    whole = DEFAULT_TIMEOUT if timeout is None else timeout
    return Deadline.start(INDEX_SHARE * whole, whole=whole)


def _base_steps(
    config: Config, deadline: Deadline
) -> Callable[[Path], tuple[list[Finding], list[Source], list[CapabilityMap]]]:
    """The folder steps (lock --check, the project rules) for the base's copy, with the
    head's configuration: the base's own configuration is never read."""

    def run(folder: Path) -> tuple[list[Finding], list[Source], list[CapabilityMap]]:
        steps = [
            (
                "lock",
                guarded("lock", str(folder), partial(lock_step, folder, config.deps, deadline)),
            ),
            (
                "project",
                guarded(
                    "project",
                    str(folder),
                    partial(project_step, folder, config.exclude, contexts=config.contexts),
                ),
            ),
        ]
        sources = [src for _, s in steps for src in s.sources]
        return same_finding_once(steps), sources, [m for _, s in steps for m in s.maps]

    return run


def run_check(opts: CheckOptions, progress: Progress = lambda _m: None) -> CheckResult:
    project = opts.project
    if not project.is_dir():
        raise UsageError(f"{project}: not a folder")
    config, config_sources = load_target_config(
        project,
        config_file=opts.config_file,
        project_config=opts.project_config,
        inline_ignores=opts.inline_ignores,
    )
    baseline = read_baseline(opts.baseline) if opts.baseline else None

    locked: list[StepResult] = []
    deadline = index_deadline(opts.timeout)

    def lock_once() -> None:
        if not locked:
            progress("checking the lock files")
            step = partial(lock_step, project, config.deps, deadline)
            locked.append(guarded("lock", str(project), step))

    # The lock step runs beside the scan (while forked children read a large folder), or
    # before it; once the scan has ended, at the latest. Its result is reported first.
    progress("scanning the project folder")
    scan = partial(
        project_step, project, config.exclude, beside=lock_once, contexts=config.contexts
    )
    if opts.base is None:
        scanned = guarded("project", str(project), scan)
    else:  # the head, then the base: a file the change left alone is parsed once
        from agentguard.delta.run import gather_base
        from agentguard.inspect.project.scan import outcomes_shared

        with outcomes_shared():
            scanned = guarded("project", str(project), scan)
            progress(f"reading and scanning the base revision {opts.base}")
            side = gather_base(opts.base, project, config, _base_steps(config, deadline))
    lock_once()
    steps: list[tuple[str, StepResult]] = [("lock", locked[0]), ("project", scanned)]
    _smoke(project, opts, config, steps, progress, deadline)
    images, image_sources = _images(opts)
    _something_to_check(project, steps, images)
    steps.append(("compose", StepResult(sources=tuple(image_sources))))
    for i, ref in enumerate(images, 1):
        progress(f"inspecting image {i}/{len(images)}: {ref}")
        inspect = partial(image_step, ref, project=project, config=config, progress=progress)
        steps.append((f"image:{ref}", guarded("image", ref, inspect)))

    if opts.base is not None and side.compared:  # the snapshots the change re-records
        from agentguard.engine import run_snapshot_edit_rules

        edited = run_snapshot_edit_rules(side.tools_edits, side.tools_dropped)
        steps.append(("delta", StepResult(tuple(edited), side.tools_sources)))
    findings = same_finding_once(steps)
    notes = [*config.notes, *(n for _, s in steps for n in s.notes)]
    if opts.write_baseline is not None:
        applied = apply_policy(findings, config, root=project)
        accepted = [f for f in applied.findings if f.suppressed is None]
        count = write_baseline(opts.write_baseline, accepted)
        notes.append(f"baseline written to {opts.write_baseline}: {count} finding(s)")
        baseline = Baseline(str(opts.write_baseline), tuple(entry_for(f) for f in accepted))
    applied = apply_policy(findings, config, root=project, baseline=baseline)
    shown, growth, delta_sources = list(applied.findings), False, []
    if opts.base is not None:
        from agentguard.delta.run import base_delta

        done = base_delta(side, config, applied.findings, steps, scanned.maps)
        shown, growth, delta_sources = list(done.findings), done.growth, list(done.sources)
        notes.extend(done.notes)
    facts: dict[str, JSONValue] = {
        "config": {
            "files": list(config.files),
            "policy": config.policy,
            "fail_on": (config.fail_on or Severity.HIGH).value,
        },
        "steps": {name: dict(s.facts) for name, s in steps if s.facts},
    }
    if opts.base is not None:
        facts["delta"] = done.facts
    report = make_report(
        "check",
        shown,
        [
            *config_sources,
            *(src for _, s in steps for src in s.sources),
            *applied.sources,
            *delta_sources,
        ],
        target=str(project),
        inputs=_inputs(opts, images),
        facts=facts,
        notes=[*notes, *applied.notes],
        configuration=applied.trace,
        agent_map=map_json(tuple(m for _, s in steps for m in s.maps)),
    )
    return CheckResult(report, config, growth)


def _inputs(opts: CheckOptions, images: Iterable[str]) -> dict[str, JSONValue]:
    out: dict[str, JSONValue] = {}
    if images:
        out["images"] = list(images)
    if opts.baseline:
        out["baseline"] = str(opts.baseline)
    if opts.base is not None:
        out["base"] = opts.base
    return out

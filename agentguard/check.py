"""``agentguard check``: the gate before deploy. One report and one exit code for a project.

Steps, each recorded with its sources: ``lock --check`` (offline: lock files against the
inputs), the project-folder rules (agent configuration, Dockerfiles, compose files), and
the inspection of each image named with ``--image`` or in the compose file(s). Then the
configuration (policy, ignores, inline comments) and the baseline are applied.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from agentguard import safeio
from agentguard.baseline import Baseline, entry_for, read_baseline, write_baseline
from agentguard.config import Config, DepsPolicy, load_target_config
from agentguard.engine import UsageError, make_report
from agentguard.facts.capabilities import CapabilityMap
from agentguard.facts.capabilities_json import map_json
from agentguard.findings import Finding, JSONValue, Location, Report, Severity, Source
from agentguard.policy import apply_policy
from agentguard.safeio import MAX_CONFIG_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Progress = Callable[[str], None]


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


@dataclass(frozen=True)
class StepResult:
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    facts: dict[str, JSONValue] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    maps: tuple[CapabilityMap, ...] = ()  # agent capability maps (project, images)


@dataclass(frozen=True)
class CheckResult:
    report: Report
    config: Config
    growth: bool = False  # --base: the change grew what `fail-on-growth` names (exit 1)

    @property
    def fail_on(self) -> Severity:
        return self.config.fail_on or Severity.HIGH


def _declares_dependencies(project: Path) -> bool:
    if (project / "requirements.in").is_file():
        return True
    pyproject = project / "pyproject.toml"
    if not pyproject.is_file():
        return False
    try:
        data = tomllib.loads(safeio.read_text(pyproject, root=project, cap=MAX_CONFIG_BYTES))
        poetry = data.get("tool", {}).get("poetry", {})
        from agentguard.lock.inputs import is_virtual_workspace

        return (
            "project" in data
            or (isinstance(poetry, dict) and "dependencies" in poetry)
            or is_virtual_workspace(data)
        )
    except (OSError, ValueError, RecursionError, MemoryError):  # (a TOML error, a long int)
        return True  # let the lock step report the problem with the file


def lock_step(project: Path, deps: DepsPolicy) -> StepResult:
    """``lock --check``: offline, reads the inputs and the two lock files."""
    if not _declares_dependencies(project):
        return StepResult(
            sources=(
                Source.skipped(
                    "lock",
                    str(project),
                    "no pyproject.toml [project] or requirements.in: no dependencies to check",
                ),
            )
        )
    from agentguard.lock.every_lock import check_every_lock, locks_to_check
    from agentguard.lock.inputs import read_inputs

    # every lock the project holds (its own uv.lock / poetry.lock / pylock.toml, and
    # agentguard's pair beside them): each is checked, none hides another
    own, foreign = locks_to_check(project)
    inputs = read_inputs(project, allow_urls=bool(foreign))
    report = check_every_lock(project, inputs, deps, foreign, own)
    facts: dict[str, JSONValue] = {"inputs": dict(report.provenance.inputs), **report.facts}
    return StepResult(report.findings, report.sources, facts, report.notes)


def project_step(
    project: Path,
    exclude: tuple[str, ...] = (),
    beside: Callable[[], None] | None = None,
    contexts: Mapping[str, tuple[str, ...]] | None = None,
) -> StepResult:
    """The agent-configuration and project-folder rules (AG2xx/AG3xx/AG4xx from files).

    ``beside``: another step, run while forked children read a large folder;
    ``contexts``: the configured context globs."""
    from agentguard.engine.project import inspect_project

    result = inspect_project(project, exclude=exclude, beside=beside, contexts=contexts)
    maps = (result.capabilities,) if result.capabilities is not None else ()
    return StepResult(result.findings, result.sources, dict(result.facts), maps=maps)


def image_step(ref: str, *, project: Path, config: Config, progress: Progress) -> StepResult:
    """Inspect one image: a saved tarball or OCI layout when ``ref`` is a local path, else an
    image the engine knows. The project's ``pylock.toml`` (when present) is what the
    installed packages are compared with (AG110)."""
    from agentguard.engine.inspect_run import InspectOptions, inspect_target
    from agentguard.inspect.targets import Kind, classify_path

    path = Path(ref).expanduser()
    if path.exists():
        kind = classify_path(path)
        if not kind.is_image_file:
            raise UsageError(
                f"--image {ref}: a local {kind.value}, not a saved image (a `docker save` "
                "tarball or an OCI layout)"
            )
    else:
        kind = Kind.IMAGE
    from agentguard.inspect.lock_input import LOCK_NAME, OTHER_LOCKS

    found = [project / n for n in (LOCK_NAME, *OTHER_LOCKS) if (project / n).is_file()]
    lock = found[0] if len(found) == 1 else None
    if len(found) > 1 and found[0].name == LOCK_NAME:
        from agentguard.lock.existing_flow import derived_pylock

        # a pylock.toml exported from the uv.lock/poetry.lock beside it holds the same pins
        lock = found[0] if derived_pylock(found[0]) else None
    opts = InspectOptions(
        target=ref,
        kind=kind,
        lock=lock,
        discover_lock=False,
    )
    result = inspect_target(opts, config=config, progress=progress)
    facts: dict[str, JSONValue] = {**result.facts, "inputs": dict(result.inputs)}
    return StepResult(result.findings, result.sources, facts, result.notes, result.maps)


def _guarded(kind: str, name: str, step: Callable[[], StepResult]) -> StepResult:
    """Run one step; a crash in it is a failed source (exit 3), never a verdict on its own.

    Usage errors (exit 2) pass through. Anything else would otherwise end the process with
    Python's exit status 1, which the exit-code table reserves for findings.
    """
    try:
        return step()
    except UsageError:
        raise
    except Exception as exc:
        return StepResult(
            sources=(
                Source.failed(
                    kind,
                    name,
                    f"agentguard failed in this step: {type(exc).__name__}: {exc}",
                    error_code="internal-error",
                    retryable=False,
                    remedy="report it as a bug; the other steps' findings are still reported",
                ),
            )
        )


def _smoke(
    project: Path,
    opts: CheckOptions,
    config: Config,
    steps: list[tuple[str, StepResult]],
    progress: Progress,
) -> None:
    """The smoke run (``--smoke``, or ``smoke = true`` from ``--config``) as a step."""
    from agentguard.smoke.step import wanted

    run, note = wanted(opts.smoke, config)
    if note:
        steps.append(("smoke", StepResult(notes=(note,))))
    if not run:
        return
    from agentguard.smoke.run import DEFAULT_TIMEOUT, SmokeOptions
    from agentguard.smoke.step import smoke_step

    smoke = SmokeOptions(timeout=opts.smoke_timeout or DEFAULT_TIMEOUT, exclude=config.exclude)
    prior = steps[0][1].findings

    def step() -> StepResult:
        done = smoke_step(project, smoke, prior)
        return StepResult(done.findings, done.sources, done.facts, done.notes)

    progress("smoke run: installing the lock and starting the agent stack")
    steps.append(("smoke", _guarded("smoke", str(project), step)))


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


def _image_copy_of(image_path: str, folder_path: str) -> bool:
    """An image file that is the folder's file copied in (``/app/bot.py`` <- ``bot.py``)."""
    return image_path.startswith("/") and image_path.endswith("/" + folder_path.removeprefix("./"))


def same_finding_once(steps: list[tuple[str, StepResult]]) -> list[Finding]:
    """Every step's findings, where an image's finding about a file copied from the project
    (same rule, same line, its path the folder's path below the image's folder) is the
    folder's finding: reported once, with the image's location added to it."""
    folder = [f for name, s in steps if not name.startswith("image:") for f in s.findings]
    out = list(folder)
    index = {
        (f.rule_id, f.locations[0].line, f.locations[0].path): n
        for n, f in enumerate(out)
        if f.locations and f.locations[0].path and f.locations[0].line
    }
    by_key: dict[tuple[str, int], list[tuple[str, int]]] = {}
    for (rule, line, path), n in index.items():
        by_key.setdefault((rule, line), []).append((path, n))
    for name, s in steps:
        if not name.startswith("image:"):
            continue
        for f in s.findings:
            loc = f.locations[0] if f.locations else None
            hit = None
            if loc is not None and loc.path and loc.line:
                hit = next(
                    (
                        n
                        for p, n in by_key.get((f.rule_id, loc.line), [])
                        if _image_copy_of(loc.path, p)
                    ),
                    None,
                )
            if hit is None:
                out.append(f)
                continue
            where = Location(
                path=loc.path if loc else None,
                line=loc.line if loc else None,
                layer=loc.layer if loc else None,
                note=f"the same in {name.removeprefix('image:')}",
            )
            base = out[hit]
            out[hit] = dataclasses.replace(base, locations=(*base.locations, where))
    return out


def _base_steps(
    config: Config,
) -> Callable[[Path], tuple[list[Finding], list[Source], list[CapabilityMap]]]:
    """The folder steps (lock --check, the project rules) for the base's copy, with the
    head's configuration: the base's own configuration is never read."""

    def run(folder: Path) -> tuple[list[Finding], list[Source], list[CapabilityMap]]:
        steps = [
            ("lock", _guarded("lock", str(folder), partial(lock_step, folder, config.deps))),
            (
                "project",
                _guarded(
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

    def lock_once() -> None:
        if not locked:
            progress("checking the lock files")
            locked.append(_guarded("lock", str(project), partial(lock_step, project, config.deps)))

    # The lock step runs beside the scan (while forked children read a large folder), or
    # before it; once the scan has ended, at the latest. Its result is reported first.
    progress("scanning the project folder")
    scan = partial(
        project_step, project, config.exclude, beside=lock_once, contexts=config.contexts
    )
    if opts.base is None:
        scanned = _guarded("project", str(project), scan)
    else:  # the head, then the base: a file the change left alone is parsed once
        from agentguard.delta.run import gather_base
        from agentguard.inspect.project.scan import outcomes_shared

        with outcomes_shared():
            scanned = _guarded("project", str(project), scan)
            progress(f"reading and scanning the base revision {opts.base}")
            side = gather_base(opts.base, project, config, _base_steps(config))
    lock_once()
    steps: list[tuple[str, StepResult]] = [("lock", locked[0]), ("project", scanned)]
    _smoke(project, opts, config, steps, progress)
    images, image_sources = _images(opts)
    _something_to_check(project, steps, images)
    steps.append(("compose", StepResult(sources=tuple(image_sources))))
    for i, ref in enumerate(images, 1):
        progress(f"inspecting image {i}/{len(images)}: {ref}")
        inspect = partial(image_step, ref, project=project, config=config, progress=progress)
        steps.append((f"image:{ref}", _guarded("image", ref, inspect)))

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

"""The steps of ``agentguard check`` (see :mod:`agentguard.check`): ``lock --check``
offline, the project-folder rules, one image; each a :class:`StepResult` with its sources,
and a crash in one a failed source (:func:`guarded`), never a verdict."""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from agentguard import safeio
from agentguard.config import Config, DepsPolicy
from agentguard.engine import UsageError
from agentguard.facts.capabilities import CapabilityMap
from agentguard.findings import Finding, JSONValue, Location, Source
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.safeio import MAX_CONFIG_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

Progress = Callable[[str], None]


@dataclass(frozen=True)
class StepResult:
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    facts: dict[str, JSONValue] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    maps: tuple[CapabilityMap, ...] = ()  # agent capability maps (project, images)


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


def lock_step(project: Path, deps: DepsPolicy, deadline: Deadline = NO_DEADLINE) -> StepResult:
    """``lock --check``: offline, reads the inputs and the two lock files (an index read it
    needs ends with ``deadline``: a failed source, the other steps still reported)."""
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
    from agentguard.engine.lock.every_lock import check_every_lock
    from agentguard.lock.inputs import read_inputs
    from agentguard.lock.project_locks import locks_to_check

    # every lock the project holds (its own uv.lock / poetry.lock / pylock.toml, and
    # agentguard's pair beside them): each is checked, none hides another
    own, foreign = locks_to_check(project)
    inputs = read_inputs(project, allow_urls=bool(foreign))
    report = check_every_lock(project, inputs, deps, foreign, own, deadline=deadline)
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
        from agentguard.lock.which_lock import derived_pylock

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


def guarded(kind: str, name: str, step: Callable[[], StepResult]) -> StepResult:
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

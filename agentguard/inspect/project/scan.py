"""Ties the walk, the per-file parsers and the rules together.

Each candidate file is read once (in worker processes for large trees). A file that
cannot be read is a failed source; a file over the size cap is a skipped one when it
names no agent SDK, else a failed one (it may configure an agent we did not analyse).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

# (not facts.image: a folder scan builds no image record)
from agentguard.facts.project_file import ProjectFile
from agentguard.findings import Finding, JSONValue, Source
from agentguard.inspect.project import cache as content_cache
from agentguard.inspect.project.files import (
    FileOutcome,
    process_file,
)
from agentguard.inspect.project.kinds import TreeFacts, gitignore_lists_env
from agentguard.inspect.project.scan_read import outcomes_shared as outcomes_shared
from agentguard.inspect.project.scan_read import read_and_process, worth_keeping
from agentguard.inspect.project.walk import (
    MAX_FILE_BYTES,
    Candidate,
    NotRegular,
    TooLarge,
    WalkResult,
    classify,
    is_marker,
    project_source,
    read_candidate,
    walk,
)

if TYPE_CHECKING:
    from agentguard.facts.project import BuildFileFacts
    from agentguard.inspect.project.python_imports import Loader


# --------------------------------------------------------------------------------------


# findings, sources, facts for JSON readers, and the joined build-file facts (the map reads them)
ContainerScan = tuple[list[Finding], list[Source], dict[str, JSONValue], "BuildFileFacts | None"]
# The engine's step over the container/build files (their rules need what the files say,
# so it runs here, in this process, while forked children read the rest).
ContainerStep = Callable[[list[ProjectFile], "TreeFacts | None"], "ContainerScan | None"]


@dataclass
class Collected:
    outcomes: list[FileOutcome] = field(default_factory=list)
    container_files: list[ProjectFile] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    files_seen: int = 0
    files_read: int = 0
    loader: Loader | None = None  # reads another project file (imported names), or None
    container_scan: ContainerScan | None = None  # made beside the pool, when there was one
    tree: TreeFacts | None = None  # what a whole-folder COPY takes (folders only)


def _process_chunk(
    chunk: tuple[int, list[Candidate]],
) -> tuple[int, list[tuple[int, FileOutcome]]]:
    """(files read, the outcomes that hold anything, by index among all candidates)."""
    base, cands = chunk
    read = 0
    kept: list[tuple[int, FileOutcome]] = []
    for i, cand in enumerate(cands, base):
        out = read_and_process(cand)
        if out is None:
            read += 1
            continue
        read += out.read
        if worth_keeping(out):
            kept.append((i, out))
    return read, kept


MAX_JOBS = min(4 * (os.cpu_count() or 1), 32)
PARALLEL_MIN = 2000  # candidates below this are read in-process (a fork and its results: ~3 ms)
# ... unless this many are Python files of some size (an SDK's own repository: most of its
# files import it and are parsed, which costs far more than reading)
PARALLEL_MIN_PYTHON = 100
CHUNK = 250  # about this many files in one range at most (a range is one task of one process)
# ranges per process at least: the last range taken is all that one process may do alone
# at the end (on pydantic-ai, with 8 a process waited 0.3-0.6 s of 2 for the other's last
# range; with 32 they end within 10 ms); a range costs a read of the task pipe
RANGES_PER_JOB = 32


def _interleave(indexes: list[int], jobs: int) -> tuple[list[int], list[tuple[int, int]]]:
    """:func:`.scan_ranges.interleave` with this module's sizes (tests change them here)."""
    from agentguard.inspect.project.scan_ranges import interleave  # (forked scans only)

    return interleave(indexes, jobs, chunk=CHUNK, ranges_per_job=RANGES_PER_JOB)


def _jobs(count: int, python: int = 0) -> int:
    """Processes reading ``count`` candidates, this one included: 1 = in-process.

    ``AGENTGUARD_JOBS`` overrides (1 turns the pool off). The others are forked, so they
    are only used on Linux, from a process without other threads.
    """
    env = os.environ.get("AGENTGUARD_JOBS", "")
    if env.isdigit() and len(env) <= 6 and int(env) >= 1:
        # capped: a worker per CPU is all that helps (100000 forks would never end)
        wanted = min(int(env), MAX_JOBS)
    else:
        big = count >= PARALLEL_MIN or python >= PARALLEL_MIN_PYTHON
        wanted = min(os.cpu_count() or 1, 4) if big else 1
    if wanted > 1 and (not sys.platform.startswith("linux") or threading.active_count() > 1):
        return 1
    return wanted


def _process_all(
    candidates: list[Candidate],
    tree: TreeFacts | None = None,
    beside: Callable[[], None] | None = None,
    containers: ContainerStep | None = None,
) -> tuple[int, list[FileOutcome], ContainerScan | None]:
    """(files read, outcomes worth keeping in candidate order, the container-file scan
    when it was made here).

    ``beside``: other work of the same run (``check``'s lock step), done by this process
    while the children read, before it takes ranges itself; or first, with one job.
    ``containers``: the engine's step over the container/build files, run here while the
    children read (None: the container files are left to the caller).

    With more than one job, forked children take ranges of the code and settings files
    while this process reads the container/build files and scans them (compose validation,
    Dockerfile parsing); then it takes ranges too (:mod:`.forked`), so that ``jobs``
    processes keep ``jobs`` CPUs busy until the last range is done.
    """
    jobs = _jobs(len(candidates), sum(c.kind == "python" for c in candidates))
    if jobs <= 1:
        if beside is not None:
            beside()
        read, kept = _process_chunk((0, candidates))
        outcomes = [o for _, o in kept]
        # (here too, not left to the caller: it then runs with the content cache open)
        files = [o.container_file for o in outcomes if o.container_file]
        return read, outcomes, containers(files, tree) if containers is not None else None
    from agentguard.inspect.project.forked import share

    own = [i for i, c in enumerate(candidates) if c.kind == "container"]
    rest = [i for i, c in enumerate(candidates) if c.kind != "container"]
    rest, ranges = _interleave(rest, jobs)
    from agentguard.inspect.project.scan_ranges import costliest_first

    ranges = costliest_first([candidates[i] for i in rest], ranges)
    # The children are forked after the walk: they inherit the candidates and are sent
    # only range numbers (no candidate is pickled); results map back to global indexes.
    _SHARED[:] = [candidates[i] for i in rest]
    cache = content_cache.ACTIVE
    if cache is None or not cache.entries:
        # (a re-run from a pack parses only what changed: a reader that parses one imports
        # its parser there, instead of this process importing them all)
        _preload(yaml=any(_is_yaml_script(c) for c in _SHARED))

    def own_files() -> tuple[int, list[tuple[int, FileOutcome]], ContainerScan | None]:
        own_read, own_kept = _process_chunk((0, [candidates[i] for i in own]))
        files = [o.container_file for _, o in own_kept if o.container_file]
        scanned = containers(files, tree) if containers is not None else None
        if beside is not None:
            beside()
        _preload_after()
        return own_read, own_kept, scanned

    try:
        (own_read, own_kept, scanned), results = share(
            len(ranges), lambda k: _process_range(ranges[k]), jobs, own_files
        )
    finally:
        _SHARED.clear()
    kept = [(own[n], o) for n, o in own_kept]
    kept += [(rest[n], o) for _, got, _ in results for n, o in got]
    if cache is not None:
        for _, _, records in results:
            if records is not None:
                cache.merge(records)
    kept.sort(key=lambda t: t[0])
    return own_read + sum(r for r, _, _ in results), [o for _, o in kept], scanned


_SHARED: list[Candidate] = []  # what forked workers read their ranges from


def _process_range(
    span: tuple[int, int],
) -> tuple[int, list[tuple[int, FileOutcome]], content_cache.Records | None]:
    """A range's outcomes, and what the content cache recorded on the way (a forked
    reader's cache is its own copy: the records go back with the results)."""
    read, kept = _process_chunk((span[0], _SHARED[span[0] : span[1]]))
    cache = content_cache.ACTIVE
    return read, kept, cache.take() if cache is not None else None


def _is_yaml_script(cand: Candidate) -> bool:
    return cand.kind == "script" and cand.rel.endswith((".yml", ".yaml"))


def _preload(*, yaml: bool = False) -> None:
    """Import the parsers before forking, so workers do not each import them. ``yaml``:
    the YAML readers too (PyYAML, workflows, composite actions, Kubernetes manifests:
    28 ms), which every YAML script's reader imports (``engine_files.yaml_config``): a
    tree with one has them imported by some process anyway, and by each that reads one."""
    if yaml:
        import agentguard.inspect.project.composite
        import agentguard.inspect.project.k8s_facts
        import agentguard.inspect.project.workflows
    import agentguard.inspect.project.claude_settings
    import agentguard.inspect.project.cli_flags
    import agentguard.inspect.project.engine_files
    import agentguard.inspect.project.python_agents
    import agentguard.inspect.project.python_fallback
    import agentguard.inspect.project.python_fallback_options
    import agentguard.inspect.project.python_frameworks
    import agentguard.inspect.project.ts_agents  # noqa: F401


def _preload_after() -> None:
    """What this process needs once the files are read (the import resolver; the engine's
    container step imports the agent rules and the policy), imported while the children
    still read: here it costs half of what it costs after the last range, when the other
    CPU has nothing to do."""
    import agentguard.inspect.project.python_imports  # noqa: F401


def folder_loader(root: Path) -> Loader:
    """Reads a project-relative path below ``root`` (never above it); None when it cannot."""
    base = os.path.realpath(root)

    def load(rel: str) -> bytes | None:
        path = os.path.realpath(os.path.join(base, rel))
        if not path.startswith(base + os.sep):
            return None
        try:
            return read_candidate(path)
        except (OSError, TooLarge, NotRegular):
            return None

    return load


def _tree(root: Path, got: WalkResult) -> TreeFacts:
    """The walk's AG212 facts, with the folders whose .gitignore lists .env."""
    expected: list[str] = []
    for rel in got.gitignores:
        try:
            text = read_candidate(os.path.join(root, rel)).decode("utf-8", "replace")
        except (OSError, TooLarge, NotRegular):
            continue  # only a hint for AG212: the files themselves are what is listed
        if gitignore_lists_env(text):
            expected.append(os.path.dirname(rel))
    return TreeFacts(tuple(got.keep_out), tuple(expected))


def collect_folder(
    root: Path,
    *,
    exclude: Sequence[str] = (),
    beside: Callable[[], None] | None = None,
    containers: ContainerStep | None = None,
    cache: content_cache.ContentCache | None = None,
    walked: WalkResult | None = None,
) -> Collected:
    """``walked``: the walk of ``root`` (with ``exclude``) when the caller made it."""
    got = walked if walked is not None else walk(str(root), exclude=exclude)
    col = Collected(sources=list(got.sources), markers=list(got.markers))
    col.loader = folder_loader(root)
    col.files_seen = got.files_seen
    col.tree = _tree(root, got)
    content_cache.ACTIVE = cache
    try:
        col.files_read, col.outcomes, col.container_scan = _process_all(
            got.candidates, col.tree, beside, containers
        )
        if cache is not None:
            cache.merge(cache.take())  # (what this process read itself)
            cache.save()
    finally:
        content_cache.ACTIVE = None
    col.container_files = [o.container_file for o in col.outcomes if o.container_file]
    col.sources.append(project_source(str(root), got, col.files_read))
    return col


def collect_files(files: Sequence[ProjectFile], *, workdir: str | None) -> Collected:
    by_path = {f.path: f.data for f in files}
    col = Collected(loader=lambda rel: by_path.get(rel))
    col.files_seen = len(files)
    for f in files:
        kind = classify(f.path)
        if is_marker(f.path, False) and _under(f.path, workdir):
            col.markers.append(f.path)
        if kind is None:
            continue
        col.files_read += 1
        if len(f.data) > MAX_FILE_BYTES:
            from agentguard.inspect.project.scan_oversize import too_large

            col.sources.append(too_large(f.path, len(f.data)))
            continue
        if kind == "container":
            col.container_files.append(f)
        col.outcomes.append(process_file(f.path, kind, f.data, f.origin))
    return col


def _under(path: str, workdir: str | None) -> bool:
    if not workdir or not path.startswith("/"):
        return True
    wd = workdir.rstrip("/") + "/"
    return path.startswith(wd) or wd == "/"

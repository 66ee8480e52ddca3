"""`agentguard lock` and `agentguard lock --check`: gather, run the AG1xx rules, write."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from agentguard import safeio
from agentguard.engine import UsageError, make_report, now_utc
from agentguard.findings import (
    Finding,
    Fix,
    JSONValue,
    Location,
    Report,
    Severity,
    Source,
    sort_findings,
)
from agentguard.lock.backend import BACKENDS, Resolution, ResolveRequest, ResolverError
from agentguard.lock.graph import (
    DependencyEdge,
    LockedPackage,
    LockGraph,
    MajorGroups,
    major_groups,
    majors_admitted,
)
from agentguard.lock.inputs import ProjectInputs, read_inputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK, LockfileError, project_lock
from agentguard.safeio import MAX_LOCK_BYTES

if TYPE_CHECKING:
    from agentguard.config import Config, DepsPolicy
    from agentguard.lock.analysis import Analysis
    from agentguard.lock.index import IndexClient
    from agentguard.lock.lockfile import QuickPrevious, StoredLock

# The resolver is started as soon as the project is locked; the modules for everything
# after it (index client, lock file writer, rules, configuration) are imported while it runs.

Progress = Callable[[str], None]


@dataclass(frozen=True)
class LockOptions:
    project: Path
    check: bool = False
    upgrade: bool = False
    upgrade_packages: tuple[str, ...] = ()
    allow_major: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    all_extras: bool = False
    groups: tuple[str, ...] = ()
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    backend: str = "uv"
    only_binary: bool = False


def _python_floor(requires_python: str | None) -> str | None:
    if not requires_python:
        return None
    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return None
    for s in spec:
        if s.operator in (">=", "~=", "=="):
            parts = s.version.split(".")
            return ".".join(parts[:2]) if len(parts) > 1 else f"{parts[0]}.0"
    return None


def _file_digest(path: Path) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(safeio.read_bytes(path, cap=MAX_LOCK_BYTES)).hexdigest()
    except OSError:
        return None


def run_lock(
    opts: LockOptions, progress: Progress = lambda _m: None
) -> tuple[Report, Severity | None]:
    """The report (with the project's configuration applied) and the configured fail-on."""
    if opts.backend not in BACKENDS:
        raise UsageError(f"unknown backend {opts.backend!r} (expected: {', '.join(BACKENDS)})")
    root = opts.project
    inputs = read_inputs(root, extras=opts.extras, all_extras=opts.all_extras, groups=opts.groups)
    configured: list[Config] = []  # loaded while the resolver runs (see _lock_locked)
    if opts.check:
        report = check_lock(inputs, _config(root, configured).deps)
    else:
        try:
            with project_lock(root):
                report = _lock_locked(opts, inputs, lambda: _config(root, configured), progress)
        except LockfileError as exc:
            report = _failed_report(
                inputs,
                Source.failed(
                    "lockfile",
                    str(root),
                    str(exc),
                    error_code=exc.code,
                    retryable=exc.code == "lock-busy",
                ),
            )
    from agentguard.policy import apply_policy

    config = _config(root, configured)
    applied = apply_policy(report.findings, config, root=root)
    report = dataclasses.replace(
        report,
        findings=sort_findings(applied.findings),
        sources=(*report.sources, *applied.sources),
        notes=(*report.notes, *config.notes, *applied.notes),
    )
    return report, config.fail_on


def _config(root: Path, loaded: list[Config]) -> Config:
    """The project's configuration, read once."""
    if not loaded:
        from agentguard.config import load_config

        loaded.append(load_config(root))
    return loaded[0]


def _failed_report(inputs: ProjectInputs, *sources: Source, notes: tuple[str, ...] = ()) -> Report:
    return make_report(
        "lock",
        [],
        sources,
        target=str(inputs.root),
        inputs={"input_hash": inputs.input_hash, "input_source": inputs.source},
        notes=(*notes, "No lock file was written or changed."),
    )


def _lock_locked(
    opts: LockOptions, inputs: ProjectInputs, config: Callable[[], Config], progress: Progress
) -> Report:
    root = inputs.root
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    req_path = root / REQUIREMENTS_LOCK
    try:
        preferences = (
            safeio.read_text(req_path, root=root, cap=MAX_LOCK_BYTES)
            if req_path.is_file()
            else None
        )
    except (OSError, UnicodeDecodeError):
        preferences = None  # read_stored below reports the unreadable file
    request = ResolveRequest(
        requirements=tuple(inputs.requirement_lines()),
        python_version=_python_floor(inputs.requires_python),
        index_url=opts.index_url,
        find_links=opts.find_links,
        no_index=opts.no_index,
        upgrade=opts.upgrade,
        upgrade_packages=opts.upgrade_packages,
        only_binary=opts.only_binary,
        preferences=preferences,
    )
    progress(f"resolving {len(inputs.requirements)} requirements with {opts.backend}")
    # The resolver runs in a subprocess; meanwhile read the previous lock and start reading
    # the index pages of the packages it names (a re-lock mostly keeps them).
    pool = ThreadPoolExecutor(1)
    resolving = pool.submit(BACKENDS[opts.backend], request)
    pool.shutdown(wait=False)
    from agentguard.lock.analysis import analyse
    from agentguard.lock.index import IndexClient, background_thread
    from agentguard.lock.lockfile import (
        QuickPrevious,
        build_pylock,
        read_quick,
        read_stored,
        render_pylock,
        render_requirements,
        write_atomically,
    )
    from agentguard.rules import deps as _deps  # noqa: F401  (imported while the resolver runs)

    try:
        policy = config().deps
    except UsageError:
        _wait_quietly(resolving)
        raise
    client: IndexClient | None = None
    previous: QuickPrevious | StoredLock | None = read_quick(root)
    if previous is None:
        try:
            previous = read_stored(root)
        except LockfileError as exc:
            _wait_quietly(resolving)
            return _failed_report(
                inputs,
                *sources,
                Source.failed(
                    "lockfile",
                    PYLOCK,
                    str(exc),
                    error_code=exc.code,
                    retryable=False,
                    remedy="Fix or delete the broken lock files, then re-run.",
                ),
            )
    if previous is not None:
        names = sorted({p.name for p in _previous_pins(previous)})
        sources.append(
            Source.ok("lockfile", REQUIREMENTS_LOCK, f"previous lock: {len(names)} packages")
        )
        guess = (opts.index_url,) if opts.index_url else _previous_index(previous)
        if guess and not opts.no_index:
            client = IndexClient(guess, opts.find_links)
            client.prefetch(names)
    # A re-lock mostly keeps every pin: analyse the previous pins while the resolver runs
    # (on a thread of its own), and use that analysis when the resolver returns exactly
    # those pins (same versions, markers and hashes) from the same index. Otherwise it is
    # not waited for (a dead index it guessed must not hold the run) and the pins are
    # analysed as on a first lock.
    speculating: Future[_Speculated] | None = None
    speculating_with = client
    guessed_pins: tuple[LockedPackage, ...] = ()
    if client is not None and isinstance(previous, QuickPrevious):
        guessed_pins = tuple(previous.pins)
        side = ThreadPoolExecutor(1, initializer=background_thread)
        speculating = side.submit(_speculate, previous, inputs, client, policy, opts.allow_major)
        side.shutdown(wait=False)
    try:
        resolution = resolving.result()
    except ResolverError as exc:
        if client is not None:
            client.close()
        sources.append(
            Source.failed(
                "resolver",
                opts.backend,
                str(exc),
                error_code=exc.code,
                retryable=exc.retryable,
                remedy=exc.remedy,
            )
        )
        return _failed_report(inputs, *sources)
    sources.append(
        Source.ok("resolver", resolution.backend, f"{len(resolution.pins)} packages pinned")
    )

    index_urls = () if opts.no_index else resolution.index_urls
    links = resolution.find_links or opts.find_links
    if client is None or (tuple(index_urls), tuple(links)) != (
        client.index_urls_given,
        tuple(client.find_links),
    ):
        if client is not None:
            client.close()
        client = IndexClient(index_urls, links)
    speculated = (
        _outcome(speculating)
        if speculating is not None
        and guessed_pins == tuple(resolution.pins)
        and client is speculating_with
        else None
    )
    if speculated is not None:
        client.close()
        analysis, graph = speculated.analysis, speculated.graph
        findings, crossings = list(speculated.findings), list(speculated.crossings)
    else:
        try:
            analysis = analyse(resolution.pins, inputs.requirement_lines(), client, progress)
        finally:
            client.close()
        graph, findings, crossings = _rules(analysis, previous, policy, opts.allow_major)
    sources.extend(analysis.sources)
    blocking = [f for f in crossings if f.severity > Severity.INFO]

    provenance: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "backend": resolution.backend,
        "index_urls": list(resolution.index_urls),
    }
    notes: list[str] = []
    facts = {"packages": len(graph.packages), "edges": len(graph.edges)}
    incomplete = any(s.status.value == "failed" for s in sources)
    if blocking:
        notes.append(
            f"A re-lock would cross a major ({', '.join(str(f.evidence['package']) for f in blocking)}); "
            "both lock files were left untouched."
        )
    elif incomplete:
        notes.append(
            "A source failed, so the analysis is incomplete; no lock file was written or changed."
        )
    else:
        resolved_at = now_utc()
        data = build_pylock(inputs, resolution, graph, analysis.files, resolved_at)
        index_line = opts.index_url if opts.index_url and not opts.no_index else None
        requirements_text = render_requirements(
            resolution.pins,
            inputs,
            index_line,
            opts.find_links,
            lock_digest=data["tool"]["agentguard"]["lock-digest"],
            index_urls=tuple(resolution.index_urls),
        )
        if previous is not None and _same_lock(previous, requirements_text, root):
            notes.append("The lock is up to date; files left untouched.")
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
                notes.append(
                    f"Wrote {REQUIREMENTS_LOCK} and {PYLOCK} ({len(graph.packages)} packages)."
                )
        provenance["lock_digest"] = _file_digest(root / PYLOCK)
    return make_report(
        "lock", findings, sources, target=str(root), inputs=provenance, facts=facts, notes=notes
    )


@dataclass(frozen=True)
class _Speculated:
    analysis: Analysis
    graph: LockGraph
    findings: tuple[Finding, ...]
    crossings: tuple[Finding, ...]


def _outcome(future: Future[_Speculated]) -> _Speculated | None:
    """The analysis made beside the resolver, or None when it did not finish cleanly (then
    the pins are analysed again, where any error is reported the usual way)."""
    try:
        return future.result()
    except Exception:
        return None


def _speculate(
    previous: QuickPrevious,
    inputs: ProjectInputs,
    client: IndexClient,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
) -> _Speculated:
    from agentguard.lock.analysis import analyse

    analysis = analyse(previous.pins, inputs.requirement_lines(), client)
    graph, findings, crossings = _rules(analysis, previous, policy, allow_major)
    return _Speculated(analysis, graph, tuple(findings), tuple(crossings))


def _rules(
    analysis: Analysis,
    previous: QuickPrevious | StoredLock | None,
    policy: DepsPolicy,
    allow_major: tuple[str, ...],
) -> tuple[LockGraph, list[Finding], list[Finding]]:
    """The graph with each edge's admitted majors, all AG1xx findings, and the crossings."""
    from agentguard.rules.deps import (
        check_major_crossings,
        check_major_spans,
        check_unknown_metadata,
    )

    graph = _with_majors(analysis.graph, analysis.released)
    findings = [*check_major_spans(graph, policy), *check_unknown_metadata(graph)]
    crossings: list[Finding] = []
    if previous is not None:
        crossings = check_major_crossings(previous.versions(), graph, allow_major)
        findings += crossings
    return graph, findings, crossings


def _wait_quietly(future: Future[Resolution]) -> None:
    """Let a resolver we no longer need finish, so no subprocess outlives the command."""
    with contextlib.suppress(ResolverError):
        future.result()


def _previous_pins(previous: QuickPrevious | StoredLock) -> tuple[LockedPackage, ...]:
    from agentguard.lock.lockfile import QuickPrevious

    return previous.pins if isinstance(previous, QuickPrevious) else previous.packages


def _previous_index(previous: QuickPrevious | StoredLock) -> tuple[str, ...]:
    from agentguard.lock.lockfile import StoredLock

    if isinstance(previous, StoredLock):
        return tuple(previous.tool.get("index-urls", []))
    for line in previous.requirements_text.splitlines()[:8]:
        if line.startswith("# index-urls:"):
            return tuple(line.split(":", 1)[1].split())
    return ()


def _same_lock(previous: QuickPrevious | StoredLock, requirements_text: str, root: Path) -> bool:
    from agentguard.lock.lockfile import QuickPrevious

    """Same pins, hashes and graph as before (the requirements lock carries the digest of
    everything in pylock.toml but its timestamp): nothing to rewrite."""
    if not isinstance(previous, QuickPrevious):
        return False
    return previous.requirements_text == requirements_text


def _with_majors(graph: LockGraph, released: dict[str, list[Any]]) -> LockGraph:
    edges = []
    groups: dict[str, MajorGroups] = {}
    for e in graph.edges:
        versions = released.get(e.child)
        admitted = None
        if versions:
            if e.child not in groups:
                groups[e.child] = major_groups(versions)
            try:
                admitted = majors_admitted(e.specifier, versions, groups[e.child])
            except InvalidSpecifier:
                admitted = None
        edges.append(dataclasses.replace(e, admitted_majors=admitted))
    return dataclasses.replace(graph, edges=tuple(edges))


def _edge_key(e: DependencyEdge) -> tuple[str, str, str]:
    return (e.parent, e.child, e.specifier)


def check_lock(inputs: ProjectInputs, deps: DepsPolicy | None = None) -> Report:
    """Offline: the lock files match the inputs and each other, every pin is hashed, no
    unmitigated high major-span finding. Reads only the two lock files."""
    from agentguard.lock.lockfile import read_stored
    from agentguard.rules.deps import (
        LockOutOfSync,
        UnhashedPin,
        check_major_spans,
        check_unknown_metadata,
    )

    root = inputs.root
    if deps is None:
        from agentguard.config import load_config

        deps = load_config(root).deps
    policy = deps
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    findings: list[Finding] = []
    prov: dict[str, JSONValue] = {"input_hash": inputs.input_hash, "input_source": inputs.source}
    try:
        stored = read_stored(root)
    except LockfileError as exc:
        sources.append(
            Source.failed(
                "lockfile",
                PYLOCK,
                str(exc),
                error_code=exc.code,
                retryable=False,
                remedy="Re-run `agentguard lock` to regenerate the lock files.",
            )
        )
        return make_report("lock --check", [], sources, target=str(root), inputs=prov)
    if stored is None:
        findings.append(
            LockOutOfSync.finding(
                f"No lock: neither {PYLOCK} nor {REQUIREMENTS_LOCK} exists in {root}.",
                locations=[Location(path=inputs.source)],
                fix="Run `agentguard lock` and commit both lock files.",
                evidence={"expected_input_hash": inputs.input_hash, "found": None},
            )
        )
        return make_report("lock --check", findings, sources, target=str(root), inputs=prov)
    sources.append(Source.ok("lockfile", PYLOCK, f"{len(stored.packages)} packages"))
    sources.append(
        Source.ok("lockfile", REQUIREMENTS_LOCK, f"{len(stored.requirements_pins)} pins")
    )
    prov["lock_digest"] = _file_digest(root / PYLOCK)
    prov["resolved_at"] = stored.tool.get("resolved-at")
    for name, found in (
        (PYLOCK, stored.input_hash),
        (REQUIREMENTS_LOCK, stored.requirements_input_hash),
    ):
        if found != inputs.input_hash:
            findings.append(
                LockOutOfSync.finding(
                    f"{name} was made from other inputs than {inputs.source} declares now "
                    f"(recorded {found or 'nothing'}, now {inputs.input_hash}).",
                    locations=[Location(path=name)],
                    fix="Run `agentguard lock` and commit both lock files.",
                    evidence={
                        "file": name,
                        "recorded_input_hash": found,
                        "input_hash": inputs.input_hash,
                    },
                )
            )
    a = {(p.name, p.version) for p in stored.packages}
    b = {(p.name, p.version) for p in stored.requirements_pins}
    if a != b:
        only_py = sorted(f"{n}=={v}" for n, v in a - b)
        only_req = sorted(f"{n}=={v}" for n, v in b - a)
        findings.append(
            LockOutOfSync.finding(
                f"{PYLOCK} and {REQUIREMENTS_LOCK} pin different packages.",
                locations=[Location(path=PYLOCK), Location(path=REQUIREMENTS_LOCK)],
                fix="Run `agentguard lock`; never edit one lock file by hand.",
                evidence={"only_in_pylock": only_py, "only_in_requirements": only_req},
            )
        )
    req_lines = _requirement_lines(root / REQUIREMENTS_LOCK)
    for pin in stored.requirements_pins:
        if pin.hashes and pin.version:
            continue
        findings.append(
            UnhashedPin.finding(
                f"{pin.name}{'==' + pin.version if pin.version else ''} has "
                f"{'no hash' if not pin.hashes else 'no exact pin'}; pip --require-hashes refuses the file.",
                locations=[Location(path=REQUIREMENTS_LOCK, line=req_lines.get(pin.name))],
                fix=Fix("Re-generate the lock with `agentguard lock`; do not edit it by hand."),
                evidence={
                    "package": pin.name,
                    "version": pin.version or None,
                    "hashes": len(pin.hashes),
                },
            )
        )
    findings += check_major_spans(stored.graph, policy)
    findings += check_unknown_metadata(stored.graph)
    return make_report("lock --check", findings, sources, target=str(root), inputs=prov)


def _requirement_lines(path: Path) -> dict[str, int]:
    from packaging.utils import canonicalize_name

    out: dict[str, int] = {}
    try:
        text = safeio.read_text(path, cap=MAX_LOCK_BYTES)
        for i, line in enumerate(text.splitlines(), 1):
            s = line.strip()
            if s and s[0].isalnum():
                name = canonicalize_name(s.split("==")[0].split(";")[0].split()[0].split("[")[0])
                out.setdefault(name, i)
    except (OSError, UnicodeDecodeError):
        pass
    return out

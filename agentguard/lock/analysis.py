"""From pins to a dependency graph: version lists and declared ranges from the index.

For every locked package this reads the index page once (released versions, and the
files whose hashes the lock carries) and the core metadata of one of its wheels
(``Requires-Dist``, cached by the wheel's sha256). All of it runs concurrently.
Each page and metadata read is a :class:`Source`; a failed read is recorded, and the
graph marks that package's edges unknown rather than empty.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

from packaging.requirements import Requirement
from packaging.specifiers import InvalidSpecifier
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard.findings import Source
from agentguard.lock.graph import (
    PROJECT,
    DependencyEdge,
    LockedPackage,
    LockGraph,
    MajorGroups,
    ReleasedVersions,
    major_groups,
    majors_admitted,
    released_major_keys,
)
from agentguard.lock.index import IndexClient, IndexError_, IndexFile, ProjectPage
from agentguard.lock.span_dates import span_dates
from agentguard.lock.upstream import upstream_bounds

WORKERS = 16
T = TypeVar("T")
R = TypeVar("R")
_EXTRA = re.compile(r"""\bextra\s*==\s*['"]([^'"]+)['"]""")


@dataclass(frozen=True)
class Analysis:
    graph: LockGraph
    released: dict[str, list[Version]]
    files: dict[
        tuple[str, str], list[IndexFile]
    ]  # (name, version) -> files matching the pins' hashes
    sources: tuple[Source, ...]


def _gather(items: Sequence[T], read: Callable[[T], R]) -> Iterator[tuple[T, R | IndexError_]]:
    """``read`` every item on the thread pool, in order; an index error is a result too."""

    def one(item: T) -> tuple[T, R | IndexError_]:
        try:
            return item, read(item)
        except IndexError_ as exc:
            return item, exc

    with ThreadPoolExecutor(WORKERS) as pool:
        yield from pool.map(one, items)


def _pin_failure(label: str, reason: str, code: str) -> Source:
    return Source.failed(
        "index",
        label,
        reason,
        error_code=code,
        retryable=False,
        remedy="Re-lock against the index the lock was made from (or check that index).",
    )


def _pick_metadata_file(files: list[IndexFile]) -> IndexFile | None:
    wheels = [f for f in files if f.is_wheel]
    if not wheels:
        return None
    # A pure wheel is the most common metadata; otherwise any wheel (metadata is per release).
    wheels.sort(key=lambda f: (not f.filename.endswith("-none-any.whl"), f.filename))
    return wheels[0]


def _read_page(client: IndexClient, name: str) -> ProjectPage | IndexError_:
    try:
        return client.project_page(name)
    except IndexError_ as exc:
        return exc


PinRead = tuple[Source | None, list[IndexFile], "list[Requirement] | IndexError_ | None"]


def _read_pin(
    client: IndexClient, pin: LockedPackage, page_read: Future[ProjectPage | IndexError_]
) -> PinRead | None:
    """The files of ``pin`` its page lists with the locked hashes, and the Requires-Dist of
    one of its wheels (None: no wheel); a failure source instead; None when the page
    itself could not be read (its own source says so)."""
    page = page_read.result()
    if isinstance(page, IndexError_):
        return None
    label = f"{pin.name}=={pin.version}"
    try:
        version = Version(pin.version)
    except InvalidVersion:
        reason = f"the resolver pinned no valid version ({pin.version!r})"
        return _pin_failure(label, reason, "pin-invalid"), [], None
    of_version = page.files_for(version)
    wanted = {h.split(":", 1)[1] for h in pin.hashes if h.startswith("sha256:")}
    matching = [f for f in of_version if f.sha256 in wanted]
    if not matching:
        # The lock would name files the index does not list: nothing to verify against.
        reason = "the index lists no file with the locked hashes"
        return _pin_failure(label, reason, "hash-not-on-index"), [], None
    meta_file = _pick_metadata_file(matching) or _pick_metadata_file(of_version)
    if meta_file is None:
        return None, matching, None
    try:
        return None, matching, [Requirement(r) for r in client.requires_dist(meta_file)]
    except IndexError_ as exc:
        return None, matching, exc


def analyse(
    pins: Iterable[LockedPackage],
    root_requirements: Iterable[str],
    client: IndexClient,
    progress: Callable[[str], None] = lambda _m: None,
    watched: Collection[str] | None = None,
) -> Analysis:
    """``watched``: the agent stack; later releases of a parent are read for the evidence
    behind a cap only on edges it touches (None: every edge)."""
    pins = list(pins)
    names = sorted({p.name for p in pins})
    sources: list[Source] = []
    pages: dict[str, ProjectPage] = {}

    progress(f"reading {len(names)} index pages and the metadata of {len(pins)} packages")
    # One pool for both reads: each pin's metadata is read as soon as its page is in (a
    # re-lock's metadata is mostly cached: it waits for no other page).
    with ThreadPoolExecutor(WORKERS) as pool:
        page_reads = {name: pool.submit(_read_page, client, name) for name in names}
        pin_reads = [pool.submit(_read_pin, client, pin, page_reads[pin.name]) for pin in pins]
        for name in names:
            result = page_reads[name].result()
            if isinstance(result, IndexError_):
                sources.append(page_failed(name, result, "Check the index, then re-run."))
            else:
                pages[name] = result
                sources.append(Source.ok("index", f"{name} (project page)", f"{len(result)} files"))
        read = [(pin, future.result()) for pin, future in zip(pins, pin_reads, strict=True)]

    files: dict[tuple[str, str], list[IndexFile]] = {}
    unknown: list[str] = []
    requires: dict[tuple[str, str], list[Requirement]] = {}
    metadata_sources: list[Source] = []
    for pin, outcome in read:
        if outcome is None:
            continue  # its page read failed: already a failed source
        failure, matching, meta = outcome
        label = f"{pin.name}=={pin.version}"
        if failure is not None:
            sources.append(failure)
            continue
        files[(pin.name, pin.version)] = matching
        if meta is None:
            unknown.append(pin.name)
            sources.append(
                Source.skipped(
                    "metadata",
                    label,
                    "no wheel: learning its requirements would mean building the sdist",
                )
            )
        elif isinstance(meta, IndexError_):
            metadata_sources.append(
                Source.failed(
                    "metadata", label, str(meta), error_code=meta.code, retryable=meta.retryable
                )
            )
        else:
            requires[(pin.name, pin.version)] = meta
            metadata_sources.append(
                Source.ok("metadata", label, f"{len(meta)} Requires-Dist entries")
            )
    sources.extend(metadata_sources)

    graph = build_graph(pins, root_requirements, requires, unknown)
    released: dict[str, list[Version]] = {n: page.released_versions() for n, page in pages.items()}
    graph = with_majors(graph, released)
    bounds, bound_sources = upstream_bounds(graph, released, pages, client, _gather, watched)
    sources.extend(bound_sources)
    major_uploads, release_uploads = span_dates(graph, released, pages)
    graph = dataclasses.replace(
        graph,
        released_majors={
            n: v.keys() if isinstance(v, ReleasedVersions) else released_major_keys(v)
            for n, v in sorted(released.items())
        },
        upstream_bounds=bounds,
        major_uploads=major_uploads,
        release_uploads=release_uploads,
    )
    return Analysis(graph, released, files, tuple(sources))


def with_majors(graph: LockGraph, released: dict[str, list[Version]]) -> LockGraph:
    """Each edge with the released majors its specifier admits (None: unknown)."""
    edges = []
    groups: dict[str, MajorGroups] = {}
    for e in graph.edges:
        versions = released.get(e.child)
        admitted = None
        if versions:
            if e.child not in groups:
                groups[e.child] = (
                    versions.groups()
                    if isinstance(versions, ReleasedVersions)
                    else major_groups(versions)
                )
            try:
                admitted = majors_admitted(e.specifier, versions, groups[e.child])
            except InvalidSpecifier:
                admitted = None
        edges.append(dataclasses.replace(e, admitted_majors=admitted))
    return dataclasses.replace(graph, edges=tuple(edges))


def build_graph(
    pins: list[LockedPackage],
    root_requirements: Iterable[str],
    requires: dict[tuple[str, str], list[Requirement]],
    unknown: Iterable[str] = (),
) -> LockGraph:
    """Edges from each package's declared requirements, following extras to a fixed point."""
    locked = {p.name for p in pins}
    versions: dict[str, list[str]] = {}
    for p in pins:
        versions.setdefault(p.name, []).append(p.version)
    extras: dict[str, set[str]] = {}
    edges: set[DependencyEdge] = set()

    def add(
        parent: str, parent_version: str | None, req: Requirement, parent_extras: set[str]
    ) -> bool:
        child = canonicalize_name(req.name)
        if child not in locked:
            return False
        marker = str(req.marker) if req.marker else None
        if marker:
            wanted = {canonicalize_name(e) for e in _EXTRA.findall(marker)}
            if wanted and not (wanted & parent_extras):
                return False
        edge = DependencyEdge(
            parent,
            parent_version,
            child,
            str(req.specifier),
            marker,
            tuple(sorted(canonicalize_name(e) for e in req.extras)),
        )
        grew = edge not in edges
        edges.add(edge)
        new = {canonicalize_name(e) for e in req.extras} - extras.get(child, set())
        if new:
            extras.setdefault(child, set()).update(new)
            grew = True
        return grew

    for text in root_requirements:
        add(PROJECT, None, Requirement(text), set())
    changed = True
    while changed:
        changed = False
        for (name, version), reqs in sorted(requires.items()):
            for req in reqs:
                if add(name, version, req, extras.get(name, set())):
                    changed = True
    # A forked parent has one edge per pinned version: its version is part of the order,
    # or the lock's digest would change from run to run (set order).
    ordered = tuple(
        sorted(
            edges,
            key=lambda e: (
                e.parent,
                e.child,
                e.specifier,
                e.marker or "",
                e.parent_version or "",
                e.extras,
            ),
        )
    )
    return LockGraph(
        packages=tuple(sorted(pins, key=lambda p: (p.name, p.version))),
        edges=ordered,
        unknown_metadata=tuple(sorted(set(unknown))),
    )


def page_failed(name: str, exc: IndexError_, remedy: str) -> Source:
    """The source for a project page the index did not give (never an empty page)."""
    return Source.failed(
        "index",
        f"{name} (project page)",
        str(exc),
        error_code=exc.code,
        retryable=exc.retryable,
        remedy=remedy,
    )

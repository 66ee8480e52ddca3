"""From a lock the project already has to the same graph our own lock yields.

The declared range of each edge comes from the parent's own ``Requires-Dist``, read
through the metadata cache by the sha256 the lock holds for one of its wheels (so a warm
run reads no network); Poetry records the ranges itself. The released majors of each
package come from its index page, kept for a day in the cache beside the metadata.
Every read is a :class:`Source`; an edge whose range could not be read is listed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import urllib.parse
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.version import InvalidVersion, Version

from agentguard.findings import Source
from agentguard.lock.analysis import build_graph, page_failed, with_majors
from agentguard.lock.configured import HOW, configured
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.lock.graph import (
    LockGraph,
    ReleasedVersions,
    released_major_keys,
)
from agentguard.lock.index import IndexClient, IndexError_, IndexFile, default_cache_dir
from agentguard.lock.readers.interface import ExistingLock, LockedFile, LockPin
from agentguard.lock.urls import clean_url

WORKERS = 16
RELEASED_TTL_SECONDS = 24 * 3600


@dataclass(frozen=True)
class ExistingAnalysis:
    graph: LockGraph  # edges carry their admitted majors
    sources: tuple[Source, ...]
    unread_edges: tuple[str, ...]  # "parent==version -> child" whose range is unknown
    lock_path: str = ""
    # (package, version, index, line) of each pin from an index this run does not configure
    unconfigured: tuple[tuple[str, str, str, int | None], ...] = ()


def _metadata_file(pin: LockPin) -> LockedFile | None:
    wheels = [f for f in pin.files if f.filename.endswith(".whl") and f.sha256 and f.url]
    wheels.sort(key=lambda f: (not f.filename.endswith("-none-any.whl"), f.filename))
    return wheels[0] if wheels else None


def as_url(location: str, base: Path) -> str:
    """uv writes a path (relative to the lock's folder) for a local index or wheel."""
    if "://" in location:
        return location
    return (base / location).resolve().as_uri()


def _index_file(pin: LockPin, f: LockedFile, base: Path) -> IndexFile:
    url = as_url(f.url or "", base)
    return IndexFile(
        f.filename, url, Version(pin.version), f.sha256, None, None, None, False, False
    )


def _requires_from_lock(lock: ExistingLock) -> dict[tuple[str, str], list[Requirement]]:
    """Poetry's recorded ranges, as Requires-Dist lines (extras as ``extra ==`` markers)."""
    out: dict[tuple[str, str], list[Requirement]] = {}
    for e in lock.edges:
        if e.specifier is None or e.parent_version is None:
            continue
        markers = [m for m in (e.marker, f'extra == "{e.extra}"' if e.extra else None) if m]
        text = (
            e.child
            + e.specifier
            + (" ; " + " and ".join(f"({m})" for m in markers) if markers else "")
        )
        try:
            out.setdefault((e.parent, e.parent_version), []).append(Requirement(text))
        except InvalidRequirement:
            continue
    return out


def _released_cache(cache_dir: Path, index: str, name: str) -> Path:
    key = hashlib.sha256(index.encode()).hexdigest()[:16]
    return cache_dir / "released" / key / f"{name}.json"


# Released versions this process read from the cache or wrote to it (the refresh beside
# `uv lock` writes them, the analysis after it reads them): kept here as read, with their
# majors worked out on the refresh's thread, so the analysis after `uv lock` (on the
# clock) neither re-reads nor re-sorts them. A hit here is what a hit on disk would be.
_SEEN: dict[tuple[str, str, str], tuple[float, ReleasedVersions]] = {}


def released_versions(
    client: IndexClient, index: str, name: str, cache_dir: Path, now: float, fresh: bool = False
) -> tuple[list[Version], bool]:
    """The released versions of ``name`` and whether they came from the cache (not when
    ``fresh``: a re-lock reads the pages, since the resolver just did)."""
    path = _released_cache(cache_dir, index, name)
    key = (str(cache_dir), index, name)
    try:
        if fresh:
            raise KeyError("fresh")
        seen = _SEEN.get(key)
        if seen is not None and now - seen[0] < RELEASED_TTL_SECONDS:
            return seen[1], True
        cached = json.loads(path.read_text("utf-8"))
        if now - float(cached["at"]) < RELEASED_TTL_SECONDS:
            versions = ReleasedVersions(Version(v) for v in cached["versions"])
            _SEEN[key] = (float(cached["at"]), versions)
            return versions, True
    except (OSError, ValueError, KeyError, TypeError, InvalidVersion):
        pass
    versions = ReleasedVersions(client.project_page(name).released_versions())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"at": now, "versions": [str(v) for v in versions]}), "utf-8")
        os.replace(tmp, path)
    except OSError:
        return versions, False  # a cache that cannot be written only costs speed
    _SEEN[key] = (now, versions)
    return versions, False


def refresh_released(
    lock: ExistingLock,
    base: Path,
    cache_dir: Path | None = None,
    index_url: str | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> None:
    """Read the index page of every package the lock names and cache its released versions
    (run beside ``uv lock``: a re-lock keeps most names, and the analysis then reads them
    from the cache), from configured indexes only. Errors are left for the analysis to report."""
    cache = cache_dir or default_cache_dir()
    now = time.time()
    allowed = configured(index_url)
    index_of = {
        p.name: as_url(p.index, base)
        for p in lock.registry_pins
        if p.index and allowed.allows(as_url(p.index, base))
    }
    clients = {
        i: IndexClient((i,), cache_dir=cache, deadline=deadline) for i in set(index_of.values())
    }

    def one(name: str) -> None:
        index = index_of[name]
        with contextlib.suppress(IndexError_):
            versions, _ = released_versions(clients[index], index, name, cache, now, fresh=True)
            assert isinstance(versions, ReleasedVersions)
            versions.groups(), versions.keys()  # (worked out here, off the clock)

    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(one, sorted(index_of)))
    for c in clients.values():
        c.close()


def analyse_existing(
    lock: ExistingLock,
    root_requirements: Iterable[str],
    progress: Callable[[str], None] = lambda _m: None,
    cache_dir: Path | None = None,
    base: Path | None = None,
    fresh: bool = False,
    index_url: str | None = None,
    deadline: Deadline = NO_DEADLINE,
) -> ExistingAnalysis:
    """``base``: the folder the lock's relative paths start from (the project root).

    Only indexes the user configured are contacted (:mod:`.configured`): another index the
    lock names is a skipped source; a wheel the lock places on another host is looked up, by
    its sha256, on the package's configured index, and read from where that index says."""
    cache = cache_dir or default_cache_dir()
    base = base or Path.cwd()
    allowed = configured(index_url)  # (``index_url``: the run's --index-url)
    sources: list[Source] = []
    registry = lock.registry_pins
    from_index = [p for p in registry if p.source == "registry"]
    index_of = {p.name: as_url(p.index, base) for p in from_index if p.index}
    if any(not p.index for p in from_index) and allowed.urls:
        # Poetry and pip name no index for a package from the default one: the configured one.
        for p in from_index:
            if not p.index:
                index_of.setdefault(p.name, allowed.urls[0])
    sources.extend(allowed.skipped(sorted(set(index_of.values())), lock.path))
    unconfigured = tuple(
        sorted(
            (p.name, p.version, clean_url(as_url(p.index, base)), p.line)
            for p in from_index
            if p.index and not allowed.allows(as_url(p.index, base))
        )
    )
    index_of = {n: i for n, i in index_of.items() if allowed.allows(i)}
    clients = {
        i: IndexClient((i,), cache_dir=cache, deadline=deadline) for i in set(index_of.values())
    }
    requires = _requires_from_lock(lock)
    unknown: list[str] = []
    unread_parents: list[str] = []
    to_read: list[tuple[LockPin, IndexFile]] = []
    if not requires:
        for pin in registry:
            if pin.source != "registry":  # git, url: no index, no wheel hash to read by
                unread_parents.append(pin.name)
                sources.append(
                    Source.skipped(
                        "metadata",
                        f"{pin.name}=={pin.version}",
                        f"a {pin.source} source in {lock.path}: its declared ranges were not read",
                    )
                )
                continue
            f = _metadata_file(pin)
            if f is None:
                unknown.append(pin.name)
                sources.append(
                    Source.skipped(
                        "metadata",
                        f"{pin.name}=={pin.version}",
                        f"{lock.path} names no wheel for it",
                    )
                )
                continue
            try:
                to_read.append((pin, _index_file(pin, f, base)))
            except InvalidVersion:
                unknown.append(pin.name)
    progress(f"reading the declared ranges of {len(to_read)} packages")
    # (a wheel on a configured index's origin is read as named, with that index's login)
    reader = IndexClient(allowed.urls, cache_dir=cache, deadline=deadline)
    for pin, wheel in to_read:  # pages to look a wheel up on: read ahead, and read once
        off_index = pin.name in index_of and not allowed.allows_file(wheel.url)
        if off_index and reader.cache.get(wheel, wheel.url + ".metadata") is None:
            clients[index_of[pin.name]].prefetch([pin.name])

    def read(item: tuple[LockPin, IndexFile]) -> list[str] | IndexError_ | Source:
        pin, f = item
        try:
            if allowed.allows_file(f.url):
                return reader.requires_dist(f)
            cached = reader.cache.get(f, f.url + ".metadata")
            if cached is not None:  # known by the wheel's hash: nothing to contact
                return cached
            index = index_of.get(pin.name)
            if index is None:
                return Source.skipped(
                    "metadata",
                    f"{pin.name}=={pin.version}",
                    f"{lock.path} names its wheel on {_host(f.url)}, and its index is not "
                    f"configured for this run: not read ({HOW})",
                )
            listed = _listed(clients[index], pin, f)
            return clients[index].requires_dist(listed)
        except IndexError_ as exc:
            return exc

    with ThreadPoolExecutor(WORKERS) as pool:
        for (pin, _f), meta in zip(to_read, pool.map(read, to_read), strict=True):
            label = f"{pin.name}=={pin.version}"
            if isinstance(meta, Source):
                unknown.append(pin.name)
                sources.append(meta)
                continue
            if isinstance(meta, IndexError_):
                unknown.append(pin.name)
                sources.append(
                    Source.failed(
                        "metadata",
                        label,
                        str(meta),
                        error_code=meta.code,
                        retryable=meta.retryable,
                    )
                )
                continue
            requires[(pin.name, pin.version)] = [Requirement(r) for r in meta]
    for member, reqs in lock.member_requires:
        version = next((p.version for p in lock.pins if p.name == member), "")
        parsed = []
        for r in reqs:
            try:
                parsed.append(Requirement(r))
            except InvalidRequirement:
                continue
        requires[(member, version)] = parsed
    pins = list(lock.packages())
    # Workspace members are graph nodes too (the project -> member -> SDK path), never pins
    # the gate compares: the previous lock's versions hold registry packages only.
    pins += [
        p.as_locked_package()
        for p in lock.pins
        if p.local and p.name != lock.root and p.name in dict(lock.member_requires)
    ]
    graph = build_graph(pins, root_requirements, requires, unknown)

    # Released majors, one index page per package (cached for a day).
    now = time.time()
    names = sorted({p.name for p in from_index})
    not_configured = {p.name for p in from_index if p.name not in index_of and p.index}

    def page(name: str) -> tuple[str, list[Version] | IndexError_ | None, bool]:
        index = index_of.get(name)
        if index is None:
            return name, None, False
        try:
            versions, cached = released_versions(clients[index], index, name, cache, now, fresh)
        except IndexError_ as exc:
            return name, exc, False
        return name, versions, cached

    released: dict[str, list[Version]] = {}
    cached_count = 0
    with ThreadPoolExecutor(WORKERS) as pool:
        for name, result, cached in pool.map(page, names):
            if isinstance(result, IndexError_):
                sources.append(
                    page_failed(name, result, "Check the index the lock names, then re-run.")
                )
            elif result is None:
                if name not in not_configured:  # (those: one skipped source per index)
                    sources.append(
                        Source.skipped("index", name, f"{lock.path} names no index for it")
                    )
            else:
                released[name] = result
                cached_count += cached
    for c in clients.values():
        c.close()
    if names:
        sources.append(
            Source.ok(
                "index",
                f"released versions of {len(released)} packages",
                f"{cached_count} from the cache (under a day old)",
            )
        )
    ok_meta = len(to_read) - sum(
        1 for s in sources if s.kind == "metadata" and s.status.value == "failed"
    )
    if to_read:
        sources.append(
            Source.ok(
                "metadata", f"Requires-Dist of {ok_meta} packages", "by the lock's wheel hashes"
            )
        )
    graph = _with_majors(graph, released)

    unread = sorted(
        {
            f"{e.parent}=={e.parent_version} -> {e.child}"
            for e in lock.edges
            if e.parent in {*unknown, *unread_parents}
        }
    )
    return ExistingAnalysis(graph, tuple(sources), tuple(unread), lock.path, unconfigured)


def _host(url: str) -> str:
    return urllib.parse.urlsplit(clean_url(url)).netloc or "a URL without a host"


def _listed(client: IndexClient, pin: LockPin, f: IndexFile) -> IndexFile:
    """The wheel the lock names, as the configured index lists it (the same file name and
    sha256): the URL it is read from is the index's, not the lock's."""
    want = (f.sha256 or "").lower()
    for listed in client.project_page(pin.name).files_for(f.version):
        if want and listed.filename == f.filename and (listed.sha256 or "").lower() == want:
            return listed
    raise IndexError_(
        f"{f.filename}: {clean_url(client.index_urls[0])} lists no file of that name with the "
        "sha256 the lock gives",
        code="index-not-found",
        retryable=False,
    )


def _with_majors(graph: LockGraph, released: dict[str, list[Version]]) -> LockGraph:
    """Each edge with the majors it admits (:func:`~.analysis.with_majors`), and the graph
    with every package's released majors (what `--check` reports offline)."""
    return replace(
        with_majors(graph, released),
        released_majors={
            n: v.keys() if isinstance(v, ReleasedVersions) else released_major_keys(v)
            for n, v in sorted(released.items())
        },
    )

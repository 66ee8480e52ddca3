"""AG101's first fixes resolved as one set, with the real resolver, before they are offered.

Each first fix is right alone; the user adds all of them. So the caps the groups offer
first (:mod:`agentguard.rules.deps_fix_plan`) are resolved together, beside the project's
own requirements, on the same Python floor, index and flags as the lock:

- every cap holds its locked version: the lock just written is the witness, no run;
- otherwise `uv pip compile` of requirements + caps (the new lock as preferences). When
  the set does not resolve, the groups are added one at a time (the ones that keep the
  locked major first, then by name), each with its candidates in rank order; a group none
  of whose candidates resolves with the caps kept so far is a conflict, named as such.

At most :data:`MAX_RUNS` resolver runs, within the run's deadline; a check that could not
finish is "unchecked" (with why), never "resolves".

What the resolver said of a set is remembered by what it depends on (the requirements, the
caps, the Python floor, the index, the resolver flags and binary), in a cache sealed with
the user's cache key (:mod:`agentguard.lock.fix_memory`): a set that resolved is used again
while the index still lists every file of its solution unyanked; a set that did not, while
every index page the resolver read for it is byte for byte the same (both read from the
index on this run, not from the cache). An index change sends the set to the resolver again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from packaging.version import InvalidVersion, Version

from agentguard.facts.fixes import (
    CONFLICT,
    RESOLVES,
    UNCHECKED,
    FixGroup,
    FixSetCheck,
    GroupKey,
)
from agentguard.facts.pins import LockedPackage
from agentguard.lock.backend import ResolveRequest, ResolverError, UvRun, uv_binary
from agentguard.lock.fix_memory import FixMemory
from agentguard.lock.index import IndexClient, IndexError_, ProjectPage
from agentguard.lock.urls import clean_url

MAX_RUNS = 6


class Unchecked(Exception):
    """The resolver could not say (an index error, the deadline): neither yes nor no."""


Resolve = Callable[[tuple[str, ...]], bool]


def check_fix_set(
    groups: Mapping[GroupKey, FixGroup], resolve: Resolve, max_runs: int = MAX_RUNS
) -> FixSetCheck:
    """Which candidate each group offers first so that all of them resolve together."""
    live = {k: g for k, g in groups.items() if g.candidates}
    first = {k: 0 for k in live}
    if all(g.candidates[0].locked for g in live.values()):
        return FixSetCheck(RESOLVES, "every cap holds the locked version", first)
    runs = 0

    def lines(choice: Mapping[GroupKey, int]) -> tuple[str, ...]:
        return tuple(live[k].candidates[i].text for k, i in sorted(choice.items(), key=_order))

    try:
        runs += 1
        if resolve(lines(first)):
            return FixSetCheck(RESOLVES, "resolved together", first, resolver_runs=runs)
        chosen = {k: 0 for k, g in live.items() if g.candidates[0].locked}
        conflicts: dict[GroupKey, tuple[str, ...]] = {}
        for key in sorted((k for k in live if k not in chosen), key=_order):
            for i, cap in enumerate(live[key].candidates):
                trial = {**chosen, key: i}
                if cap.locked and all(live[k].candidates[c].locked for k, c in chosen.items()):
                    ok = True  # the lock holds every one of these
                else:
                    if runs >= max_runs:
                        raise Unchecked(f"more than {max_runs} resolver runs needed")
                    runs += 1
                    ok = resolve(lines(trial))
                if ok:
                    chosen = trial
                    break
            else:
                conflicts[key] = tuple(
                    live[k].candidates[c].text
                    for k, c in sorted(chosen.items(), key=_order)
                    if not live[k].candidates[c].locked
                )
    except Unchecked as exc:
        return FixSetCheck(UNCHECKED, str(exc), resolver_runs=runs)
    if conflicts:
        names = ", ".join(sorted({k[0] for k in conflicts}))
        return FixSetCheck(
            CONFLICT, f"no cap of {names} resolves with the others", chosen, conflicts, runs
        )
    return FixSetCheck(RESOLVES, "resolved together, group by group", chosen, resolver_runs=runs)


def _order(item: tuple[GroupKey, int] | GroupKey) -> tuple[str, str, str]:
    key = item[0] if isinstance(item[0], tuple) else item
    assert isinstance(key, tuple)
    return (str(key[0]), str(key[1] or ""), str(key[2]))


def checker(
    request: ResolveRequest, pins: Iterable[LockedPackage], client: IndexClient, root: Path
) -> Callable[[Mapping[GroupKey, FixGroup]], FixSetCheck]:
    """The first fixes of a lock of ``root`` resolved as one set against ``pins``, with the
    lock's own request, through ``client``; answers remembered in the user's cache."""
    from agentguard.lock.index import default_cache_dir

    resolve = UvResolve(request, pins, client, default_cache_dir(), root)
    return lambda groups: check_fix_set(groups, resolve)


class UvResolve:
    """:data:`Resolve` with uv: ``request`` is the lock's own (floor, index, flags),
    ``pins`` the lock's pins (the resolver's preferences), ``client`` the run's index
    reader (its index is the one resolved against, and it checks a remembered answer),
    ``cache`` the folder answers are kept in (None: none), ``root`` the project locked
    (the cache key is never one inside it)."""

    def __init__(
        self,
        request: ResolveRequest,
        pins: Iterable[LockedPackage],
        client: IndexClient,
        cache: Path | None,
        root: Path | None = None,
    ) -> None:
        self.request = request
        self.pins = tuple(pins)
        self.client = client
        self.memory = FixMemory(cache, root)
        self.cached = False
        self.runs = 0

    def _key(self, caps: tuple[str, ...]) -> str:
        r = self.request
        stamp = {
            "requirements": sorted(r.requirements),
            "caps": sorted(caps),
            "python": r.python_version,
            "index": [clean_url(u) for u in self.client.index_urls_given],
            "find_links": list(self.client.find_links),
            "no_index": r.no_index,
            "only_binary": r.only_binary,
            "exclude_newer": r.exclude_newer,
            "resolver": _resolver_stamp(),
        }
        return hashlib.sha256(json.dumps(stamp, sort_keys=True).encode()).hexdigest()

    def __call__(self, caps: tuple[str, ...]) -> bool:
        key = self._key(caps)
        remembered = self.memory.solution(key)
        if remembered is not None and self._still_listed(remembered):
            self.cached = True
            return True
        if self.memory.failed(key, self.client):
            self.cached = True
            return False
        preferences = "".join(
            f"{p.name}=={p.version}{f' ; {p.marker}' if p.marker else ''}\n" for p in self.pins
        )
        req = dataclasses.replace(
            self.request,
            requirements=(*_without(self.request.requirements, caps), *caps),
            preferences=preferences,
            upgrade=False,
            upgrade_packages=(),
        )
        self.runs += 1
        run: UvRun | None = None
        try:
            run = UvRun(req, verbose=True)  # (its log names the pages it read)
            solved = run.result()
        except ResolverError as exc:
            if exc.code == "unresolvable" and run is not None:
                with contextlib.suppress(IndexError_):
                    self.memory.remember_failure(key, self.client, run.log)
                return False
            raise Unchecked(f"the resolver did not finish: {exc.code}") from None
        self.memory.remember_solution(key, solved.pins)
        return True

    def _still_listed(self, pins: list[LockedPackage]) -> bool:
        """True when the index lists, unyanked, a file of every pin with its hash (read on
        this run: the lock's pages are in hand, the few others are read now)."""
        client = self.client
        names = sorted({p.name for p in pins})
        pages: dict[str, ProjectPage] = {}

        def read(name: str) -> None:
            with contextlib.suppress(IndexError_):
                pages[name] = client.project_page(name)

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(read, names))
        for pin in pins:
            wanted = {h.split(":", 1)[1] for h in pin.hashes if h.startswith("sha256:")}
            page = pages.get(pin.name)
            try:
                version = Version(pin.version)
            except InvalidVersion:
                return False
            if page is None or not page.lists(version, wanted):
                return False
        return True


@functools.lru_cache(maxsize=1)
def _resolver_stamp() -> str:
    """The resolver binary (path, size, time): another uv may answer otherwise."""
    try:
        binary = uv_binary()
        st = os.stat(binary)
    except Exception:  # (no uv: the run itself says so)
        return ""
    return f"{binary}\0{st.st_size}\0{st.st_mtime_ns}"


def _without(requirements: Iterable[str], caps: Iterable[str]) -> tuple[str, ...]:
    """The project's own requirements less those on a capped package: a cap on a package
    the project names itself replaces the project's line (``mcp==2.3.0`` -> the cap), it is
    not added beside it (the two would exclude each other by construction)."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    def name(line: str) -> str | None:
        try:
            return canonicalize_name(Requirement(line.split(";")[0].strip()).name)
        except InvalidRequirement:
            return None

    capped = {n for n in (name(c) for c in caps) if n is not None}
    return tuple(r for r in requirements if name(r) not in capped)

"""What an install from a project's own lock puts into an environment (for AG110).

uv.lock: the packages reachable from the project's own (non-development) dependencies,
each with the markers of the edges that lead to it; poetry.lock: the packages of the
``main`` group (Poetry 2 records the groups), with the marker Poetry records; pylock.toml:
every package with its own marker (PEP 751 already describes one install)."""

from __future__ import annotations

from collections import deque

from agentguard.lock.readers.interface import ExistingLock

InstallPin = tuple[str, str | None, str | None]  # (name, version or None, marker or None)


def installed_by(lock: ExistingLock) -> list[InstallPin]:
    if lock.format == "uv.lock" and lock.root is not None:
        return _reachable(lock)
    pins = [p for p in lock.pins if not p.local]
    if lock.format == "poetry.lock" and any(p.groups for p in pins):
        pins = [p for p in pins if "main" in p.groups]
    return [(p.name, p.version or None, p.marker) for p in pins]


MAX_STEPS = 100_000


def _and(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return f"({a}) and ({b})"


def _reachable(lock: ExistingLock) -> list[InstallPin]:
    """From the root through the lock's edges (the root's extras not followed: an install
    without extras). Each package gets the markers of the paths that reach it (a path's
    marker: its edges' markers and-ed); one unconditional path makes it unconditional."""
    out_edges: dict[str, list[tuple[str, str | None]]] = {}
    for e in lock.edges:
        if e.extra is None:
            out_edges.setdefault(e.parent, []).append((e.child, e.marker))
    root = str(lock.root)
    markers: dict[str, set[str] | None] = {root: None}
    queue: deque[tuple[str, str | None]] = deque([(root, None)])
    steps = 0
    while queue and steps < MAX_STEPS:
        steps += 1
        node, path_marker = queue.popleft()
        for child, edge_marker in out_edges.get(node, []):
            m = _and(path_marker, edge_marker)
            have = markers.get(child, set())
            if have is None:
                continue  # already unconditional
            if m is None:
                markers[child] = None
            elif m in have:
                continue
            else:
                markers[child] = {*have, m}
            queue.append((child, m))
    out: list[InstallPin] = []
    for p in lock.pins:
        if p.local or p.name not in markers:
            continue
        found = markers[p.name]
        if found is None:
            marker = None
        elif len(found) == 1:
            marker = next(iter(found))
        else:
            marker = " or ".join(f"({x})" for x in sorted(found))
        out.append((p.name, p.version or None, marker))
    return out

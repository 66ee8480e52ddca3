"""The dependency tree of each npm server entry in the lock flow: kept from the lock when
the entry is unchanged (no npm run: a re-lock of unchanged inputs writes the same bytes,
as fast as before), resolved through a real npm lock (:mod:`.npm_tree`) when the server's
version, integrity or registry changed, when the kept tree does not agree with its entry,
or when ``--upgrade`` (``--upgrade-package NAME``) asks for a move."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_tree import NpmTree, problems
from agentguard.findings import JSONValue
from agentguard.lock.deadline import Deadline
from agentguard.lock.servers.npm_tree import TreeError, resolve_tree

__all__ = ["TreeError", "Trees", "kept_tree", "tree_fact", "with_tree"]

TreeKey = tuple[str, str, str | None, str | None]


class Trees:
    """The trees one run resolved, by (package, version, integrity, registry): two launches
    of the same server version run npm once (the second waits for the first)."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[TreeKey, threading.Lock] = {}
        self._done: dict[TreeKey, NpmTree] = {}

    def get(self, key: TreeKey, make: Callable[[], NpmTree]) -> NpmTree:
        with self._guard:
            one = self._locks.setdefault(key, threading.Lock())
        with one:
            if key not in self._done:
                self._done[key] = make()  # (a failure is not kept: the next asks again)
            return self._done[key]


def kept_tree(pin: ServerPin, before: ServerPin | None, moving: bool) -> NpmTree | None:
    """The tree the lock recorded for ``before``, when it still stands for ``pin``."""
    if before is None or moving or before.tree is None:
        return None
    same = (before.version, before.integrity, before.registry) == (
        pin.version,
        pin.integrity,
        pin.registry,
    )
    if not same or problems(before.tree, pin.package, pin.version, pin.integrity):
        return None
    return before.tree


def with_tree(
    pin: ServerPin,
    before: ServerPin | None,
    moving: bool,
    registry: str,
    deadline: Deadline,
    trees: Trees | None = None,
    project: Path | None = None,
) -> ServerPin:
    """``pin`` with its tree (kept, or resolved by npm from ``registry``, the URL as
    configured: a login in it reaches npm through its environment only). Raises
    :class:`TreeError`."""
    if pin.kind != NPM:
        return pin
    tree = kept_tree(pin, before, moving)
    if tree is None:
        integrity = pin.integrity
        assert integrity is not None  # (npm.resolve checked it)

        def make() -> NpmTree:
            return resolve_tree(pin.package, pin.version, integrity, registry, deadline, project)

        key = (pin.package, pin.version, integrity, pin.registry)
        tree = (trees or Trees()).get(key, make)
    return replace(pin, tree=tree)


def tree_fact(pin: ServerPin) -> dict[str, JSONValue]:
    """What the report's facts say of a pin's tree (npm only)."""
    if pin.kind != NPM:
        return {}
    if pin.tree is None:
        return {"tree": None}
    unknown = len(pin.tree.unknown)
    return {"tree": {"packages": len(pin.tree.packages), "no_integrity": unknown}}

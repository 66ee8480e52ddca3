"""The dependency tree of each npm server entry in the lock flow: kept from the lock when
the entry is unchanged (no npm run: a re-lock of unchanged inputs writes the same bytes,
as fast as before), resolved through a real npm lock (:mod:`.npm_tree`) when the server's
version, integrity or registry changed, when the kept tree does not agree with its entry,
or when ``--upgrade`` (``--upgrade-package NAME``) asks for a move."""

from __future__ import annotations

from dataclasses import replace

from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_tree import NpmTree, problems
from agentguard.findings import JSONValue
from agentguard.lock.deadline import Deadline
from agentguard.lock.servers.npm_tree import TreeError, resolve_tree

__all__ = ["TreeError", "kept_tree", "tree_fact", "with_tree"]


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
    pin: ServerPin, before: ServerPin | None, moving: bool, registry: str, deadline: Deadline
) -> ServerPin:
    """``pin`` with its tree (kept, or resolved by npm from ``registry``, the URL as
    configured: a login in it reaches npm through its environment only). Raises
    :class:`TreeError`."""
    if pin.kind != NPM:
        return pin
    tree = kept_tree(pin, before, moving)
    if tree is None:
        assert pin.integrity is not None  # (npm.resolve checked it)
        tree = resolve_tree(pin.package, pin.version, pin.integrity, registry, deadline)
    return replace(pin, tree=tree)


def tree_fact(pin: ServerPin) -> dict[str, JSONValue]:
    """What the report's facts say of a pin's tree (npm only)."""
    if pin.kind != NPM:
        return {}
    if pin.tree is None:
        return {"tree": None}
    unknown = len(pin.tree.unknown)
    return {"tree": {"packages": len(pin.tree.packages), "no_integrity": unknown}}

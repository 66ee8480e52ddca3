"""The ``tree`` of an npm entry of ``mcp.lock.json``: the server's own dependency tree as
npm resolved it (:class:`~agentguard.facts.npm_tree.NpmTree`), written one package a line
and read back. The lock is the pull request's file: every package is checked as strictly
as npm's own answer (:mod:`.npm_tree_shape`; a field a tree package does not have is
refused), and a tree that does not parse is a malformed lock. Whether a well-formed tree
agrees with its entry (the server in it, the digest) is ``lock --check``'s finding
(:func:`agentguard.facts.npm_tree.problems`), not a read error."""

from __future__ import annotations

import json
import re
import secrets
from typing import Any

from agentguard.facts.npm_tree import NpmTree
from agentguard.lock.servers.npm_tree_shape import (
    MAX_TREE_PACKAGES,
    OWN_FIELDS,
    ShapeError,
    package,
)

_DIGEST = re.compile(r"^sha256:[0-9a-f]{64}\Z")
_PLACEHOLDER = re.compile(r'"tree-package-([0-9a-f]{32})-(\d+)"')
_KEYS = {"lockfile-version", "digest", "packages"}


class TreeLockError(ValueError):
    pass


def to_lock(tree: NpmTree) -> dict[str, Any]:
    return {
        "lockfile-version": tree.lockfile_version,
        "digest": tree.digest,
        "packages": [p.as_json() for p in tree.packages],
    }


def from_lock(value: object, where: str) -> NpmTree:
    if not isinstance(value, dict) or set(value) != _KEYS:
        raise TreeLockError(f"{where}: not a tree (lockfile-version, digest, packages)")
    version, digest, packages = value["lockfile-version"], value["digest"], value["packages"]
    if version not in (2, 3) or isinstance(version, bool):
        raise TreeLockError(f"{where}.lockfile-version: not 2 or 3")
    if not isinstance(digest, str) or not _DIGEST.match(digest):
        raise TreeLockError(f"{where}.digest: not a sha256 digest")
    if not isinstance(packages, list) or len(packages) > MAX_TREE_PACKAGES:
        raise TreeLockError(f"{where}.packages: not a list of at most {MAX_TREE_PACKAGES}")
    out = []
    for i, entry in enumerate(packages):
        at = f"{where}.packages[{i}]"
        if not isinstance(entry, dict) or not set(OWN_FIELDS) <= set(entry):
            raise TreeLockError(f"{at}: not a package ({', '.join(OWN_FIELDS)})")
        try:
            out.append(package(entry["path"], entry, at, strict=True))
        except ShapeError as exc:
            raise TreeLockError(str(exc)) from None
    return NpmTree(tuple(out), digest, int(version))


class OneLine:
    """Writes each tree package on a line of its own (a reviewable diff: a moved dependency
    is one changed line): :meth:`mark` swaps the packages of an entry for placeholder
    strings, :meth:`fill` puts their compact JSON back in the rendered text. The
    placeholders carry a fresh random nonce, so no string of the lock (a server's tool
    description) can be taken for one."""

    def __init__(self) -> None:
        self.nonce = secrets.token_hex(16)
        self.lines: list[str] = []

    def mark(self, entry: dict[str, Any]) -> dict[str, Any]:
        tree = entry.get("tree")
        if not isinstance(tree, dict):
            return entry
        marks = []
        for p in tree["packages"]:
            marks.append(f"tree-package-{self.nonce}-{len(self.lines)}")
            self.lines.append(json.dumps(p, ensure_ascii=False, separators=(", ", ": ")))
        return {**entry, "tree": {**tree, "packages": marks}}

    def fill(self, text: str) -> str:
        if not self.lines:
            return text
        # (one pattern for every nonce, the nonce compared after: a pattern that holds
        # it is a new text each run, compiled anew and kept by no table of programs)
        return _PLACEHOLDER.sub(
            lambda m: self.lines[int(m.group(2))] if m.group(1) == self.nonce else m.group(0),
            text,
        )

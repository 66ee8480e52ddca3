"""The project's own install of a launched npm package. Before it asks the registry, npx
looks in the tree of the folder it starts in (where the agent starts it: the project) and
runs a package it finds there at the launched version, at any depth of ``node_modules``:
whatever the project installed, from wherever its own lock took it (a git repository, a
tarball elsewhere, a workspace folder of the pull request's), or a copy committed into
``node_modules``. So a launch of a package the project itself installs is not the package
``mcp.lock.json`` verified: it is not verifiably pinned (AG142, AG310).

What is read, through the safe-open path and capped: the root ``package.json`` (its own
name, its dependency tables, and the names of its workspace folders), the package locks npm installs
from or writes (``package-lock.json``, ``npm-shrinkwrap.json``,
``node_modules/.package-lock.json``: every package's name) and the names of the installed
tree at any depth (``node_modules``, as npm walks it). Only names the project launches count. A file that cannot be read makes
every npm launch unknown (a failed source), never "not installed"."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.facts.launch_argv import NPM, installs_setting
from agentguard.findings import Source

Setting = tuple[str, str]
_DEP_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "node_modules/.package-lock.json")
MAX_WORKSPACES = 2000  # workspace folders read for their package's name
MAX_NAMES = 200_000  # entries read in the project's installed tree (node_modules)
MAX_DEPTH = 64  # node_modules nested in node_modules


class _Unknown(Exception):
    """What the project installs cannot be told (a file not read, a workspace glob)."""


def _json(root: Path, name: str) -> Any:
    try:
        return json.loads(safeio.read_text(root / name, root=root))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise _Unknown(f"{name} could not be read") from exc


def _line_of(root: Path, name: str, package: str) -> int:
    """The first line of ``name`` that names ``package`` as a key or a path's end."""
    try:
        text = safeio.read_text(root / name, root=root)
    except (OSError, ValueError):
        return 1
    for n, line in enumerate(text.splitlines(), 1):
        if f'"{package}"' in line or f'/{package}"' in line:
            return n
    return 1


def _workspace_folders(root: Path, patterns: object) -> list[str]:
    if isinstance(patterns, dict):
        patterns = patterns.get("packages", [])
    if not isinstance(patterns, list):
        raise _Unknown("package.json's `workspaces` is not a list")
    folders: list[str] = []
    for pattern in patterns:
        if not isinstance(pattern, str) or ".." in pattern.split("/"):
            raise _Unknown("a workspace of package.json cannot be read")
        base = pattern.rstrip("/")
        if base.endswith("/*") and not re.search(r"[*?\[{!]", base[:-2]):
            parent = root / base[:-2]
            try:
                with os.scandir(parent) as it:
                    folders += [f"{base[:-2]}/{e.name}" for e in it if e.is_dir()]
            except FileNotFoundError:
                continue
            except OSError as exc:
                raise _Unknown(f"the workspace folder {base[:-2]} could not be read") from exc
        elif not re.search(r"[*?\[{!]", base):
            folders.append(base)
        else:
            raise _Unknown(f"package.json's workspace {pattern[:80]!r} is a glob not expanded")
        if len(folders) > MAX_WORKSPACES:
            raise _Unknown(f"package.json names more than {MAX_WORKSPACES} workspaces")
    return folders


def _from_manifest(root: Path) -> Iterable[tuple[str, str]]:
    """(name, where) of each package the root package.json installs."""
    doc = _json(root, "package.json")
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise _Unknown("package.json is not a table")
    if isinstance(doc.get("name"), str):
        yield doc["name"], "package.json"  # (the project itself: npx takes it as installed)
    for field in _DEP_FIELDS:
        table = doc.get(field)
        if isinstance(table, dict):
            for name in table:
                yield str(name), "package.json"
    if "workspaces" in doc:
        for folder in _workspace_folders(root, doc["workspaces"]):
            member = _json(root, f"{folder}/package.json")
            if isinstance(member, dict) and isinstance(member.get("name"), str):
                yield member["name"], f"{folder}/package.json"


def _from_lock(root: Path, name: str) -> Iterable[tuple[str, str]]:
    doc = _json(root, name)
    if doc is None:
        return
    if not isinstance(doc, dict):
        raise _Unknown(f"{name} is not a table")
    packages = doc.get("packages")
    if isinstance(packages, dict):
        for path, entry in packages.items():
            own = entry.get("name") if isinstance(entry, dict) else None
            if isinstance(own, str):
                yield own, name
            if isinstance(path, str) and "node_modules/" in path:
                yield path.rsplit("node_modules/", 1)[-1], name
    stack = [doc.get("dependencies")]  # (lockfileVersion 1: nested by name)
    while stack:
        table = stack.pop()
        if isinstance(table, dict):
            for dep, entry in table.items():
                yield str(dep), name
                if isinstance(entry, dict):
                    stack.append(entry.get("dependencies"))


def _inside(real: str, root: str) -> bool:
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)


def _packages_in(folder: str, count: int) -> tuple[list[tuple[str, str]], int]:
    """(name, path) of each package a `node_modules` folder holds (a scope's one level
    down; pnpm's `.pnpm/<id>/node_modules` too, as npm reads it through pnpm's links)."""
    out: list[tuple[str, str]] = []
    with os.scandir(folder) as it:
        entries = list(it)
    for e in entries:
        count += 1
        if e.name == ".pnpm" and e.is_dir():
            with os.scandir(e.path) as ids:
                out += [("", os.path.join(i.path, "node_modules")) for i in ids]
        elif e.name.startswith("@") and e.is_dir():
            with os.scandir(e.path) as scoped:
                out += [(f"{e.name}/{p.name}", p.path) for p in scoped]
        elif not e.name.startswith("."):
            out.append((e.name, e.path))
    return out, count + len(out)


def _from_node_modules(root: Path) -> Iterable[tuple[str, str]]:
    """(name, where) of each package in the project's installed tree, at any depth, as
    npm's reader of an installed tree walks it (a link followed while it stays inside the
    project; one that leads out, or a tree past the caps, is unknown)."""
    real_root = os.path.realpath(root)
    found: list[tuple[str, str]] = []
    seen: set[str] = set()
    count = 0
    stack = [(os.path.join(real_root, "node_modules"), "node_modules", 0)]
    try:
        while stack:
            folder, shown, depth = stack.pop()
            real = os.path.realpath(folder)
            if real in seen or not os.path.isdir(real):
                continue
            if not _inside(real, real_root):
                raise _Unknown(f"{shown} leads out of the project")
            if depth > MAX_DEPTH or count > MAX_NAMES:
                raise _Unknown(f"{shown}: the installed tree is past what is read")
            seen.add(real)
            packages, count = _packages_in(real, count)
            for name, path in packages:
                if name:
                    found.append((name, shown))
                    nested = os.path.join(path, "node_modules")
                    stack.append((nested, f"{shown}/{name}/node_modules", depth + 1))
                else:  # (pnpm's store folder: its node_modules)
                    stack.append((path, f"{shown}/.pnpm/node_modules", depth + 1))
    except OSError as exc:
        raise _Unknown("node_modules could not be read") from exc
    return found


def local_installs(root: Path, launched: Iterable[str]) -> tuple[list[Setting], list[Source]]:
    """A setting for each launched package (``launched``: npm names) the project installs
    itself; an unknown setting (every npm launch) and a failed source when that cannot be
    told."""
    wanted = {n.lower() for n in launched}
    if not wanted:
        return [], []
    found: dict[str, str] = {}
    try:
        for reader in (_from_manifest(root), *(_from_lock(root, n) for n in _LOCKS)):
            for name, where in reader:
                if name.lower() in wanted:
                    found.setdefault(name.lower(), where)
        for name, where in _from_node_modules(root):
            if name.lower() in wanted:
                found.setdefault(name.lower(), where)
    except _Unknown as exc:
        said = f"{exc}: what it sets for npx (the project's own install) is unknown"
        failed = Source.failed(
            "file",
            "package.json",
            f"{said}: every npm launch is unknown",
            error_code="npm-install-unreadable",
            retryable=False,
            remedy="Fix the project's package.json or lock, then run agentguard again.",
        )
        return [(NPM, said)], [failed]
    out = []
    for name, where in sorted(found.items()):
        line = _line_of(root, where, name) if where.endswith(".json") else None
        out.append((NPM, installs_setting(f"{where}:{line}" if line else where, name)))
    return out, []

"""Whether `uv lock` of a project would run code of the checkout: the build backend of the
project itself or of a workspace member whose metadata is dynamic.

uv reads a local package's dependencies from its ``pyproject.toml`` when ``[project]``
declares them; when a field it locks by is ``dynamic`` (``dependencies`` from a file, a
version from git: see ``_NOT_LOCKED`` for the ones it never asks for) it asks the package's
build backend, which is the
checkout's code (``backend-path = ["."]``) or code the checkout chooses. ``--no-build``
does not stop that for the project and its members: it covers the packages uv downloads.
So under ``--only-binary`` / ``build = false`` ("no package code runs while locking"),
`uv lock` is not started on such a project (:class:`~agentguard.lock.uv_lock_run.UvLockRun`
reports why). A path dependency's own build uv refuses under ``--no-build`` by itself.

What cannot be read (a member's ``pyproject.toml`` unreadable or not TOML, a members
pattern that leaves the project, more members than :data:`MAX_MEMBERS`, patterns that
visit more than :data:`MAX_ENTRIES` folder entries) is taken as a package that may be
built: never a quiet yes. Members are found as uv's glob finds them (:func:`_glob`), not as
Python's does: a hidden folder, `**` at any depth, an exclude by the path found.
"""

from __future__ import annotations

import fnmatch
import glob
import os
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from agentguard import safeio
from agentguard.safeio import MAX_CONFIG_BYTES

MAX_MEMBERS = 1000  # workspace members looked at (past this: "may be built")
MAX_ENTRIES = (
    20_000  # folder entries the members patterns may visit, all told (past this: "may be built")
)
# `dynamic` fields uv never asks a backend for while locking (measured: it asks for
# `version`, `dependencies`, `optional-dependencies`, `requires-python`); any other entry,
# an unknown name included, is taken as one it may ask for
_NOT_LOCKED = frozenset(
    {
        "description", "readme", "license", "license-files", "authors", "maintainers",
        "keywords", "classifiers", "urls", "scripts", "gui-scripts", "entry-points",
        "import-names", "import-namespaces",
    }
)  # fmt: skip


class _TooMany(Exception):
    pass


def _read(path: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(safeio.read_text(path, root=root, cap=MAX_CONFIG_BYTES))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    return data


def _dynamic(doc: dict[str, Any]) -> bool:
    """Whether uv may ask the backend for a field of ``[project]`` (a `dynamic` that is not
    a list of names it never locks by)."""
    project = doc.get("project")
    if not isinstance(project, dict) or "dynamic" not in project:
        return False
    dynamic = project["dynamic"]
    if not isinstance(dynamic, list):
        return True
    return not all(isinstance(f, str) and f.strip().lower() in _NOT_LOCKED for f in dynamic)


def _patterns(doc: dict[str, Any], key: str) -> list[str] | None:
    tool = doc.get("tool")
    uv = tool.get("uv") if isinstance(tool, dict) else None
    workspace = uv.get("workspace") if isinstance(uv, dict) else None
    if not isinstance(workspace, dict):
        return []
    value = workspace.get(key, [])
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        return None
    return value


def built_by_uv_lock(root: Path) -> str | None:
    """The first local package (its ``pyproject.toml``, relative to ``root``) whose build
    backend `uv lock` of ``root`` would run, and why; None when there is none."""
    doc = _read(root / "pyproject.toml", root)
    if doc is None:
        return "pyproject.toml (it cannot be read as TOML)"
    if _dynamic(doc):
        return "pyproject.toml (its metadata is dynamic)"
    members, excluded = _patterns(doc, "members"), _patterns(doc, "exclude")
    if members is None or excluded is None:
        return "pyproject.toml (its workspace members are not a list of patterns)"
    if len(members) + len(excluded) > MAX_MEMBERS:
        return f"pyproject.toml (more than {MAX_MEMBERS} workspace patterns)"
    # uv excludes by the path its glob found, never by where a link leads; `*` crosses
    # folders. A pattern is read as uv was seen to read it (`./libs/m` and `libs/m/` are
    # `libs/m`); one written otherwise (`libs/./m`, `libs//m`) excludes nothing here
    skips = [re.compile(fnmatch.translate(x)) for x in map(_as_uv, excluded) if x is not None]
    real = os.path.realpath(root)
    seen, budget = 0, [MAX_ENTRIES]
    for pattern in members:
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            return f"pyproject.toml (the workspace member pattern {pattern!r} leaves the project)"
        try:
            matches = _glob(real, pattern, budget)
        except _TooMany:
            return f"pyproject.toml (the workspace member pattern {pattern!r} visits more than {MAX_ENTRIES} entries)"
        for rel in matches:
            if any(skip.match(rel) for skip in skips):
                continue
            found = os.path.realpath(os.path.join(real, rel))
            if found == real or not os.path.isdir(found):
                continue
            if not safeio.inside(found, real):
                return f"{rel} (a workspace member outside the project)"
            seen += 1
            if seen > MAX_MEMBERS:
                return f"pyproject.toml (more than {MAX_MEMBERS} workspace members)"
            member = Path(found) / "pyproject.toml"
            if not member.is_file():
                continue  # (uv refuses a member without one: nothing is built)
            member_doc = _read(member, root)
            if member_doc is None:
                return f"{rel}/pyproject.toml (it cannot be read as TOML)"
            if _dynamic(member_doc):
                return f"{rel}/pyproject.toml (its metadata is dynamic)"
    return None


def _as_uv(pattern: str) -> str | None:
    trimmed = pattern.removeprefix("./")
    trimmed = trimmed[:-1] if trimmed.endswith("/") else trimmed
    return trimmed if trimmed and _clean(trimmed) == trimmed else None


def _clean(pattern: str) -> str:
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    return "/".join(parts)


def _glob(real: str, pattern: str, budget: list[int]) -> list[str]:
    """The paths (relative to ``real``) uv's glob finds for a members pattern: `*`, `?` and
    `[...]` match a name with a leading dot too, `**` any depth of folders (itself
    included), and links to folders are followed. Raises _TooMany once ``budget`` (entries
    left to visit, shared by the patterns) is spent."""
    parts = [p for p in pattern.split("/") if p not in ("", ".")]
    if not parts:
        return []

    def names(folder: str) -> list[str]:
        budget[0] -= 1
        try:
            found = sorted(os.listdir(os.path.join(real, folder) if folder else real))
        except OSError:
            return []
        budget[0] -= len(found)
        if budget[0] < 0:
            raise _TooMany
        return found

    def walk(folder: str, i: int) -> list[str]:
        budget[0] -= 1
        if budget[0] < 0:
            raise _TooMany
        if i == len(parts):
            return [folder]
        part = parts[i]
        here = os.path.join(real, folder) if folder else real
        if part == "**":
            out = walk(folder, i + 1)
            for name in names(folder):
                sub = os.path.join(folder, name) if folder else name
                if os.path.isdir(os.path.join(here, name)):
                    out += walk(sub, i)  # (a link loop ends at MAX_ENTRIES)
            return out
        if not glob.has_magic(part):
            sub = os.path.join(folder, part) if folder else part
            return walk(sub, i + 1) if os.path.lexists(os.path.join(here, part)) else []
        out = []
        for name in names(folder):
            if fnmatch.fnmatchcase(name, part):
                out += walk(os.path.join(folder, name) if folder else name, i + 1)
        return out

    return list(dict.fromkeys(walk("", 0)))

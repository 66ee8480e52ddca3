"""Whether `uv lock` of a project would run code of the checkout: the build backend of the
project itself or of a workspace member whose metadata is dynamic.

uv reads a local package's dependencies from its ``pyproject.toml`` when ``[project]``
declares them; when a field is ``dynamic`` (``dependencies`` from a file, a version from
git, anything a backend computes) it asks the package's build backend, which is the
checkout's code (``backend-path = ["."]``) or code the checkout chooses. ``--no-build``
does not stop that for the project and its members: it covers the packages uv downloads.
So under ``--only-binary`` / ``build = false`` ("no package code runs while locking"),
`uv lock` is not started on such a project (:class:`~agentguard.lock.uv_lock_run.UvLockRun`
reports why). A path dependency's own build uv refuses under ``--no-build`` by itself.

What cannot be read (a member's ``pyproject.toml`` unreadable or not TOML, a members
pattern that leaves the project, more members than :data:`MAX_MEMBERS`) is taken as a
package that may be built: never a quiet yes.
"""

from __future__ import annotations

import glob
import itertools
import os
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


def _read(path: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(safeio.read_text(path, root=root, cap=MAX_CONFIG_BYTES))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    return data


def _dynamic(doc: dict[str, Any]) -> bool:
    project = doc.get("project")
    return isinstance(project, dict) and bool(project.get("dynamic"))


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
    real = os.path.realpath(root)
    skip = {os.path.realpath(p) for pat in excluded for p in _glob(real, pat)}
    seen = 0
    for pattern in members:
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            return f"pyproject.toml (the workspace member pattern {pattern!r} leaves the project)"
        for folder in _glob(real, pattern):
            found = os.path.realpath(folder)
            if found in skip or found == real or not os.path.isdir(found):
                continue
            if not safeio.inside(found, real):
                return f"{pattern} (a workspace member outside the project)"
            seen += 1
            if seen > MAX_MEMBERS:
                return f"pyproject.toml (more than {MAX_MEMBERS} workspace members)"
            rel = os.path.relpath(found, real)
            member = Path(found) / "pyproject.toml"
            if not member.is_file():
                continue  # (uv refuses a member without one: nothing is built)
            member_doc = _read(member, root)
            if member_doc is None:
                return f"{rel}/pyproject.toml (it cannot be read as TOML)"
            if _dynamic(member_doc):
                return f"{rel}/pyproject.toml (its metadata is dynamic)"
    return None


def _glob(real: str, pattern: str) -> list[str]:
    found = itertools.islice(glob.iglob(pattern, root_dir=real), MAX_MEMBERS + 1)
    return [os.path.join(real, p) for p in sorted(found)]

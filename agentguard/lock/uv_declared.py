"""What a uv project declares, in the form uv.lock records it (:mod:`.uv_records`): the
root package and every workspace member, each with the sources that apply to it.

Nothing here runs anything from the project: dynamic dependencies a build backend computes
are *unknown* (``UvDeclared.records`` is None, with the reason), never re-derived."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.utils import canonicalize_name

from agentguard import safeio
from agentguard.errors import UsageError
from agentguard.lock.uv_records import declared_records, sources_of, unlowered_names
from agentguard.safeio import MAX_CONFIG_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


@dataclass(frozen=True)
class UvDeclared:
    """One package's requirements as uv records them. ``records`` None: not known here
    (``why``); ``skip``: names whose source is a list, left out of the comparison."""

    records: tuple[str, ...] | None
    skip: frozenset[str] = frozenset()
    why: str | None = None
    extras_unknown: bool = False  # dynamic optional dependencies: compare the rest only


def _load(py: Path, root: Path) -> dict[str, Any] | None:
    try:
        data = tomllib.loads(safeio.read_text(py, root=root, cap=MAX_CONFIG_BYTES))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


def declared_package(
    folder: Path,
    root: Path,
    inherited: dict[str, Any] | None = None,
    data: dict[str, Any] | None = None,
) -> UvDeclared | None:
    """The package in ``folder`` (its pyproject.toml, or ``data`` when read already), None
    when it has no [project]."""
    data = data if data is not None else _load(folder / "pyproject.toml", root)
    if data is None:
        return UvDeclared(None, why="its pyproject.toml could not be read")
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    sources = sources_of(data, inherited)
    skip = unlowered_names(sources)
    dynamic = project.get("dynamic") or []
    if isinstance(dynamic, list) and (
        "dependencies" in dynamic or "optional-dependencies" in dynamic
    ):
        from agentguard.lock.inputs_dynamic import read_dynamic

        found = read_dynamic(folder, data, project)
        if found is None or (found.dependencies is None and "dependencies" in dynamic):
            return UvDeclared(None, skip, why=found.why_unknown if found else None)
        view = dict(project)
        if "dependencies" in dynamic:
            view["dependencies"] = [d.text for d in found.dependencies or ()]
        if found.optional is not None and "optional-dependencies" in dynamic:
            view["optional-dependencies"] = {
                k: [d.text for d in v] for k, v in found.optional.items()
            }
        unknown_extras = found.optional is None
        if unknown_extras:
            view["optional-dependencies"] = {}
        records = declared_records(view, sources)
        return UvDeclared(tuple(records), skip, found.why_unknown, extras_unknown=unknown_extras)
    return UvDeclared(tuple(declared_records(project, sources)), skip)


def root_sources(root: Path) -> dict[str, Any]:
    data = _load(root / "pyproject.toml", root)
    return sources_of(data) if data is not None else {}


def workspace_declared(root: Path) -> dict[str, tuple[str, UvDeclared]]:
    """uv workspace members: name -> (their pyproject.toml, declared as uv records them;
    the root's [tool.uv.sources] apply to each, under the member's own)."""
    from agentguard.lock.inputs_tools import uv_workspace_members

    data = _load(root / "pyproject.toml", root)
    if data is None:
        return {}
    try:
        members = uv_workspace_members(root, data)
    except UsageError:
        return {}
    inherited = sources_of(data)
    out: dict[str, tuple[str, UvDeclared]] = {}
    for py in members:
        member = _load(py, root)
        project = member.get("project") if member is not None else None
        if not isinstance(project, dict) or not isinstance(project.get("name"), str):
            continue
        declared = declared_package(py.parent, root, inherited, member)
        if declared is not None:
            out[canonicalize_name(project["name"])] = (str(py.relative_to(root)), declared)
    return out

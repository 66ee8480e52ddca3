"""What both flows over an existing lock use (:mod:`.existing_flow`, :mod:`.uv_project`):
the lock's source and digest, what the project declares, the findings over its graph."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard import safeio
from agentguard.errors import UsageError
from agentguard.findings import Finding, JSONValue, Source
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.readers import LockReadError
from agentguard.lock.readers.interface import ExistingLock
from agentguard.safeio import MAX_CONFIG_BYTES, MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy
    from agentguard.lock.existing import ExistingAnalysis


def file_digest(path: Path) -> str | None:
    try:
        return "sha256:" + hashlib.sha256(safeio.read_bytes(path, cap=MAX_LOCK_BYTES)).hexdigest()
    except OSError:
        return None


def lock_source(lock: ExistingLock) -> Source:
    return Source.ok(
        "lockfile",
        lock.path,
        f"the project's own lock ({len(lock.registry_pins)} packages, written by {lock.created_by})",
    )


def read_failure(exc: LockReadError, remedy: str) -> Source:
    return Source.failed(
        "lockfile", exc.file, str(exc), error_code=exc.code, retryable=False, remedy=remedy
    )


def _pyproject(root: Path) -> str:
    return safeio.read_text(root / "pyproject.toml", root=root, cap=MAX_CONFIG_BYTES)


def workspace_declared(root: Path) -> dict[str, tuple[str, list[str] | None]]:
    """uv workspace members: name -> (their pyproject.toml, declared as uv records them)."""
    from agentguard.lock.inputs_tools import uv_workspace_members

    try:
        data = tomllib.loads(_pyproject(root))
        members = uv_workspace_members(root, data)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError, UsageError):
        return {}
    from packaging.utils import canonicalize_name

    out: dict[str, tuple[str, list[str] | None]] = {}
    for py in members:
        try:
            member = tomllib.loads(safeio.read_text(py, root=root, cap=MAX_CONFIG_BYTES)).get(
                "project", {}
            )
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
            continue
        if isinstance(member, dict) and isinstance(member.get("name"), str):
            rel = str(py.relative_to(root))
            out[canonicalize_name(member["name"])] = (rel, declared_as_uv_records(py.parent))
    return out


def declared_as_uv_records(root: Path) -> list[str] | None:
    """[project] dependencies and optional dependencies as uv records them in the root
    package's requires-dist (an optional one carries ``extra == '<name>'``)."""
    try:
        data = tomllib.loads(_pyproject(root))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return None
    project = data.get("project")
    if not isinstance(project, dict):
        return None
    out = [d for d in project.get("dependencies", []) if isinstance(d, str)]
    optional = project.get("optional-dependencies", {})
    if isinstance(optional, dict):
        for extra, items in optional.items():
            for d in items if isinstance(items, list) else []:
                if isinstance(d, str):
                    head, _, marker = d.partition(";")
                    cond = f"extra == '{extra}'"
                    out.append(
                        f"{head.strip()} ; {f'({marker.strip()}) and ' if marker.strip() else ''}{cond}"
                    )
    return out


def root_requirements(inputs: ProjectInputs, lock: ExistingLock) -> list[str]:
    """The project's own requirements: declared ones, the development groups the lock
    records (uv installs them by default), and caps from uv's constraint- and
    override-dependencies (a cap there holds the child to one major, like a cap of its own)."""
    return [*inputs.requirement_lines(), *lock.root_requires_dev, *inputs.constraint_lines()]


def graph_findings(analysis: ExistingAnalysis, policy: DepsPolicy) -> list[Finding]:
    from agentguard.rules.deps import check_unknown_metadata
    from agentguard.rules.deps_spans import check_major_spans

    return [*check_major_spans(analysis.graph, policy), *check_unknown_metadata(analysis.graph)]


def facts_of(lock: ExistingLock, analysis: ExistingAnalysis) -> dict[str, JSONValue]:
    return {
        "lock_file": lock.path,
        "lock_format": lock.format,
        "packages": len(analysis.graph.packages),
        "edges": len(analysis.graph.edges),
        "unread_edges": list(analysis.unread_edges),
    }

"""What both flows over an existing lock read (:mod:`agentguard.engine.lock.existing_flow`,
:mod:`agentguard.engine.lock.uv_project`): the lock's source and digest, what the project
declares, the facts of its graph (the findings over it: :mod:`agentguard.engine.lock.existing_graph`)."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard import safeio
from agentguard.findings import JSONValue, Source
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.readers import LockReadError
from agentguard.lock.readers.interface import ExistingLock
from agentguard.lock.uv_declared import UvDeclared, declared_package
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    pass
else:  # pragma: no cover
    pass

if TYPE_CHECKING:
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


def _pyproject_data(root: Path) -> dict[str, Any]:
    """pyproject.toml as data ({} when there is none: requirements.in)."""
    import sys

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    try:
        text = safeio.read_text(root / "pyproject.toml", root=root, cap=safeio.MAX_CONFIG_BYTES)
        data = tomllib.loads(text)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return {}
    return data if isinstance(data, dict) else {}


def declared_as_uv_records(root: Path) -> UvDeclared | None:
    """The root package's requirements as uv records them in its requires-dist (None: the
    folder declares no package: a virtual workspace root)."""
    return declared_package(root, root)


def root_requirements(inputs: ProjectInputs, lock: ExistingLock) -> list[str]:
    """The project's own requirements: declared ones, the development groups the lock
    records (uv installs them by default), and caps from uv's constraint- and
    override-dependencies (a cap there holds the child to one major, like a cap of its own).

    Dependencies a build backend computes (unknown here) are read from the lock's own
    record of the root package; a virtual workspace root requires its members."""
    declared = inputs.requirement_lines()
    if inputs.dynamic_unknown is not None and lock.root_requires is not None:
        declared = [r for r in lock.root_requires if "extra" not in r.partition(";")[2]]
    if inputs.virtual_root:
        declared = [*declared, *(name for name, _reqs in lock.member_requires)]
    return [*declared, *lock.root_requires_dev, *inputs.constraint_lines()]


def facts_of(lock: ExistingLock, analysis: ExistingAnalysis) -> dict[str, JSONValue]:
    return {
        "lock_file": lock.path,
        "lock_format": lock.format,
        "packages": len(analysis.graph.packages),
        "edges": len(analysis.graph.edges),
        "unread_edges": list(analysis.unread_edges),
    }

"""Poetry's ``content-hash``: what `poetry check --lock` compares.

Poetry (``Locker._get_content_hash``, poetry 2.x) hashes the parts of pyproject.toml that
decide the lock: ``[project]`` requires-python, dependencies and optional-dependencies;
``[dependency-groups]``; and ``[tool.poetry]`` dependencies, source, extras,
dev-dependencies and group. The hash is the sha256 of ``json.dumps(..., sort_keys=True)``
of those tables. A lock written by Poetry before 2.3 hashed them without
``[dependency-groups]``; Poetry accepts either for such a lock, and so does this."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from packaging.version import InvalidVersion, Version

_LEGACY_KEYS = ("dependencies", "source", "extras", "dev-dependencies")
_RELEVANT_KEYS = (*_LEGACY_KEYS, "group")
_PROJECT_KEYS = ("requires-python", "dependencies", "optional-dependencies")


def content_hash(data: dict[str, Any], *, with_dependency_groups: bool = True) -> str:
    project = data.get("project", {})
    project = project if isinstance(project, dict) else {}
    groups = data.get("dependency-groups", {}) if with_dependency_groups else {}
    tool = data.get("tool", {})
    poetry = tool.get("poetry", {}) if isinstance(tool, dict) else {}
    poetry = poetry if isinstance(poetry, dict) else {}
    relevant_project = {k: project[k] for k in _PROJECT_KEYS if project.get(k) is not None}
    relevant_poetry: dict[str, Any] = {}
    for key in _RELEVANT_KEYS:
        value = poetry.get(key)
        if value is None and (key not in _LEGACY_KEYS or relevant_project or groups):
            continue
        relevant_poetry[key] = value
    content: dict[str, Any] = {}
    if relevant_project:
        content["project"] = relevant_project
    if groups:
        content["dependency-groups"] = groups
    if content:
        content["tool"] = {"poetry": relevant_poetry}
    else:
        content = relevant_poetry  # (older locks: the [tool.poetry] tables at the top)
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def is_fresh(data: dict[str, Any], recorded: str, written_by: str | None) -> bool:
    """Whether a lock recording ``recorded`` is fresh for this pyproject.toml, as Poetry
    decides it (``written_by``: the Poetry version on the lock's first line)."""
    if content_hash(data) == recorded:
        return True
    try:
        old = written_by is not None and Version(written_by) < Version("2.3.0")
    except InvalidVersion:
        old = False
    return old and content_hash(data, with_dependency_groups=False) == recorded

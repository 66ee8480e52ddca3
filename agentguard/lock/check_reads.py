"""What `lock --check` reads beside the two lock files
(:mod:`agentguard.engine.lock.check`): each entry's line in requirements.lock (where
AG104 points) and the build backend a pyproject.toml names (whether the lock reaches the
people who install the project)."""

from __future__ import annotations

import sys
from pathlib import Path

from agentguard import safeio
from agentguard.lock.inputs import ProjectInputs
from agentguard.safeio import MAX_LOCK_BYTES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def build_backend(inputs: ProjectInputs) -> str | None:
    """The ``[build-system] build-backend`` of a pyproject.toml that names one with a
    ``[project]`` table (a package others install: a library is not a deployment), or None
    (an application's inputs, a requirements.in, a file that cannot be read: unknown is
    never the milder grade)."""
    if inputs.source != "pyproject.toml":
        return None
    from agentguard.lock.inputs import MAX_INPUT_BYTES

    try:
        text = safeio.read_text(inputs.root / "pyproject.toml", cap=MAX_INPUT_BYTES)
        data = tomllib.loads(text)
    except (OSError, ValueError, RecursionError, MemoryError):
        return None
    system = data.get("build-system")
    backend = system.get("build-backend") if isinstance(system, dict) else None
    if not isinstance(backend, str) or not isinstance(data.get("project"), dict):
        return None
    return backend[:80]


def entry_lines(path: Path) -> dict[tuple[str, str, str], int]:
    """(name, version, marker) -> the line of that entry in the requirements lock."""
    from packaging.requirements import InvalidRequirement, Requirement
    from packaging.utils import canonicalize_name

    out: dict[tuple[str, str, str], int] = {}
    try:
        for i, line in enumerate(safeio.read_text(path, cap=MAX_LOCK_BYTES).splitlines(), 1):
            s = line.strip().removesuffix("\\").strip()
            if not s or not s[0].isalnum():
                continue
            try:
                req = Requirement(s.split(" --hash=")[0])
            except InvalidRequirement:
                continue
            pinned = [c.version for c in req.specifier if c.operator == "=="]
            key = (
                canonicalize_name(req.name),
                pinned[0] if len(pinned) == 1 else "",
                str(req.marker) if req.marker else "",
            )
            out.setdefault(key, i)
    except (OSError, UnicodeDecodeError):
        pass
    return out

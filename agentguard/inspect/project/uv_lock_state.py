"""Whether a Dockerfile's `uv sync` has the project's uv.lock to install from.

Modelled on browser-use's Dockerfile: ``COPY pyproject.toml uv.lock* /app/`` then ``RUN uv
sync --all-extras --no-dev --no-install-project`` (no ``--locked``), while the repository's
``.gitignore`` lists ``uv.lock``: the glob copies nothing in a fresh clone, and uv resolves
the tree anew on every build. Facts only: paths in, a state out."""

from __future__ import annotations

import posixpath
from collections.abc import Collection, Mapping

from agentguard.inspect.project.dockerfile_facts import Stage


def _project_dir(stage: Stage, context: str) -> str:
    """The folder of the context whose pyproject.toml the stage copies (the context
    itself when it copies none by name)."""
    for copy in stage.copies:
        if copy.from_stage is not None or copy.instruction != "COPY":
            continue
        for src in copy.sources:
            if posixpath.basename(src) == "pyproject.toml":
                return posixpath.normpath(posixpath.join(context, posixpath.dirname(src)))
    return posixpath.normpath(context)


def _ignores(pattern: str, rel: str) -> bool:
    """A .gitignore line that ignores ``rel`` (a path below its folder); the common forms."""
    p = pattern.strip()
    if not p or p.startswith(("#", "!")):
        return False
    if p in ("uv.lock", "**/uv.lock", "*.lock", "**/*.lock"):
        return True
    return p.lstrip("/") == rel


def lock_state(
    stage: Stage, context: str, locks: Collection[str], gitignores: Mapping[str, str]
) -> str:
    """ "present", "ignored" (a .gitignore of the project lists it) or "absent"."""
    folder = _project_dir(stage, context)
    lock = posixpath.normpath(posixpath.join(folder, "uv.lock")).removeprefix("./")
    if lock in locks:
        return "present"
    for path, text in gitignores.items():
        base = posixpath.dirname(path)
        if base and not (lock + "/").startswith(base + "/"):
            continue
        rel = lock[len(base) + 1 :] if base else lock
        if any(_ignores(line, rel) for line in text.splitlines()):
            return "ignored"
    return "absent"

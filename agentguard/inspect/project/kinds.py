"""Which container/build files the project scan hands to :mod:`.containers`, by name.

Kept apart from the parsers so that walking a folder does not import them.
"""

from __future__ import annotations

import posixpath
import re

_COMPOSE = re.compile(r"^(docker-)?compose(\.[\w.-]+)?\.ya?ml$", re.IGNORECASE)
_NOT_DOCKERFILE = (".py", ".md", ".txt", ".json", ".yml", ".yaml", ".sh", ".js", ".ts", ".toml")
_REQUIREMENTS = re.compile(r"^(.*requirements.*\.(txt|in|lock)|constraints.*\.txt)$", re.IGNORECASE)


def file_kind(path: str) -> str | None:
    """What this module reads ``path`` as, or None when it does not read it."""
    norm = path.replace("\\", "/")
    base = posixpath.basename(norm)
    low = base.lower()
    if low.endswith(".dockerignore"):
        return "dockerignore"
    if (
        low in ("dockerfile", "containerfile")
        or low.startswith("dockerfile.")
        or low.endswith(".dockerfile")
    ):
        return "dockerfile"
    if _COMPOSE.match(base):
        return "compose"
    if low == ".devcontainer.json" or (
        low == "devcontainer.json" and "/.devcontainer/" in f"/{norm}"
    ):
        return "devcontainer"
    if low == "pyproject.toml":
        return "pyproject"
    if low in ("uv.lock", "poetry.lock", "pylock.toml"):
        return "lock"  # a project's own lock: what it holds mitigates AG121
    if _REQUIREMENTS.match(base) or (
        "/requirements/" in f"/{norm}" and low.endswith((".txt", ".in"))
    ):
        return "requirements"
    return None


def wants_file(path: str) -> bool:
    """True for the files :func:`scan_container_files` reads (hidden ones included)."""
    return file_kind(path) is not None

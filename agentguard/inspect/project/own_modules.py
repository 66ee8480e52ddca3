"""The top-level names a project's own code is imported as: its modules and packages at the
root and under ``src/``, and the same in each folder beside the root that holds a
``pyproject.toml`` (a workspace member: pydantic-ai keeps ``pydantic_ai`` in
``pydantic_ai_slim/``). The smoke run never imports these; the project scan knows a call
into one of them for the project's own API. Names only: no file is read."""

from __future__ import annotations

import os
from pathlib import Path


def _names(folder: Path) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:  # (not a folder, or not readable: it holds no module we can name)
        return []


def _top_names(folder: Path) -> set[str]:
    names = _names(folder)
    out = {n[:-3] for n in names if n.endswith(".py")}
    out |= {n for n in names if os.path.isfile(os.path.join(folder, n, "__init__.py"))}
    src = folder / "src"
    out |= {n for n in _names(src) if os.path.isdir(src / n)}
    return out


def project_modules(root: Path) -> frozenset[str]:
    """Top-level names the project's own code may be imported as."""
    out = _top_names(root)
    for member in _names(root):
        if os.path.isfile(root / member / "pyproject.toml"):
            out |= _top_names(root / member)
    # (a file named `.py` or `my-tool.py` is no module anything imports)
    return frozenset(n for n in out if n.isidentifier())

"""What every benchmark does first: time agentguard the way ``pip install`` leaves it."""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path


def byte_compile() -> None:
    """Byte-compile the installed agentguard, as ``pip install`` does (an editable or
    ``PYTHONDONTWRITEBYTECODE`` install would otherwise compile every module each run)."""
    spec = importlib.util.find_spec("agentguard")
    if spec is not None and spec.origin is not None:
        compileall.compile_dir(Path(spec.origin).parent, quiet=1)

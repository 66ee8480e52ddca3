"""Run agentguard as an unprivileged user from a clone that user cannot read.

A clone usually sits under a private folder (a home directory, ``mktemp -d``: mode 0700),
so uid 65534 can reach neither the source tree nor the virtual environment's packages.
:func:`stage` links (or copies) what one run needs into a world-readable folder: the
``agentguard`` package and the installed distributions it requires at run time (the
requirement closure read from the installed metadata, extras left out). Hard links keep
it quick; a file on another filesystem is copied.
"""

from __future__ import annotations

import importlib.metadata as md
import os
import re
import shutil
import sys
from pathlib import Path

from packaging.requirements import Requirement

from agentguard import DISTRIBUTION
from tests.hostile.promises import ROOT


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def runtime_distributions(top: str = DISTRIBUTION) -> list[md.Distribution]:
    """``top``'s installed run-time requirement closure (``top`` excluded)."""
    seen: set[str] = {_key(top)}
    out: list[md.Distribution] = []
    todo = [Requirement(r) for r in md.distribution(top).requires or []]
    while todo:
        req = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        if _key(req.name) in seen:
            continue
        seen.add(_key(req.name))
        dist = md.distribution(req.name)
        out.append(dist)
        todo.extend(Requirement(r) for r in dist.requires or [])
    return out


def _place(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True, mode=0o755)
    try:
        os.link(src, dst)
    except OSError:
        shutil.copy2(src, dst)
    if not os.stat(dst).st_mode & 0o004:
        shutil.copy2(src, dst.with_name(dst.name + ".tmp"))
        os.replace(dst.with_name(dst.name + ".tmp"), dst)
        dst.chmod(0o644)


def stage(folder: Path) -> tuple[str, str]:
    """Fill ``folder/site`` and return (the interpreter, the PYTHONPATH) to run with."""
    site = folder / "site"
    site.mkdir(mode=0o755, parents=True)
    for dist in runtime_distributions():
        for rel in dist.files or []:
            if rel.parts[0] == ".." or "__pycache__" in rel.parts:
                continue  # scripts installed beside the environment; byte code
            src = Path(str(dist.locate_file(rel)))
            if src.is_file():
                _place(src, site / rel)
    shutil.copytree(
        ROOT / "agentguard",
        site / "agentguard",
        ignore=shutil.ignore_patterns("__pycache__"),
        copy_function=lambda s, d: _place(Path(s), Path(d)),
    )
    for dirpath, _dirs, _files in os.walk(folder):
        os.chmod(dirpath, 0o755)
    # the environment's own interpreter is a link into the environment; its target is the
    # base interpreter, which lives outside the clone
    return os.path.realpath(getattr(sys, "_base_executable", sys.executable)), str(site)

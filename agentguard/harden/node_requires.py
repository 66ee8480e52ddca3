"""The project files a Node script loads by a relative path, followed transitively.

``node agent.js`` whose ``agent.js`` does ``require("./lib/x")`` needs ``lib/x.js`` in the
hardened image too. This reads the start script and every project file it reaches through
``require("./...")``, ``import ... from "./..."``, ``export ... from "./..."`` and
``import("./...")`` -- relative specifiers only (a bare name is a package in
``node_modules``, which travels whole). Each target is resolved as Node does for a relative
path: the file itself, with ``.js``/``.mjs``/``.cjs``/``.json`` added, or a folder's
``index.*``. A target outside the project, a link, or something not a regular file is never
carried and is named in a note.

Reads go through the safe open (inside the project, no link, capped), at most
:data:`MAX_FILES` files; a require that is computed (``require(name)``) cannot be followed
and is not guessed at.
"""

from __future__ import annotations

import posixpath
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from agentguard import safeio

MAX_FILES = 200
MAX_SCRIPT = 1 << 20
_SPEC = re.compile(
    r"""(?:\brequire\s*\(\s*|\bimport\s*\(\s*|\bfrom\s+|\bimport\s+)(["'])(\.{1,2}/[^"'\n]*)\1"""
)
_SCANNED = (".js", ".mjs", ".cjs", ".ts")
_TRIES = ("", ".js", ".mjs", ".cjs", ".json", "/index.js", "/index.mjs", "/index.cjs")


@dataclass(frozen=True)
class Required:
    """The project files (relative paths) the script reaches, and what could not be carried."""

    files: tuple[str, ...]
    notes: tuple[str, ...]


def _regular(host: Path, rel: str) -> bool:
    try:
        return stat.S_ISREG((host / rel).lstat().st_mode)
    except OSError:
        return False


def _linked(host: Path, rel: str) -> bool:
    """Whether any part of ``rel`` inside the project is a link (never followed)."""
    parts = rel.split("/")
    for i in range(1, len(parts) + 1):
        try:
            if stat.S_ISLNK((host / "/".join(parts[:i])).lstat().st_mode):
                return True
        except OSError:
            return False
    return False


def resolve(host: Path, base: str, spec: str) -> str | None:
    """The project-relative file a relative specifier names from the file ``base``, or
    None (outside the project, missing, a link)."""
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(base), spec))
    if joined.startswith("../") or joined in ("..", ".") or joined.startswith("/"):
        return None
    for suffix in _TRIES:
        rel = joined + suffix
        if not _linked(host, rel) and _regular(host, rel):
            return rel
    return None


def specifiers(text: str) -> list[str]:
    """The relative specifiers a script's text loads (string literals only)."""
    return [m.group(2) for m in _SPEC.finditer(text)]


def required_files(host: Path, script: str) -> Required:
    """Every project file ``script`` (project-relative) loads by a relative path, itself
    excluded, transitively."""
    seen: set[str] = {script}
    queue = [script]
    out: list[str] = []
    notes: list[str] = []
    while queue:
        current = queue.pop(0)
        if not current.endswith(_SCANNED):
            continue  # JSON and the like load nothing
        if not _regular(host, current):
            notes.append(f"{current} is not a file of the project: what it loads is not known")
            continue
        try:
            text = safeio.read_text(host / current, root=host, cap=MAX_SCRIPT)
        except (OSError, UnicodeDecodeError) as exc:
            notes.append(f"{current} was not read to follow what it loads ({exc})")
            continue
        for spec in specifiers(text):
            rel = resolve(host, current, spec)
            if rel is None:
                notes.append(
                    f"{current} loads {spec!r}, which is not a file inside the project (or is a "
                    "link): not carried"
                )
                continue
            if rel in seen:
                continue
            if len(seen) >= MAX_FILES:
                notes.append(
                    f"more than {MAX_FILES} files reached from {script}: the rest not followed"
                )
                return Required(tuple(out), tuple(notes))
            seen.add(rel)
            out.append(rel)
            queue.append(rel)
    return Required(tuple(out), tuple(notes))

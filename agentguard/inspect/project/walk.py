"""Walking a project folder: which files can matter, read once, with every miss recorded.

The walk uses ``os.scandir`` and never descends into these folders (dependency trees,
caches and VCS data that are not the project's own configuration):

    .git .hg .svn .bzr node_modules bower_components .venv venv __pycache__ .mypy_cache
    .pytest_cache .ruff_cache .tox .nox .eggs *.egg-info __pypackages__ site-packages
    .direnv .pytype .ipynb_checkpoints .next .nuxt .turbo

nor into any folder holding a ``pyvenv.cfg`` (a virtual environment under another name).
Symbolic links to folders, and links to files outside the project, are not followed:
skipped, or failed when the file's name says it may configure the agent (it was not
checked). Files larger than :data:`MAX_FILE_BYTES` are recorded as skipped; unreadable
files and folders as failed. Reading goes through :mod:`agentguard.safeio`.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from agentguard.findings import Source
from agentguard.inspect.project.kinds import KEEP_OUT_DIRS, keep_out_category, kind_of
from agentguard.safeio import (
    FIRST_READ,
    MAX_FILE_BYTES,
    NotRegular,
    TooLarge,
    inside,
    read_candidate,
)

__all__ = [
    "FIRST_READ",
    "MAX_FILE_BYTES",
    "NotRegular",
    "TooLarge",
    "classify",
    "read_candidate",
    "walk",
]

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        ".bzr",
        "node_modules",
        "bower_components",
        ".venv",
        "venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
        ".nox",
        ".eggs",
        "__pypackages__",
        "site-packages",
        ".direnv",
        ".pytype",
        ".ipynb_checkpoints",
        ".next",
        ".nuxt",
        ".turbo",
    }
)

PYTHON_EXT = (".py", ".pyw")
TS_EXT = (".ts", ".tsx", ".mts", ".cts", ".js", ".jsx", ".mjs", ".cjs")
SCRIPT_EXT = (".sh", ".bash", ".zsh", ".yml", ".yaml", ".toml")
SCRIPT_NAMES = frozenset({"Makefile", "makefile", "GNUmakefile", "justfile", "Procfile"})
# (`gemini-extension.json`: a Gemini CLI extension's manifest, whose `mcpServers` start
# when the extension is installed)
MCP_NAMES = frozenset(
    {
        ".mcp.json",
        "claude_desktop_config.json",
        ".claude.json",
        "managed-mcp.json",
        "gemini-extension.json",
    }
)
SETTINGS_NAMES = frozenset({"settings.json", "settings.local.json"})
MARKER_NAMES = frozenset({"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md"})
MARKER_CLAUDE_DIRS = frozenset({"commands", "agents", "skills", "hooks"})


def classify(path: str) -> str | None:
    """The kind of a file by its path: python, ts, settings, mcp, codex-config,
    gemini-settings, container, script, or None.

    "container" is whatever :func:`~agentguard.inspect.project.kinds.wants_file` reads.
    """
    return _classify(path, posixpath.basename(path), posixpath.basename(posixpath.dirname(path)))


def _classify(path: str, name: str, parent: str) -> str | None:
    """:func:`classify` of ``path``, whose last name and its folder's name are given (the
    walk knows them: no path is split again for each of its files)."""
    if name.endswith(PYTHON_EXT):
        return "python"
    if name.endswith(TS_EXT):
        if name.endswith((".d.ts", ".min.js")):
            return None
        return "ts"
    if name == "managed-settings.json" or (parent == ".claude" and name in SETTINGS_NAMES):
        return "settings"
    if parent == "managed-settings.d" and name.endswith(".json"):  # managed drop-ins
        return "settings"
    if name in MCP_NAMES or (name == "mcp.json" and parent in (".vscode", ".cursor")):
        return "mcp"
    if parent == ".codex" and name == "config.toml":
        return "codex-config"
    if parent == ".gemini" and name == "settings.json":
        return "gemini-settings"
    if name == "config.toml" and parent not in (".cargo", ".codex"):
        return "openhands-config"  # read only when it holds OpenHands' tables
    if "\\" not in path:
        container = kind_of(name, path) is not None
    else:  # (the container files' reader takes a backslash for a folder's end)
        norm = path.replace("\\", "/")
        container = kind_of(posixpath.basename(norm), norm) is not None
    if container:
        return "container"
    if name == "package.json" or name in SCRIPT_NAMES or name.endswith(SCRIPT_EXT):
        return "script"
    return None


def is_marker(path: str, is_dir: bool) -> bool:
    """Files the agent engine loads from its working directory (CLAUDE.md, .claude/...)."""
    name = posixpath.basename(path)
    parent = posixpath.basename(posixpath.dirname(path))
    if not is_dir:
        return name in MARKER_NAMES or (parent == ".claude" and name in SETTINGS_NAMES)
    return parent == ".claude" and name in MARKER_CLAUDE_DIRS


@dataclass
class Candidate:
    rel: str  # relative to the root, "/"-separated
    abspath: str
    kind: str
    regular: bool = False  # the folder listing said "regular file" (not a link): no fstat
    outside: Source | None = None  # a link out of the project: never read, this is why


@dataclass
class WalkResult:
    candidates: list[Candidate] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)  # failed/skipped folders and files
    markers: list[str] = field(default_factory=list)
    # (path, category) of files and folders a whole-folder COPY must not take (AG212)
    keep_out: list[tuple[str, str]] = field(default_factory=list)
    gitignores: list[str] = field(default_factory=list)  # .gitignore files, for AG212
    files_seen: int = 0
    dirs_seen: int = 0
    dirs_skipped: int = 0


def walk(root: str, *, exclude: Sequence[str] = ()) -> WalkResult:
    """All candidate files below ``root`` (a folder), in a stable order. No stat calls:
    the folder entries' types are enough; sizes are taken when a file is opened.

    ``exclude``: globs (as in the configuration's ``exclude``) of files and folders not
    read; each one met is a skipped source that says so."""
    out = WalkResult()
    excluded = _excluder(exclude)
    real_root = os.path.realpath(root)
    stack: list[tuple[str, str]] = [(root, "")]
    candidates = out.candidates
    fast = excluded is None  # (nothing to match a file's name against)
    seen = 0
    while stack:
        folder, rel = stack.pop()
        out.dirs_seen += 1
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except OSError as exc:
            out.sources.append(
                Source.failed(
                    "folder",
                    rel or ".",
                    f"cannot list folder: {exc.strerror or exc}",
                    error_code="folder-unreadable",
                    retryable=False,
                    remedy="Make the folder readable, or exclude it.",
                )
            )
            continue
        if rel and any(e.name == "pyvenv.cfg" for e in entries):
            out.dirs_skipped += 1
            continue
        prefix = f"{rel}/" if rel else ""
        parent = rel.rsplit("/", 1)[-1]
        subdirs: list[tuple[str, str]] = []
        for entry in entries:
            name = entry.name
            if fast and name.endswith(".py"):  # the common case first: a plain .py file
                try:
                    regular = entry.is_file(follow_symlinks=False)
                except OSError:
                    regular = False  # (the general path below records why)
                if regular:
                    seen += 1
                    candidates.append(Candidate(prefix + name, entry.path, "python", True))
                    continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if not is_dir and entry.is_symlink() and entry.is_dir():
                    out.sources.append(_folder_link(prefix + name, parent))
                    continue
                if not is_dir and entry.is_symlink() and not inside(entry.path, real_root):
                    # A link out of the project (to ~/.aws/credentials, /proc/self/environ...)
                    # is never read; one that may configure the agent is a gap in the check.
                    link = _link_out(prefix + name, parent)
                    kind = classify(prefix + name)
                    if kind is not None:  # the reader records it (and what it may hold)
                        candidates.append(Candidate(prefix + name, entry.path, kind, outside=link))
                    else:
                        out.sources.append(link)
                    continue
            except OSError as exc:
                out.sources.append(
                    Source.failed(
                        "file",
                        prefix + name,
                        f"cannot stat: {exc.strerror or exc}",
                        error_code="file-unreadable",
                        retryable=False,
                    )
                )
                continue
            if excluded is not None and (pattern := excluded(prefix + name, is_dir)) is not None:
                out.sources.append(
                    Source.skipped(
                        "folder" if is_dir else "file",
                        prefix + name,
                        f"excluded by configuration (exclude = {pattern!r})",
                    )
                )
                continue
            if is_dir:
                if name in SKIP_DIRS or name.endswith(".egg-info"):
                    out.dirs_skipped += 1
                    continue
                if parent == ".claude" and name in MARKER_CLAUDE_DIRS:
                    out.markers.append(prefix + name + "/")
                if name in KEEP_OUT_DIRS:
                    out.keep_out.append((prefix + name + "/", KEEP_OUT_DIRS[name]))
                subdirs.append((entry.path, prefix + name))
                continue
            seen += 1
            if name.endswith(".py"):
                candidates.append(
                    Candidate(
                        prefix + name, entry.path, "python", entry.is_file(follow_symlinks=False)
                    )
                )
                continue
            path = prefix + name
            if name in MARKER_NAMES or (parent == ".claude" and name in SETTINGS_NAMES):
                out.markers.append(path)
            category = keep_out_category(name)
            if category is not None:
                out.keep_out.append((path, category))
            elif name == ".gitignore":
                out.gitignores.append(path)
            kind = _classify(path, name, parent)
            if kind is not None:
                candidates.append(
                    Candidate(path, entry.path, kind, entry.is_file(follow_symlinks=False))
                )
        subdirs.sort(reverse=True)
        stack.extend(subdirs)
    out.files_seen = seen
    candidates.sort(key=lambda c: c.rel)
    out.markers.sort()
    return out


def project_source(root: str, got: WalkResult, files_read: int) -> Source:
    """The scan's own source: what was walked and how many candidate files were read."""
    return Source.ok(
        "project",
        root,
        f"{got.files_seen} files in {got.dirs_seen} folders walked "
        f"({got.dirs_skipped} dependency/cache folders not entered), "
        f"{files_read} candidate files read",
    )


# folders whose files configure an agent (Claude Code's, Codex's and Gemini CLI's settings,
# the workflows and actions, the dev container, the editors' MCP files, managed drop-ins)
CONFIG_DIRS = frozenset(
    {".claude", ".codex", ".gemini", ".github", ".devcontainer", ".vscode", ".cursor",
     "managed-settings.d"}
)  # fmt: skip


def _folder_link(path: str, parent: str) -> Source:
    """A link to a folder is not followed (a loop, a tree read twice): skipped, unless the
    folder's name says its files configure an agent (``.claude`` linked to a shared one,
    ``.github/workflows``): those files are not checked, a failed source, never clean."""
    name = posixpath.basename(path)
    config = (
        name in CONFIG_DIRS
        or (parent == ".github" and name in ("workflows", "actions"))
        or (parent == ".claude" and name in MARKER_CLAUDE_DIRS)
    )
    if not config:
        return Source.skipped("folder", path, "symbolic link to a folder: not followed")
    return Source.failed(
        "folder",
        path,
        "symbolic link to a folder that may configure the agent: not followed (its files "
        "are not read)",
        error_code="folder-link",
        retryable=False,
        remedy="Check the folder the link points to (or the whole repository), or replace "
        "the link with the folder.",
    )


def _link_out(path: str, parent: str) -> Source:
    """A file linked from outside the project: skipped when its name says it cannot
    configure the agent, else failed (a monorepo's shared ``.claude/settings.json``
    linked in is configuration this run did not check: never a clean exit)."""
    name = posixpath.basename(path)
    marker = name in MARKER_NAMES or (parent == ".claude" and name in SETTINGS_NAMES)
    if classify(path) is None and not marker:
        return Source.skipped(
            "file", path, "symbolic link pointing outside the project: not followed"
        )
    return Source.failed(
        "file",
        path,
        "symbolic link pointing outside the project: not followed, and it may configure the agent",
        error_code="file-link-outside",
        retryable=False,
        remedy="Check the folder the link points into (or the whole repository), or "
        "replace the link with the file.",
    )


def _excluder(patterns: Sequence[str]) -> Callable[[str, bool], str | None] | None:
    """The first pattern a project-relative path matches, or None; None when no patterns.
    A folder matches ``dir/**`` as well as ``dir``."""
    if not patterns:
        return None
    from agentguard.globmatch import glob_matches

    def first(rel: str, is_dir: bool) -> str | None:
        for p in patterns:
            if glob_matches(p, rel) or (is_dir and glob_matches(p, rel + "/")):
                return p
        return None

    return first

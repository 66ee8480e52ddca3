"""`uv lock` on a copy of a uv project, started and waited for apart: what the re-lock of a
uv project runs (:mod:`agentguard.engine.lock.uv_project`), light enough to be started before the
command line is imported (:mod:`agentguard.lock.early`)."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from agentguard import safeio
from agentguard.lock import children
from agentguard.lock.deadline import NO_DEADLINE, Deadline
from agentguard.safeio import MAX_CONFIG_BYTES
from agentguard.scratch import make as make_scratch
from agentguard.scratch import remove as remove_scratch

UV_LOCK = "uv.lock"
LOCK_TIMEOUT = 600
# What a copy of the project for `uv lock` leaves out: nothing uv reads to lock.
SKIP = shutil.ignore_patterns(
    ".git", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".nox", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", "dist", "build",
)  # fmt: skip
MAX_COPY_FILES = 20_000


def _runs_here(requires_python: str | None) -> bool:
    """Whether this interpreter satisfies the project's requires-python."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if not requires_python:
        return True
    try:
        return SpecifierSet(requires_python).contains(
            ".".join(map(str, sys.version_info[:3])), prereleases=True
        )
    except InvalidSpecifier:
        return False


def python_request(requires_python: str | None) -> str:
    """What `uv lock` is told to run as its interpreter: always said, never left to uv. Left
    alone, uv takes the request from a `.python-version` in the copy or above it (the pull
    request's file, read whenever uv reads the project's configuration), and a request there
    may be a path: `./tools/python`, run by uv to ask what it is, with the runner's tokens.
    This interpreter when the project accepts it (else uv probes every python on PATH), or
    the project's own bounds written back by ``packaging`` (a version request, never a
    path): uv finds one on PATH or among its own installations, or says why not."""
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    if _runs_here(requires_python):
        return sys.executable
    try:
        bounds = str(SpecifierSet(requires_python or ""))
    except InvalidSpecifier:
        bounds = ""
    return bounds or sys.executable  # (no bounds: uv says this one does not fit)


def uv_lock_command(
    opts: Any,
    requires_python: str | None = None,
    *,
    no_build: bool = False,
    exclude_newer: str | None = None,
) -> list[str]:
    """``no_build``: `build = false` in ``[tool.agentguard]`` (as ``--only-binary``);
    ``exclude_newer``: the cooldown's cut-off (:func:`agentguard.lock.start.settings_for`)."""
    from agentguard.lock.backend import uv_binary

    cmd = [uv_binary(), "lock", "--python", python_request(requires_python)]
    if opts.upgrade:
        cmd.append("--upgrade")
    for p in opts.upgrade_packages:
        cmd += ["--upgrade-package", p]
    if opts.index_url:
        cmd += ["--default-index", opts.index_url]
    for link in opts.find_links:
        cmd += ["--find-links", link]
    if opts.no_index:
        cmd.append("--no-index")
    if opts.only_binary or no_build:
        cmd.append("--no-build")  # never build an sdist: no package code runs
    if exclude_newer:
        cmd += ["--exclude-newer", exclude_newer]
    return cmd


def config_flags(root: Path) -> list[str]:
    """Which uv configuration `uv lock` on the copy reads. uv takes the first `uv.toml`, or
    `pyproject.toml` with a `[tool.uv]` table, from the folder it runs in upward; the copy
    sits in a temporary folder whose parents (`/tmp`) any local user can write. So when the
    project has no configuration of its own, uv is told to read the user's own `uv.toml`
    (or none), never a file found above the copy. ``UV_CONFIG_FILE`` set by the caller is
    left to uv."""
    if os.environ.get("UV_CONFIG_FILE") or (root / "uv.toml").is_file():
        return []
    try:
        data = tomllib.loads(
            safeio.read_text(root / "pyproject.toml", root=root, cap=MAX_CONFIG_BYTES)
        )
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        data = {}
    tool = data.get("tool")
    if isinstance(tool, dict) and isinstance(tool.get("uv"), dict):
        return []
    home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    user = Path(home) / "uv" / "uv.toml"
    return ["--config-file", str(user)] if user.is_file() else ["--no-config"]


def _copy_project(root: Path, dest: Path, beside: tuple[tuple[Path, Path], ...] = ()) -> None:
    """The project into ``dest``, and each local source above it into its place beside."""
    count = 0

    def ignore(folder: str, names: list[str]) -> set[str]:
        nonlocal count
        skipped = set(SKIP(folder, names))
        count += len(names) - len(skipped)
        if count > MAX_COPY_FILES:
            raise OSError(f"more than {MAX_COPY_FILES} files to copy for `uv lock`")
        return skipped

    shutil.copytree(root, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)
    for src, to in beside:
        shutil.copytree(src, to, symlinks=True, ignore=ignore, dirs_exist_ok=True)


# a local source of the lock above the project: `editable = "../checkpoint"`
_UP_AND_OUT = re.compile(
    r"""\b(?:editable|directory|path|virtual)\s*=\s*["']((?:\.\./)+[^"'\n]*)["']"""
)
# the scratch folder's own pyproject.toml, above the copy (see :func:`_workspace`)
_NO_WORKSPACE = "[tool.uv.workspace]\nmembers = []\n"
MAX_UP = 4  # levels above the project a local source may sit (a deeper one is not copied)


def _workspace(
    root: Path, lock_text: str | None
) -> tuple[Path, Path, tuple[tuple[Path, Path], ...]]:
    """(folder to remove afterwards, folder to copy the project into, local sources above
    the project with where their copies go). The copy is made in a private temporary folder.
    A lock with local sources above the project (``../checkpoint``) gets the folders around
    it laid out as they are, names included: the project keeps its own folder name (a
    sibling whose own sources say ``../langgraph`` finds the copy, not the original), and
    each source the lock names is copied into its place, so uv sees what it saw."""
    real = root.resolve()
    tmp = make_scratch("agentguard-uvlock-")
    # uv looks above the project for a workspace that lists it as a member (and then locks
    # that workspace: its members built, its lock written there), and for `.python-version`
    # up to that workspace's root. The scratch folder's parents (`/tmp`) any local user can
    # write; a workspace root of ours that lists nothing ends uv's search inside the
    # scratch folder ("found a workspace root, but the project is not included"). The copy
    # goes one folder down, so no project name meets this file.
    (tmp / "pyproject.toml").write_text(_NO_WORKSPACE, encoding="utf-8")
    inner = tmp / "copy"
    rels = sorted(set(_UP_AND_OUT.findall(lock_text or "")))
    depth = max((r.count("../") for r in rels), default=0)
    if depth == 0 or depth > MAX_UP or depth >= len(real.parents):
        return tmp, inner / real.name, ()
    top = real.parents[depth - 1]
    base = inner / (top.name or "root")
    beside: list[tuple[Path, Path]] = []
    for rel in rels:
        src = Path(os.path.normpath(real / rel))
        inside_top = os.path.commonpath([top, src]) == str(top)
        inside_project = os.path.commonpath([real, src]) == str(real)
        if inside_top and not inside_project and src.is_dir() and not src.is_symlink():
            beside.append((src, base / src.relative_to(top)))
    # a source inside another is copied with it
    kept = tuple(
        (s, d) for s, d in beside if not any(o != s and s.is_relative_to(o) for o, _ in beside)
    )
    return tmp, base / real.relative_to(top), kept


class UvLockRun:
    """`uv lock` started on a copy of the project and not yet waited for (it may be started
    before the command line is read: :mod:`agentguard.lock.early`). :meth:`result` waits
    for it within the run's deadline, :meth:`cancel` stops it; either removes the copy."""

    def __init__(
        self,
        opts: Any,
        root: Path,
        requires_python: str | None,
        lock_text: str | None = None,
        deadline: Deadline = NO_DEADLINE,
        *,
        no_build: bool = False,
        exclude_newer: str | None = None,
    ) -> None:
        cmd = uv_lock_command(
            opts, requires_python, no_build=no_build, exclude_newer=exclude_newer
        ) + config_flags(root)
        self.deadline = deadline
        self.shown = [
            "uv",
            *(
                c
                for i, c in enumerate(cmd[1:], 1)
                if not (cmd[i - 1] == "--python" or c == "--python")
            ),
        ]
        self.failure: str | None = None  # why it was not started
        self._tmp: Path | None = None
        self._work: Path | None = None
        beside: tuple[tuple[Path, Path], ...] = ()
        self._proc: subprocess.Popen[str] | None = None
        env = children.resolver_env()  # (a relative UV_CACHE_DIR: against where we started)
        env.setdefault("UV_PYTHON_DOWNLOADS", "never")
        if opts.only_binary or no_build:  # ("no package code runs": the project's neither)
            from agentguard.lock.uv_builds import built_by_uv_lock

            builds = built_by_uv_lock(root)
            if builds is not None:
                self.failure = (
                    f"`uv lock` not started: it would run the build backend of {builds}, "
                    "the checkout's code, which --only-binary (build = false) forbids. "
                    "Declare that metadata statically, or lock without --only-binary"
                )
                return
        try:
            self._tmp, self._work, beside = _workspace(root, lock_text)
            children.started(self)
        except OSError as exc:
            self.failure = f"cannot make a folder to copy the project into: {exc}"
            return
        try:
            try:
                _copy_project(root, self._work, beside)
            except (OSError, shutil.Error) as exc:
                self.failure = f"cannot copy the project for `uv lock`: {exc}"
                return
            try:
                self._proc = subprocess.Popen(
                    cmd,
                    cwd=self._work,
                    env=env,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    stdin=subprocess.DEVNULL,
                    text=True,
                )
            except OSError as exc:
                self.failure = f"cannot run `uv lock`: {exc}"
        except BaseException:
            self.cancel()
            raise

    def result(self) -> tuple[str | None, str, list[str]]:
        """(new uv.lock text or None, stderr or why not, the command shown)."""
        try:
            if self._proc is None or self._work is None:
                return None, self.failure or "`uv lock` was not started", self.shown
            try:
                _, stderr = self._proc.communicate(timeout=self.deadline.bound(LOCK_TIMEOUT))
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.communicate()
                if self.deadline.passed:
                    self.failure = f"`uv lock` was stopped: {self.deadline.describe()}"
                else:
                    self.failure = f"`uv lock` did not finish within {LOCK_TIMEOUT} s"
                return None, self.failure, self.shown
            if self._proc.returncode != 0:
                return None, stderr, self.shown
            try:
                return (self._work / UV_LOCK).read_bytes().decode("utf-8"), stderr, self.shown
            except (OSError, UnicodeDecodeError) as exc:
                return None, f"`uv lock` left no readable uv.lock: {exc}", self.shown
        finally:
            self.cancel()

    @property
    def timed_out(self) -> bool:
        return self.deadline.passed and self.failure is not None

    def cancel(self) -> None:
        """Stop `uv lock` if it still runs and remove the copy (idempotent)."""
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
                self._proc.communicate(timeout=5)
        if self._tmp is not None:
            remove_scratch(self._tmp)
            self._tmp = None
        children.finished(self)

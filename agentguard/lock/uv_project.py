"""Re-locking a uv project: ``uv lock`` runs on a copy of the project, and the new
``uv.lock`` replaces the committed one only after the major gate (AG102) passed. A
refused or failed re-lock leaves the committed file byte for byte as it was."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

from agentguard import safeio
from agentguard.engine import make_report
from agentguard.findings import Finding, JSONValue, Report, Severity, Source
from agentguard.lock.existing import ExistingAnalysis, analyse_existing, refresh_released
from agentguard.lock.existing_flow import (
    declared_as_uv_records,
    facts_of,
    file_digest,
    graph_findings,
    lock_source,
    read_failure,
    root_requirements,
)
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.readers import read_lock_text
from agentguard.lock.readers.interface import ExistingLock, LockReadError
from agentguard.lock.readers.uv_lock import UvLockReader
from agentguard.safeio import MAX_CONFIG_BYTES

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy

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


def uv_lock_command(opts: Any, requires_python: str | None = None) -> list[str]:
    from agentguard.lock.backend import uv_binary

    cmd = [uv_binary(), "lock"]
    # Name this interpreter when it fits (left alone, uv probes every python on PATH);
    # otherwise uv finds one the project accepts, or says why not.
    if _runs_here(requires_python):
        cmd += ["--python", sys.executable]
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
    if opts.only_binary:
        cmd.append("--no-build")  # never build an sdist: no package code runs
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


def _copy_project(root: Path, dest: Path) -> None:
    count = 0

    def ignore(folder: str, names: list[str]) -> set[str]:
        nonlocal count
        skipped = set(SKIP(folder, names))
        count += len(names) - len(skipped)
        if count > MAX_COPY_FILES:
            raise OSError(f"more than {MAX_COPY_FILES} files to copy for `uv lock`")
        return skipped

    shutil.copytree(root, dest, symlinks=True, ignore=ignore, dirs_exist_ok=True)


_UP_AND_OUT = re.compile(r"""\b(editable|directory|path|virtual)\s*=\s*["']\.\./""")


def _workspace(root: Path, lock_text: str | None) -> tuple[Path, Path]:
    """(folder to remove afterwards, folder to copy the project into). A lock with a local
    source above the project (``../lib``) needs the copy at the project's own depth, so the
    copy goes beside the project; otherwise into the system's temporary folder."""
    real = root.resolve()
    if lock_text and _UP_AND_OUT.search(lock_text) and real.parent != real:
        tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.agentguard-", dir=real.parent))
        return tmp, tmp
    tmp = Path(tempfile.mkdtemp(prefix="agentguard-uvlock-"))
    return tmp, tmp / real.name


def _run_uv_lock(
    opts: Any, root: Path, requires_python: str | None, lock_text: str | None = None
) -> tuple[str | None, str, list[str]]:
    """(new uv.lock text or None, stderr, command shown) from `uv lock` on a copy."""
    cmd = uv_lock_command(opts, requires_python) + config_flags(root)
    env = dict(os.environ)
    env.setdefault("UV_PYTHON_DOWNLOADS", "never")
    shown = [
        "uv",
        *(c for i, c in enumerate(cmd[1:], 1) if not (cmd[i - 1] == "--python" or c == "--python")),
    ]
    try:
        tmp, work = _workspace(root, lock_text)
    except OSError as exc:
        return None, f"cannot make a folder to copy the project into: {exc}", shown
    try:
        try:
            _copy_project(root, work)
        except (OSError, shutil.Error) as exc:
            return None, f"cannot copy the project for `uv lock`: {exc}", shown
        try:
            proc = subprocess.run(
                cmd,
                cwd=work,
                env=env,
                capture_output=True,
                text=True,
                timeout=LOCK_TIMEOUT,
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except subprocess.TimeoutExpired:
            return None, f"`uv lock` did not finish within {LOCK_TIMEOUT} s", shown
        if proc.returncode != 0:
            return None, proc.stderr, shown
        try:
            return (work / UV_LOCK).read_bytes().decode("utf-8"), proc.stderr, shown
        except (OSError, UnicodeDecodeError) as exc:
            return None, f"`uv lock` left no readable uv.lock: {exc}", shown
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def relock_uv(opts: Any, inputs: ProjectInputs, policy: DepsPolicy) -> Report:
    from agentguard.lock.lockfile import write_atomically
    from agentguard.lock.resolver_errors import classify as _classify
    from agentguard.rules.deps_gate import check_major_crossings

    root = inputs.root
    path = root / UV_LOCK
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    prov: dict[str, JSONValue] = {
        "input_hash": inputs.input_hash,
        "input_source": inputs.source,
        "lock_file": UV_LOCK,
        "lock_digest_before": file_digest(path),
    }
    reader = UvLockReader()
    old: ExistingLock | None = None
    old_text: str | None = None
    if path.exists() or path.is_symlink():
        try:
            old_text = read_lock_text(path, UV_LOCK)  # capped, no link followed
            old = reader.read(old_text, UV_LOCK)
        except LockReadError as exc:
            sources.append(read_failure(exc, "Fix uv.lock (or restore it from git), then re-run."))
        if old is None:
            return make_report(
                "lock",
                [],
                sources,
                target=str(root),
                inputs=prov,
                notes=[f"{UV_LOCK} was left untouched; `uv lock` was not run."],
            )
        sources.append(lock_source(old))
    # While uv resolves, refresh the released versions of what the lock holds now (an
    # upgrade must see new majors; a re-lock keeps most names): the analysis reads the cache.
    upgrading = bool(opts.upgrade or opts.upgrade_packages)
    # Without an upgrade, uv mostly keeps the lock as it is: analyse the committed one
    # meanwhile, and use that analysis when the new file is byte-identical.
    refreshing: Future[None] | None = None
    speculating: Future[ExistingAnalysis] | None = None
    if old is not None:
        pool = ThreadPoolExecutor(1)
        if upgrading:
            refreshing = pool.submit(refresh_released, old, root, index_url=opts.index_url)
        else:
            speculating = pool.submit(
                analyse_existing,
                old,
                root_requirements(inputs, old),
                base=root,
                index_url=opts.index_url,
            )
        pool.shutdown(wait=False)
    new_text, stderr, shown = _run_uv_lock(opts, root, inputs.requires_python, old_text)
    if refreshing is not None:
        refreshing.result()
    prov["command"] = " ".join(shown)
    if new_text is None:
        err = _classify(stderr)
        sources.append(
            Source.failed(
                "resolver",
                "uv lock",
                str(err) if stderr else "uv lock failed",
                error_code=err.code,
                retryable=err.retryable,
                remedy=err.remedy,
            )
        )
        return make_report(
            "lock",
            [],
            sources,
            target=str(root),
            inputs=prov,
            notes=[f"{UV_LOCK} was left untouched."],
        )
    try:
        new = reader.read(new_text, UV_LOCK)
    except LockReadError as exc:
        sources.append(
            read_failure(exc, "Report this: `uv lock` wrote a lock agentguard cannot read.")
        )
        return make_report(
            "lock",
            [],
            sources,
            target=str(root),
            inputs=prov,
            notes=[f"{UV_LOCK} was left untouched."],
        )
    sources.append(Source.ok("resolver", "uv lock", f"{len(new.registry_pins)} packages locked"))
    analysis = None
    if speculating is not None and new_text == old_text:
        try:
            analysis = speculating.result()  # the same file: the same facts
        except Exception:  # redone below, where any error is reported the usual way
            analysis = None
    if analysis is None:
        analysis = analyse_existing(
            new,
            root_requirements(inputs, new),
            base=root,
            fresh=upgrading and old is None,
            index_url=opts.index_url,
        )
    sources.extend(analysis.sources)
    findings: list[Finding] = graph_findings(analysis, policy)
    crossings: list[Finding] = []
    if old is not None:
        crossings = check_major_crossings(
            old.packages(), analysis.graph, opts.allow_major, inputs.requires_python
        )
        findings += crossings
    from agentguard.lock.existing_check import check_hashes, check_in_sync

    findings += check_hashes(new) + check_in_sync(new, inputs, declared_as_uv_records(root))
    blocking = [f for f in crossings if f.severity > Severity.INFO]
    notes: list[str] = []
    if blocking:
        notes.append(
            f"`uv lock` would cross a major ({', '.join(sorted({str(f.evidence['package']) for f in blocking}))}); "
            f"{UV_LOCK} was left untouched."
        )
    elif any(s.status.value == "failed" for s in sources):
        notes.append(f"A source failed, so the gate is incomplete; {UV_LOCK} was left untouched.")
    elif new_text == old_text:
        notes.append(f"{UV_LOCK} is up to date; left untouched.")
    else:
        try:
            write_atomically({path: new_text})
        except OSError as exc:
            sources.append(
                Source.failed(
                    "lockfile",
                    UV_LOCK,
                    f"cannot write: {exc}",
                    error_code="lockfile-write-failed",
                    retryable=False,
                )
            )
            notes.append(f"Writing failed; {UV_LOCK} is unchanged.")
        else:
            notes.append(
                f"Wrote {UV_LOCK} from `uv lock` after the major gate ({len(new.registry_pins)} packages)."
            )
    prov["lock_digest"] = file_digest(path)
    notes.append(
        f"The lock is the project's own {UV_LOCK}; no requirements.lock or pylock.toml was written."
    )
    return make_report(
        "lock",
        findings,
        sources,
        target=str(root),
        inputs=prov,
        facts=facts_of(new, analysis),
        notes=notes,
    )

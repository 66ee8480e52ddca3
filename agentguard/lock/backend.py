"""Resolver backends: uv (default) and pip-tools (its run: agentguard.lock.pip_tools). Both
produce hash-pinned requirements.

A backend runs the real resolver once and returns the pins plus the index it used.
It never runs package code itself beyond what the resolver does; with
``only_binary`` the resolver is told to refuse sdists (no builds at all).
"""

from __future__ import annotations

import contextlib
import shutil  # (the scratch folder's tempfile imports it anyway)
import subprocess
import sys
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard import redact
from agentguard.errors import UsageError
from agentguard.interrupts import held
from agentguard.lock import children
from agentguard.lock.deadline import DEADLINE_CODE, NO_DEADLINE, Deadline
from agentguard.lock.resolver_errors import ResolverError as ResolverError
from agentguard.lock.resolver_errors import classify as _classify
from agentguard.scratch import make as make_scratch
from agentguard.scratch import remove as remove_scratch
from agentguard.scratch import scratch_folder

if TYPE_CHECKING:
    from agentguard.facts.pins import LockedPackage

RESOLVE_TIMEOUT = 600


@dataclass(frozen=True)
class ResolveRequest:
    requirements: tuple[str, ...]
    python_version: str | None  # lowest supported "3.10", for universal resolution
    index_url: str | None
    find_links: tuple[str, ...]
    no_index: bool
    upgrade: bool
    upgrade_packages: tuple[str, ...]
    only_binary: bool
    preferences: str | None  # text of the previous requirements lock
    exclude_newer: str | None = None  # RFC 3339 cutoff: leave out files uploaded after it
    deadline: Deadline = NO_DEADLINE


@dataclass(frozen=True)
class Resolution:
    pins: tuple[LockedPackage, ...]
    index_urls: tuple[str, ...]
    find_links: tuple[str, ...]
    backend: str  # "uv 0.13.9"
    universal: bool
    command: tuple[str, ...]
    # a lock that is not universal: the marker values of the one environment it was
    # resolved for (python_version, sys_platform, platform_machine)
    environment: Mapping[str, str] | None = None


def run_resolver(
    cmd: list[str], cwd: Path, env: dict[str, str], deadline: Deadline = NO_DEADLINE
) -> subprocess.CompletedProcess[str]:
    try:
        return subprocess.run(
            cmd,
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=deadline.bound(RESOLVE_TIMEOUT),
            check=False,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise _timed_out(deadline) from None
    except OSError as exc:
        raise ResolverError(
            f"cannot run the resolver: {exc}", code="resolver-missing", retryable=False
        ) from None


_UV_LOOKUP = threading.Lock()  # find_uv_bin reads sysconfig, whose first use is not thread-safe


def uv_binary() -> str:
    try:
        from uv import find_uv_bin

        with _UV_LOOKUP:
            return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        found = shutil.which("uv")
        if found:
            return found
        raise UsageError(
            "uv is not installed (it ships with agentguard: reinstall agentguard)"
        ) from None


# Both resolvers write a hash-pinned requirements file and say which index they used.
OUTPUT_FLAGS = [
    "-o",
    "requirements.txt",
    "--generate-hashes",
    "--emit-index-url",
    "--emit-find-links",
    "--no-header",
    "--no-annotate",
    "--quiet",
]


def index_flags(
    req: ResolveRequest, index_flag: str, env: dict[str, str], env_name: str
) -> list[str]:
    """The flags for the indexes; an index URL that carries a login goes to the resolver in
    its environment (``env_name``), never on its command line (which every local user can
    read) or in what agentguard shows."""
    flags: list[str] = []
    if req.index_url:
        from agentguard.lock.urls import split_userinfo

        if split_userinfo(req.index_url)[1] is not None:
            env[env_name] = req.index_url
        else:
            flags += [index_flag, req.index_url]
    for link in req.find_links:
        flags += ["--find-links", link]
    if req.no_index:
        flags.append("--no-index")
    if req.upgrade:
        flags.append("--upgrade")
    for p in req.upgrade_packages:
        flags += ["--upgrade-package", p]
    return flags


class UvRun:
    """One `uv pip compile` started (with `uv --version` beside it) and not yet waited for.

    Started on the caller's thread, so the resolver is running before anything else is
    done; :meth:`result` waits for it (on any thread), :meth:`cancel` stops it. Either
    removes the scratch folder. ``verbose``: uv logs what it reads (``-v``); the log's
    lines are kept in :attr:`log` (and not read as its messages)."""

    def __init__(self, req: ResolveRequest, *, verbose: bool = False) -> None:
        self.req = req
        self.log: list[str] = []
        self._verbose = verbose
        uv = uv_binary()
        # --no-config: no uv.toml of the scratch folder's parents (a shared $TMPDIR that any
        # local user can write to), of the user or of the system; only the flags below.
        cmd = [uv, "pip", "compile", "requirements.in", "--no-config", *OUTPUT_FLAGS]
        cmd.append("--universal")
        # Name the interpreter: left to itself uv probes every python on PATH (15 s behind
        # pyenv shims here) just to learn that the target version is not installed.
        cmd += ["--python", sys.executable]
        if req.python_version:
            cmd += ["--python-version", req.python_version]
        env = children.resolver_env()
        cmd += index_flags(req, "--default-index", env, "UV_DEFAULT_INDEX")
        if req.only_binary:
            cmd += ["--only-binary", ":all:"]
        if req.exclude_newer:
            cmd += ["--exclude-newer", req.exclude_newer]
        if verbose:  # (uv refuses -v beside --quiet; what it prints is not read)
            cmd = [a for a in cmd if a != "--quiet"] + ["-v"]
        self.cmd = cmd
        self._tmp = make_scratch("agentguard-lock-")
        self._probe: subprocess.Popen[str] | None = None
        self._proc: subprocess.Popen[str] | None = None
        try:
            self._out = scratch_inputs(req, self._tmp)
            # `uv --version` runs beside the resolution, not before it (it is on the clock),
            # and is started after it: each start waits for its child's exec (3-7 ms)
            children.started(self)
            # an interrupt inside Popen, after its fork, would leave a resolver no handle
            # names (cancel could not stop it): held until the handle is kept
            with held():
                self._proc = _popen(cmd, self._tmp, env)
            with held():
                self._probe = _popen([uv, "--version"], self._tmp, None, text_err=False)
        except BaseException:
            self.cancel()
            raise

    def result(self) -> Resolution:
        """Wait for the resolver (within the request's deadline) and read its pins."""
        from agentguard.lock.requirements_text import parse_requirements_lock
        from agentguard.lock.urls import clean_url

        assert self._proc is not None and self._probe is not None
        try:
            stderr = _wait(self._proc, self.req.deadline)
            if self._verbose:
                self.log, stderr = _split_log(stderr)
            if self._proc.returncode != 0:
                raise _classify(stderr)
            text = self._out.read_text(encoding="utf-8")
            pins, index_urls, find_links = parse_requirements_lock(text)
            try:
                out, _ = self._probe.communicate(timeout=self.req.deadline.bound(RESOLVE_TIMEOUT))
            except subprocess.TimeoutExpired:
                out = ""
        finally:
            self.cancel()
        version = (out or "").strip() or "uv"
        cmd = self.cmd
        shown = tuple(
            redact.url(a)
            for a in ("uv", *cmd[1 : cmd.index("--python")], *cmd[cmd.index("--python") + 2 :])
            if a != "-v"
        )
        # What is written and shown of an index: never its login or a token.
        return Resolution(
            tuple(pins),
            tuple(clean_url(u) for u in index_urls),
            tuple(clean_url(u) for u in find_links),
            version,
            True,
            shown,
        )

    def cancel(self) -> None:
        """Stop what still runs and remove the scratch folder (idempotent)."""
        for proc in (self._proc, self._probe):
            if proc is not None and proc.poll() is None:
                proc.kill()
            if proc is not None:
                with contextlib.suppress(OSError, ValueError, subprocess.TimeoutExpired):
                    proc.communicate(timeout=5)
        remove_scratch(self._tmp)
        children.finished(self)


def _split_log(stderr: str) -> tuple[list[str], str]:
    """uv's ``-v`` log (its ``DEBUG`` lines) apart from its messages."""
    log: list[str] = []
    rest: list[str] = []
    for line in stderr.splitlines():
        (log if line.startswith("DEBUG ") else rest).append(line)
    return log, "\n".join(rest)


def scratch_inputs(req: ResolveRequest, tmpdir: Path) -> Path:
    """The scratch folder's requirements.in, and the previous lock as requirements.txt (the
    resolver prefers the pins already there); the path the resolver writes."""
    (tmpdir / "requirements.in").write_text("\n".join(req.requirements) + "\n", encoding="utf-8")
    out = tmpdir / "requirements.txt"
    if req.preferences:
        out.write_text(req.preferences, encoding="utf-8")
    return out


def _popen(
    cmd: list[str], cwd: Path, env: dict[str, str] | None, *, text_err: bool = True
) -> subprocess.Popen[str]:
    try:
        return subprocess.Popen(
            cmd,
            cwd=cwd,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if text_err else subprocess.DEVNULL,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    except OSError as exc:
        raise ResolverError(
            f"cannot run the resolver: {exc}", code="resolver-missing", retryable=False
        ) from None


def _wait(proc: subprocess.Popen[str], deadline: Deadline) -> str:
    """The resolver's stderr once it exited; a resolver past the deadline (or the
    resolver timeout) is killed, as ``subprocess.run`` would."""
    try:
        _, err = proc.communicate(timeout=deadline.bound(RESOLVE_TIMEOUT))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise _timed_out(deadline) from None
    except BaseException:
        proc.kill()
        raise
    return err or ""


def _timed_out(deadline: Deadline) -> ResolverError:
    if deadline.passed:
        return ResolverError(
            f"the resolver was stopped: {deadline.describe()}",
            code=DEADLINE_CODE,
            retryable=True,
            remedy="Check the index (a slow or stalled index holds the resolver), or "
            "give the run more time with --timeout.",
        )
    return ResolverError(
        f"the resolver did not finish within {RESOLVE_TIMEOUT} s",
        code="resolver-timeout",
        retryable=True,
    )


def resolve_uv(req: ResolveRequest) -> Resolution:
    return UvRun(req).result()


def default_index_urls() -> tuple[str, ...]:
    """The index the resolver uses when none is given (asked from uv, not hard-coded)."""
    from agentguard.lock.requirements_text import parse_requirements_lock
    from agentguard.lock.urls import clean_url

    with scratch_folder("agentguard-idx-") as tmp:
        (tmp / "empty.in").write_text("", encoding="utf-8")
        proc = run_resolver(
            [
                uv_binary(),
                "pip",
                "compile",
                "empty.in",
                "--no-config",
                "--emit-index-url",
                "--no-header",
                "--quiet",
            ],
            Path(tmp),
            children.resolver_env(),
        )
        _, urls, _ = parse_requirements_lock(proc.stdout)
    return tuple(clean_url(u) for u in urls)

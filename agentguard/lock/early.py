"""`agentguard lock` starts its resolver before the command line is imported.

The command line (typer, the report writers) and the lock's analysis take about 0.1 s to
import; the resolver (uv) takes most of a re-lock's time. So :mod:`agentguard.__main__`
hands the arguments of a `lock` to :func:`start` first: when they are plain (every token
known, no ``--check``, ``--help`` or ``--export``, the uv backend, no lock of a tool that
is not re-locked), it reads the project's inputs and configuration, takes the project lock
(without waiting) and starts the resolver, through the very functions the command uses.
The command then parses its arguments as always, and :func:`take` hands it the started
resolver (on a uv project: `uv lock` on a copy of it) only when its options are equal to
the ones parsed here; otherwise, and whenever anything here failed, the early start is
stopped and the command does everything the usual way (and reports what failed).
Whatever was started and not taken is stopped by :func:`abandon`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard.lock.start import LockOptions

if TYPE_CHECKING:
    from concurrent.futures import Future

    from agentguard.config import Config
    from agentguard.lock.backend import ResolveRequest, UvRun
    from agentguard.lock.index import IndexClient
    from agentguard.lock.inputs import ProjectInputs
    from agentguard.lock.lockfile import QuickPrevious
    from agentguard.lock.start import Settings
    from agentguard.lock.uv_lock_run import UvLockRun

# `agentguard lock`'s options (see agentguard.cli): field of LockOptions, or None for the
# report's options, which do not change what is resolved.
_FLAGS = {
    "--upgrade": "upgrade",
    "-U": "upgrade",
    "--all-extras": "all_extras",
    "--no-index": "no_index",
    "--only-binary": "only_binary",
    "--write-launch": "write_launch",
    "--verbose": None,
    "-v": None,
    "--quiet": None,
    "-q": None,
}
_MANY = {
    "--upgrade-package": "upgrade_packages",
    "-P": "upgrade_packages",
    "--allow-major": "allow_major",
    "--extra": "extras",
    "--group": "groups",
    "--find-links": "find_links",
}
_ONE = {
    "--index-url": "index_url",
    "--backend": "backend",
    "--min-release-age": "min_release_age",
    "--config": "config_file",
    "--timeout": "timeout",
    "--npm-registry": "npm_registry",
    "--export-npm": "export_npm",
    "--format": None,
    "-f": None,
    "--output": None,
    "-o": None,
    "--fail-on": None,
    "--sarif-root": None,
}


def parse(argv: list[str]) -> LockOptions | None:
    """The options of ``agentguard lock ARGV``, or None when they are not plain enough to
    be sure of (the command line then parses them alone)."""
    fields: dict[str, object] = {}
    many: dict[str, list[str]] = {}
    project: str | None = None
    args = iter(argv)
    for arg in args:
        name, eq, attached = arg.partition("=") if arg.startswith("--") else (arg, "", "")
        if name in _FLAGS and not eq:
            if _FLAGS[name]:
                fields[str(_FLAGS[name])] = True
        elif name in _MANY or name in _ONE:
            value = attached if eq else next(args, None)
            if value is None or (not eq and value.startswith("-")):
                return None
            if name in _MANY:
                many.setdefault(_MANY[name], []).append(value)
            elif _ONE[name]:
                fields[str(_ONE[name])] = value
        elif not arg.startswith("-") and project is None:
            project = arg
        else:  # --check, --help, --export, "--", a cluster of short flags, a second path
            return None
    try:
        timeout = float(str(fields.pop("timeout"))) if "timeout" in fields else None
    except ValueError:
        return None
    if timeout is not None and not timeout >= 0.1:
        return None
    if fields.get("backend", "uv") != "uv":
        return None
    config = fields.pop("config_file", None)
    if "export_npm" in fields:
        fields["export_npm"] = Path(str(fields["export_npm"]))
    kwargs: dict[str, Any] = {**fields, **{k: tuple(v) for k, v in many.items()}}
    return LockOptions(
        project=Path(project if project is not None else "."),
        config_file=Path(str(config)) if config is not None else None,
        timeout=timeout,
        **kwargs,
    )


@dataclass
class Early:
    """What was started: the resolver of agentguard's own lock (``run``, with its request),
    or `uv lock` for a uv project (``uv_lock``)."""

    opts: LockOptions
    inputs: ProjectInputs
    config: Config
    held: contextlib.ExitStack  # the project lock, taken
    settings: Settings | None = None  # (both kinds: the cooldown's cut-off is taken here)
    request: ResolveRequest | None = None
    run: UvRun | None = None
    uv_lock: UvLockRun | None = None
    # agentguard's own lock: the previous lock as read here, and the index pages of its
    # packages being read from the configured index meanwhile (see :func:`_read_ahead`)
    previous: QuickPrevious | None = None
    client: IndexClient | None = None
    # the previous pins analysed on a thread of their own (engine.lock.speculation, started by
    # the analyse hook), with ``client``
    speculating: Future[Any] | None = None

    def cancel(self) -> None:
        try:
            for started in (self.run, self.uv_lock):
                if started is not None:
                    started.cancel()
            if self.client is not None:
                self.client.close()
        finally:
            self.held.close()


_started: Early | None = None
# what starts the analysis of the previous pins beside the resolver (the engine's
# :func:`agentguard.engine.lock.early_analysis.analyse`, handed in by the entry point: a
# reader never runs a rule itself)
_analyse: Callable[[Early], None] | None = None


def start(argv: list[str], analyse: Callable[[Early], None] | None = None) -> None:
    """Start the resolver for ``agentguard lock ARGV`` when that is plain, and ``analyse``
    the previous pins beside it once they are read; never raises (but for an interrupt,
    after stopping what it started)."""
    global _started, _analyse
    _analyse = analyse
    opts = parse(argv)
    if opts is None:
        return
    with contextlib.suppress(Exception):  # the command meets the same error, and reports it
        _begin(opts)


def _begin(opts: LockOptions) -> None:
    """Start what ``opts`` will need and record it in ``_started`` the moment it runs (so
    that an interrupt from then on finds it, and :func:`abandon` stops it)."""
    global _started
    from agentguard.config import load_config
    from agentguard.lock.inputs import read_inputs
    from agentguard.lock.mutex import project_lock
    from agentguard.lock.start import settings_for
    from agentguard.lock.which_lock import quick_kind

    root = opts.project
    kind = quick_kind(root)  # (the readers are imported while the resolver runs)
    if kind is None:  # poetry.lock, another tool's pylock.toml, or more than one lock:
        return  # read and gated, not re-locked, or refused: nothing to start
    uv_project = kind == "uv.lock"
    inputs = read_inputs(
        root,
        extras=opts.extras,
        all_extras=opts.all_extras,
        groups=opts.groups,
        allow_urls=uv_project,
    )
    config = load_config(root, config_file=opts.config_file)
    settings = settings_for(opts, config)
    held = contextlib.ExitStack()
    early = Early(opts, inputs, config, held)
    try:
        held.enter_context(project_lock(root, wait=0))  # busy: the command waits its turn
        early.settings = settings
        if uv_project:
            early.uv_lock = _uv_lock(opts, inputs, config, settings)
        else:
            from agentguard.lock.backend import UvRun
            from agentguard.lock.start import resolve_request

            early.request = resolve_request(opts, inputs, settings)
            early.run = UvRun(early.request)
            _started = early
            with contextlib.suppress(Exception):  # only time is lost: the flow reads them
                _read_ahead(early)
        _started = early
    except BaseException:
        early.cancel()
        raise


def _read_ahead(early: Early) -> None:
    """Read the previous lock and start reading its packages' index pages, from the index
    the user configured (as :mod:`agentguard.engine.lock.requirements_flow` would, a second later:
    it takes this client when its index is the same)."""
    from agentguard.lock.configured import configured
    from agentguard.lock.index import IndexClient, prefetch_workers
    from agentguard.lock.lockfile import read_quick

    opts = early.opts
    early.previous = read_quick(early.inputs.root)
    if early.previous is None or opts.no_index or early.request is None:
        return
    urls = configured(opts.index_url, opts.backend).urls
    if not urls:
        return
    early.client = IndexClient(
        urls,
        opts.find_links,
        logins=(opts.index_url,) if opts.index_url else (),
        deadline=early.request.deadline,
    )
    names = sorted({p.name for p in early.previous.pins})
    early.client.prefetch(names, workers=prefetch_workers(len(names)))
    if _analyse is not None:
        _analyse(early)


def _uv_lock(
    opts: LockOptions, inputs: ProjectInputs, config: Config, settings: Settings
) -> UvLockRun:
    """`uv lock` on a copy, as :func:`agentguard.engine.lock.uv_project.relock_uv` starts it."""
    from agentguard import safeio
    from agentguard.lock.deadline import Deadline
    from agentguard.lock.uv_lock_run import UV_LOCK, UvLockRun

    path = inputs.root / UV_LOCK
    if path.is_symlink() or not path.is_file():
        raise OSError(f"{UV_LOCK}: not a regular file")  # the command reports it
    text = safeio.read_bytes(path, cap=safeio.MAX_LOCK_BYTES).decode("utf-8")
    deadline = Deadline.start(opts.timeout)
    return UvLockRun(
        opts,
        inputs.root,
        inputs.requires_python,
        text,
        deadline,
        no_build=config.build is False,
        exclude_newer=settings.exclude_newer,
    )


def take(opts: LockOptions) -> Early | None:
    """The resolver started for exactly these options (the caller now owns it), or None
    (and what was started for other options is stopped)."""
    global _started
    early, _started = _started, None
    if early is not None and early.opts != opts:
        early.cancel()
        return None
    return early


def abandon() -> None:
    """Stop a resolver started here that the command did not take (a usage error, an
    interrupt, a crash)."""
    global _started
    early, _started = _started, None
    if early is not None:
        early.cancel()

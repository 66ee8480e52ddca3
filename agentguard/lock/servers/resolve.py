"""The MCP servers a project launches, resolved for `agentguard lock`: each launch that
takes a package or an image from a registry is resolved (npm: :mod:`.npm`; PyPI:
:mod:`.pypi`; an image: its digest) against what ``mcp.lock.json`` held (:mod:`.lockfile`).
Nothing is judged or written here: the flow over it (gate AG141, judge AG140/AG142-AG144,
write the lock; ``lock --check``) is :mod:`agentguard.engine.lock.servers`.

A launch that could not be resolved is a failed source, never a pin."""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentguard import safeio
from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import (
    IMAGE,
    NPM,
    PYPI,
    ServerLaunch,
    ServerLock,
    ServerPin,
    major_of,
    pin_for,
    registry_launches,
)
from agentguard.findings import Finding, JSONValue, Source
from agentguard.lock.deadline import Deadline
from agentguard.lock.servers import lockfile, npm, pypi
from agentguard.lock.servers.lockfile import MCP_LOCK, LockReadError
from agentguard.lock.servers.trust_roots import TrustRoots
from agentguard.safeio import MAX_LOCK_BYTES

REGISTRY_ENV = ("AGENTGUARD_NPM_REGISTRY", "npm_config_registry", "NPM_CONFIG_REGISTRY")


@dataclass(frozen=True)
class ServerOptions:
    root: Path
    upgrade: bool = False
    upgrade_packages: tuple[str, ...] = ()
    allow_major: tuple[str, ...] = ()
    npm_registry: str | None = None  # --npm-registry (else the environment, else npm's own)
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    only_binary: bool = False
    deadline: Deadline = field(default_factory=Deadline.start)
    trust: TrustRoots | None = None  # None: the bundled roots (tests inject their own)


@dataclass(frozen=True)
class ServerResult:
    findings: tuple[Finding, ...] = ()
    sources: tuple[Source, ...] = ()
    notes: tuple[str, ...] = ()
    facts: dict[str, JSONValue] = field(default_factory=dict)
    written: bool = False
    lock: ServerLock | None = None  # what mcp.lock.json holds after the run (None: unknown)


def launches(
    servers: Sequence[McpServer],
) -> tuple[list[ServerLaunch], list[Source]]:
    """The registry launches of ``servers`` (each once), and a skipped source for each
    launch through a package launcher whose package could not be read as a name (a launch
    the lock cannot check is a finding: :func:`agentguard.engine.lock.servers.unverified`)."""
    found, unread = registry_launches(servers)
    skipped = [
        Source.skipped(
            "mcp-server",
            f"{u.server} ({u.path}:{u.line})",
            f"`{u.launcher}` launch not locked: {u.why}",
        )
        for u in unread
        if not u.unverified
    ]
    return found, skipped


def _same_tarball(before: ServerPin | None, now: ServerPin) -> None:
    """A version the lock kept must still be the tarball it recorded: a registry answering
    another integrity for the same version (npm never lets a version be published twice)
    replaced it. Nothing is re-pinned; the Python side holds its files the same way."""
    if before is None or before.version != now.version or not before.integrity:
        return
    if now.integrity != before.integrity:
        raise npm.NpmError(
            f"{now.package}@{now.version}: the registry's integrity for this version is not "
            f"the one {MCP_LOCK} recorded (the version was replaced); nothing was re-pinned",
            "npm-integrity-changed",
        )


def previous_pin(launch: ServerLaunch, lock: ServerLock | None) -> ServerPin | None:
    return None if lock is None else pin_for(launch, lock.pins)


def read_lock(root: Path) -> tuple[ServerLock | None, Source | None]:
    try:
        return lockfile.read(root), None
    except (LockReadError, OSError) as exc:
        code = exc.code if isinstance(exc, LockReadError) else "mcp-lock-unreadable"
        return None, Source.failed(
            "lockfile",
            MCP_LOCK,
            f"the MCP server lock could not be read: {exc}",
            error_code=code,
            retryable=False,
            remedy=f"Fix or remove {MCP_LOCK}, then run `agentguard lock` again.",
        )


def _registry(opts: ServerOptions) -> tuple[npm.Registry | None, Source | None]:
    base = opts.npm_registry or next(
        (os.environ[n] for n in REGISTRY_ENV if os.environ.get(n)), None
    )
    base = base or npm.default_registry(opts.deadline)
    if base is None:
        return None, Source.failed(
            "npm-registry",
            "npm",
            "no npm registry configured, and npm (which names its own) is not installed",
            error_code="npm-no-registry",
            retryable=False,
            remedy="Pass --npm-registry URL (or set npm_config_registry), or install npm.",
        )
    try:
        return npm.Registry(base, opts.deadline, opts.trust), None
    except npm.NpmError as exc:
        return None, Source.failed(
            "npm-registry", "npm", str(exc), error_code=exc.code, retryable=False
        )


def _failed(launch: ServerLaunch, kind: str, exc: npm.NpmError | pypi.PypiError) -> Source:
    return Source.failed(
        kind,
        f"{launch.package} ({launch.where})",
        str(exc),
        error_code=exc.code,
        retryable=exc.retryable,
        remedy="Check the registry (or the package name); the server is not pinned.",
    )


def _image_pin(launch: ServerLaunch) -> ServerPin:
    assert launch.digest is not None
    return ServerPin(
        IMAGE, launch.package, launch.digest, launch.server, launch.path, launch.line,
        requested=launch.requested,
    )  # fmt: skip


@dataclass(frozen=True)
class Resolved:
    """What :func:`resolve_servers` found (no file written yet)."""

    found: tuple[ServerLaunch, ...]
    sources: tuple[Source, ...]
    previous: ServerLock | None
    seen: bytes | None  # mcp.lock.json as it was read (None: there was none)
    pairs: tuple[tuple[ServerLaunch, ServerPin], ...] = ()
    failed: Source | None = None  # the previous lock could not be read
    unverified: tuple[Finding, ...] = ()  # AG142: launches the lock cannot check (the flow's)


def raw_lock(root: Path) -> bytes | None:
    try:
        return safeio.read_bytes(root / MCP_LOCK, root=root, cap=MAX_LOCK_BYTES)
    except FileNotFoundError:
        return None
    except OSError:
        return b""  # (unreadable: the lock reader reports it)


def resolve_launches(servers: Sequence[McpServer], opts: ServerOptions) -> Resolved:
    """Resolve every registry launch (in threads, within the deadline); nothing written.
    Runs beside the Python resolver: it holds no lock of the project."""
    found, sources = launches(servers)
    seen = raw_lock(opts.root)
    previous, failed = read_lock(opts.root)
    if failed is not None or (not found and previous is None):
        return Resolved(tuple(found), tuple(sources), previous, seen, failed=failed)
    registry: npm.Registry | None = None
    if any(x.kind == NPM for x in found):
        registry, bad = _registry(opts)
        if bad is not None:
            sources.append(bad)
    index = pypi.PyIndex(
        opts.index_url, opts.find_links, opts.no_index, opts.only_binary, opts.deadline
    )

    def moving(launch: ServerLaunch) -> bool:
        return opts.upgrade or launch.package in opts.upgrade_packages

    def one(launch: ServerLaunch) -> ServerPin | Source | None:
        before = previous_pin(launch, previous)
        keep = None if before is None or moving(launch) else before.version
        try:
            if launch.kind == NPM:
                if registry is None:
                    return None  # (its failed source is already there)
                pin = npm.resolve(registry, launch, keep, before.version if before else None)
                _same_tarball(before, pin)
                return pin
            if launch.kind == PYPI:
                return pypi.resolve(launch, index, before, moving(launch))
        except npm.NpmError as exc:
            return _failed(launch, "npm-registry", exc)
        except pypi.PypiError as exc:
            return _failed(launch, "index", exc)
        return _image_pin(launch) if launch.digest else None

    with ThreadPoolExecutor(max(1, min(4, len(found)))) as pool:
        outcomes = list(pool.map(one, found))
    pairs: list[tuple[ServerLaunch, ServerPin]] = []
    for launch, got in zip(found, outcomes, strict=True):
        if isinstance(got, Source):
            sources.append(got)
        elif got is not None:
            pairs.append((launch, got))
    return Resolved(tuple(found), tuple(sources), previous, seen, tuple(pairs))


def relocated(lock: ServerLock, servers: Sequence[McpServer]) -> tuple[ServerPin, ...] | None:
    """The lock's pins with each launch's line and request as ``servers`` (read again once
    ``--write-launch`` rewrote them) now spell them, so that the lock written by the run
    that pinned the launches is the one a re-lock writes; None when nothing moved. A pin
    whose key now has no launch, or two, keeps what it recorded."""
    found, _ = launches(servers)
    moved = False
    out: list[ServerPin] = []
    for pin in lock.pins:
        same = [x for x in found if x.key == pin.key]
        if len(same) == 1 and (same[0].line, same[0].requested) != (pin.line, pin.requested):
            launch, majors = same[0], pin.majors
            own = major_of(pin.version)
            if launch.spec == pin.pinned_spec(launch.extras) and own in pin.released_majors:
                majors = (own,)  # the exact pin admits its own major only, as a re-lock finds
            pin = replace(pin, line=launch.line, requested=launch.requested, majors=majors)
            moved = True
        out.append(pin)
    return tuple(out) if moved else None

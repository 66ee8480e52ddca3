"""A Python server launch (``uvx``, ``uv tool run``, ``pipx run``) resolved as the Python
stack is: one real `uv pip compile` of the tool's own environment (universal, every file
hashed), from the indexes the run configured (``--index-url``, uv's and pip's environment,
the resolver's default), never from the project under review. The released majors come
from the same index, through agentguard's index client."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard.facts.mcp_pins import PYPI, LockedDependency, ServerLaunch, ServerPin
from agentguard.lock.backend import ResolveRequest, ResolverError, resolve_uv
from agentguard.lock.deadline import Deadline
from agentguard.lock.graph import major_key, majors_admitted, released_major_keys
from agentguard.lock.index import IndexClient
from agentguard.lock.pages import IndexError_
from agentguard.lock.servers.lockfile import MCP_LOCK
from agentguard.lock.urls import clean_url


@dataclass(frozen=True)
class PyIndex:
    """The run's own index settings (from ``lock``'s options)."""

    index_url: str | None
    find_links: tuple[str, ...]
    no_index: bool
    only_binary: bool
    deadline: Deadline


class PypiError(Exception):
    def __init__(self, message: str, code: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


def _preferences(previous: ServerPin | None) -> str | None:
    """The versions the previous lock holds, as the resolver's preferences: versions only.
    With the recorded hashes beside them the resolver keeps those hashes as they are, so a
    release whose files the index replaced would stay "up to date" with files the index no
    longer lists (:func:`_same_files` holds a kept version to them instead)."""
    if previous is None or not previous.environment:
        return None
    lines = [
        f"{d.name}=={d.version}" + (f" ; {d.marker}" if d.marker else "")
        for d in previous.environment
    ]
    return "\n".join(lines) + "\n"


def _same_files(previous: ServerPin | None, now: Sequence[LockedDependency]) -> None:
    """A version the lock kept must still be served with a file the lock recorded (as the
    Python lock holds its pins: ``hash-not-on-index``); the index adding a file to a
    release (a new platform's wheel) is not a change, the index no longer listing any of the
    recorded files is: the release was replaced (the index is not trusted beyond what a
    hash pins)."""
    if previous is None:
        return
    before = {(d.name, d.version): set(d.hashes) for d in previous.environment}
    for dep in now:
        recorded = before.get((dep.name, dep.version))
        if recorded and not recorded & set(dep.hashes):
            raise PypiError(
                f"{dep.name}=={dep.version}: the index lists no file with the hashes "
                f"{MCP_LOCK} recorded for this version (the release's files were replaced); "
                "nothing was re-pinned",
                "hash-not-on-index",
            )


def resolve(
    launch: ServerLaunch, index: PyIndex, previous: ServerPin | None, upgrade: bool
) -> ServerPin:
    """The pin of a Python launch; raises :class:`PypiError` (a failed source)."""
    requirement = f"{launch.package}{launch.extras}{launch.requested or ''}"
    req = ResolveRequest(
        requirements=(requirement,),
        python_version=None,
        index_url=index.index_url,
        find_links=index.find_links,
        no_index=index.no_index,
        upgrade=False,
        upgrade_packages=(),
        only_binary=index.only_binary,
        preferences=None if upgrade else _preferences(previous),
        deadline=index.deadline,
    )
    try:
        resolution = resolve_uv(req)
    except ResolverError as exc:
        raise PypiError(str(exc), exc.code, exc.retryable) from None
    name = canonicalize_name(launch.package)
    own = [p for p in resolution.pins if p.name == name]
    if len(own) != 1 or not own[0].version:
        versions = ", ".join(p.version for p in own) or "none"
        raise PypiError(
            f"{launch.package}: the resolution pins it {len(own)} times ({versions}); "
            "one exact version is needed",
            "pypi-ambiguous",
        )
    pin = own[0]
    environment = tuple(
        LockedDependency(p.name, p.version, p.marker, p.hashes) for p in resolution.pins
    )
    _same_files(previous, environment)
    released, admitted = _majors(resolution.index_urls, resolution.find_links, index, launch)
    return ServerPin(
        kind=PYPI,
        package=launch.package,
        version=pin.version,
        server=launch.server,
        path=launch.path,
        line=launch.line,
        requested=launch.requested,
        registry=", ".join(resolution.index_urls) or None,
        hashes=pin.hashes,
        environment=environment,
        majors=admitted,
        released_majors=released,
    )


def _majors(
    index_urls: tuple[str, ...],
    find_links: tuple[str, ...],
    index: PyIndex,
    launch: ServerLaunch,
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    urls = tuple(
        index.index_url if index.index_url and clean_url(index.index_url) == u else u
        for u in index_urls
    )
    client = IndexClient(
        () if index.no_index else urls,
        find_links or index.find_links,
        logins=(index.index_url,) if index.index_url else (),
        deadline=index.deadline,
    )
    try:
        versions = client.project_page(launch.package).released_versions()
    except IndexError_ as exc:
        raise PypiError(str(exc), exc.code, exc.retryable) from None
    finally:
        client.close()
    released = released_major_keys(versions)
    spec = (launch.requested or "").replace("===", "==")
    try:
        admitted = majors_admitted(spec, versions) if spec else released
    except (InvalidVersion, ValueError):
        admitted = released
    return released, admitted


def major_of(version: str) -> str | None:
    try:
        return major_key(Version(version))
    except InvalidVersion:
        return None

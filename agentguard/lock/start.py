"""What `agentguard lock` decides before its resolver runs: the options, the settings from
the flags and ``[tool.agentguard]``, and the resolver request.

Kept apart from :mod:`agentguard.lock_command` (which imports the analysis, the index
client and the rules) so that :mod:`agentguard.lock.early` can start the resolver before
the command line itself is imported; both paths build the request here, so they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard import safeio
from agentguard.errors import UsageError
from agentguard.lock.mutex import REQUIREMENTS_LOCK
from agentguard.lock.plain_requirements import plain_python_floor
from agentguard.safeio import MAX_LOCK_BYTES

if TYPE_CHECKING:
    from agentguard.config import Config
    from agentguard.findings import JSONValue
    from agentguard.lock.backend import ResolveRequest
    from agentguard.lock.inputs import ProjectInputs


@dataclass(frozen=True)
class LockOptions:
    project: Path
    check: bool = False
    upgrade: bool = False
    upgrade_packages: tuple[str, ...] = ()
    allow_major: tuple[str, ...] = ()
    extras: tuple[str, ...] = ()
    all_extras: bool = False
    groups: tuple[str, ...] = ()
    index_url: str | None = None
    find_links: tuple[str, ...] = ()
    no_index: bool = False
    backend: str = "uv"
    min_release_age: str | None = None  # "7d": leave out releases uploaded since
    only_binary: bool = False
    config_file: Path | None = None  # --config: read only this file
    export: str | None = None  # "requirements" | "pylock": write the project's own lock as one
    timeout: float | None = None  # seconds for the whole run (None: the generous default)
    smoke: bool | None = None  # --smoke / --no-smoke (None: the configuration decides)
    smoke_timeout: float | None = None  # seconds for the smoke run (None: its default)
    npm_registry: str | None = None  # --npm-registry: where npm server launches resolve
    write_launch: bool = False  # --write-launch: rewrite MCP server launches to the lock
    export_npm: Path | None = None  # --export-npm DIR: each npm server's tree, for `npm ci`
    accept_tools: tuple[str, ...] = ()  # --accept-tools: re-record these servers' changed tools


@dataclass(frozen=True)
class Settings:
    """What this lock was made under, from the flags and ``[tool.agentguard]``."""

    only_binary: bool
    min_release_age: str | None
    exclude_newer: str | None  # the cutoff the age gives, at this run's start

    def tool_table(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {"only-binary": self.only_binary}
        if self.min_release_age:
            out["min-release-age"] = self.min_release_age
            out["exclude-newer"] = self.exclude_newer
        return out

    def cooldown_note(self) -> str | None:
        """What the report says of the cooldown: the age and the cut-off it gave."""
        if not self.exclude_newer:
            return None
        return (
            f"Cooldown (min-release-age {self.min_release_age}): files uploaded after "
            f"{self.exclude_newer} were left out of the resolution."
        )


def settings_for(opts: LockOptions, config: Config) -> Settings:
    import datetime as dt

    from agentguard.config import release_age_seconds

    age = opts.min_release_age or config.min_release_age
    cutoff = None
    if age:
        try:
            seconds = release_age_seconds(age)
        except ValueError as exc:
            raise UsageError(f"--min-release-age: {exc}") from None
        when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(seconds=seconds)
        cutoff = when.replace(microsecond=0).isoformat().replace("+00:00", "Z")
    return Settings(opts.only_binary or config.build is False, age, cutoff)


def python_floor(requires_python: str | None) -> str | None:
    if not requires_python:
        return None
    plain = plain_python_floor(requires_python)  # `>=3.10`: without importing packaging
    if plain is not None:
        return plain
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        spec = SpecifierSet(requires_python)
    except InvalidSpecifier:
        return None
    for s in spec:
        if s.operator in (">=", "~=", "=="):
            parts = s.version.split(".")
            return ".".join(parts[:2]) if len(parts) > 1 else f"{parts[0]}.0"
    return None


def resolve_request(opts: LockOptions, inputs: ProjectInputs, settings: Settings) -> ResolveRequest:
    """The resolver's request; the run's deadline starts here. The previous requirements
    lock goes along as the resolver's preferences (a re-lock keeps its pins)."""
    from agentguard.lock.backend import ResolveRequest
    from agentguard.lock.deadline import Deadline

    root = inputs.root
    req_path = root / REQUIREMENTS_LOCK
    try:
        preferences = (
            safeio.read_text(req_path, root=root, cap=MAX_LOCK_BYTES)
            if req_path.is_file()
            else None
        )
    except (OSError, UnicodeDecodeError):
        preferences = None  # read_stored reports the unreadable file
    return ResolveRequest(
        requirements=tuple(inputs.requirement_lines()),
        python_version=python_floor(inputs.requires_python),
        index_url=opts.index_url,
        find_links=opts.find_links,
        no_index=opts.no_index,
        upgrade=opts.upgrade,
        upgrade_packages=opts.upgrade_packages,
        only_binary=settings.only_binary,
        preferences=preferences,
        exclude_newer=settings.exclude_newer,
        deadline=Deadline.start(opts.timeout),
    )


# What a run built and needs no more (parsed index pages, graphs), kept when the process
# ends without tearing the interpreter down (agentguard.__main__): freeing those objects
# one by one, after the resolver returned, cost 15-30 ms on a re-lock's clock.
_retained: list[object] | None = None


def retain_until_exit() -> None:
    """From now on :func:`retain` keeps what it is given (the command's own process only)."""
    global _retained
    if _retained is None:
        _retained = []


def retain(*objects: object) -> None:
    if _retained is not None:
        _retained.append(objects)

"""Compose files as frozen per-service facts with line numbers.

Filled by :func:`agentguard.inspect.project.compose_facts.read_compose`.

Unset keys: ``None`` for a string field means "not set in this file" -- the image then
decides, so the effective value is unknown here. Booleans are ``False`` when unset
(compose's default) and ``None`` when the value could not be read (interpolated).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ComposeVolume:
    type: str  # "bind" | "volume" | "tmpfs" | "npipe" | "cluster" | "image" | other as written
    source: str | None  # host path (bind) or volume name; None: anonymous / not given
    target: str | None
    read_only: bool | None  # None: could not be determined (interpolated mode)
    line: int | None
    short: str | None = None  # the short-syntax text, when written that way


@dataclass(frozen=True)
class ComposeEnv:
    name: str
    value: str | None = field(repr=False)  # None: passed through from the host; never render
    line: int | None


@dataclass(frozen=True)
class ComposeService:
    name: str
    line: int | None
    image: str | None
    build_context: str | None  # as written, relative to the compose file's folder
    build_dockerfile: str | None
    working_dir: str | None
    user: str | None
    volumes: tuple[ComposeVolume, ...]
    environment: tuple[ComposeEnv, ...]
    cap_add: tuple[str, ...]
    cap_drop: tuple[str, ...]
    privileged: bool | None
    network_mode: str | None
    pid: str | None
    ipc: str | None
    read_only: bool | None
    security_opt: tuple[str, ...]
    command: str | None  # shell text of command/entrypoint (start time), joined
    field_lines: tuple[tuple[str, int], ...] = ()

    @property
    def environment_names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.environment)

    def line_of(self, key: str) -> int | None:
        """Line of ``key`` in this service, or the service's own line."""
        return dict(self.field_lines).get(key, self.line)


@dataclass(frozen=True)
class ComposeFile:
    path: str
    services: tuple[ComposeService, ...]
    schema_errors: tuple[str, ...]  # "services.agent.privileged (line 7): ..." ; empty: valid

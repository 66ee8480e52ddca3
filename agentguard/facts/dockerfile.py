"""Dockerfile facts: stages, users, working directories, ENV/ARG, COPY/ADD and RUN lines.

Filled by :func:`agentguard.inspect.project.dockerfile_facts.build_facts`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass(frozen=True)
class EnvSetting:
    """One ``ENV``/``ARG`` setting. ``value`` None: an ARG without a default."""

    name: str
    value: str | None = field(repr=False)  # may be a secret: never rendered
    line: int
    instruction: str  # "ENV" | "ARG"


@dataclass(frozen=True)
class CopyStep:
    instruction: str  # "COPY" | "ADD"
    sources: tuple[str, ...]
    destination: str  # as written
    destination_abs: str  # resolved against the working directory at that point
    from_stage: str | None  # --from=...
    line: int
    checksum: str | None = None  # ADD --checksum=sha256:...: the download is verified


@dataclass(frozen=True)
class RunStep:
    script: str  # the shell text (heredoc bodies included), or the JSON argv joined
    line: int
    env: tuple[EnvSetting, ...]  # ENV/ARG in force at this point of the stage


@dataclass(frozen=True)
class StartStep:
    """A ``CMD`` or ``ENTRYPOINT``: what the container starts. ``argv``: the exec form's
    words, or the shell form's text as one word (``/bin/sh -c`` runs it)."""

    instruction: str  # "CMD" | "ENTRYPOINT"
    argv: tuple[str, ...]
    shell_form: bool
    line: int


@dataclass(frozen=True)
class Stage:
    index: int
    base: str  # "python:3.12-slim", "scratch", another stage's name
    name: str | None  # AS name
    line: int
    user: str | None  # last USER in this stage; None: no USER (inherited from the base)
    user_line: int | None
    workdir: str | None  # resolved WORKDIR; None: none in this stage (inherited)
    workdir_line: int | None
    env: tuple[EnvSetting, ...]
    copies: tuple[CopyStep, ...]
    runs: tuple[RunStep, ...]
    cmd: StartStep | None = None  # the stage's last CMD (None: none in this stage)
    entrypoint: StartStep | None = None  # its last ENTRYPOINT


@dataclass(frozen=True)
class DockerfileFacts:
    path: str
    parser: str  # "buildkit" (the dockerfile package) | "fallback"
    stages: tuple[Stage, ...]
    global_args: tuple[EnvSetting, ...]  # ARG before the first FROM

    @property
    def final(self) -> Stage | None:
        return self.stages[-1] if self.stages else None

    def stage_named(self, name: str) -> Stage | None:
        for s in self.stages:
            if s.name is not None and s.name.lower() == name.lower():
                return s
        return None

    def effective_user(self, stage: Stage) -> tuple[str | None, int | None]:
        """USER in force in ``stage``, following bases that are earlier stages."""
        return self._inherited(stage, lambda s: (s.user, s.user_line))

    def effective_workdir(self, stage: Stage) -> tuple[str | None, int | None]:
        """WORKDIR in force in ``stage``, following bases that are earlier stages."""
        return self._inherited(stage, lambda s: (s.workdir, s.workdir_line))

    def effective_start(self, stage: Stage) -> tuple[StartStep | None, StartStep | None]:
        """(ENTRYPOINT, CMD) in force in ``stage``, following bases that are earlier stages
        (an ENTRYPOINT set in a stage drops the CMD it inherits, as Docker does). None:
        not set in this file (the base image decides)."""
        seen: set[int] = set()
        current: Stage | None = stage
        cmd: StartStep | None = None
        while current is not None and current.index not in seen:
            seen.add(current.index)
            cmd = cmd or current.cmd
            if current.entrypoint is not None:
                return current.entrypoint, cmd  # a CMD of an earlier stage is dropped
            current = self.stage_named(current.base)
        return None, cmd

    def _inherited(
        self, stage: Stage, own: Callable[[Stage], tuple[str | None, int | None]]
    ) -> tuple[str | None, int | None]:
        seen: set[int] = set()
        current: Stage | None = stage
        while current is not None and current.index not in seen:
            seen.add(current.index)
            value, line = own(current)
            if value is not None:
                return value, line
            current = self.stage_named(current.base)
        return None, None

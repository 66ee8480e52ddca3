"""Facts about a project folder: what the walk saw, ``.dockerignore`` files, and the
container and build files joined across files (what the build-file rules read)."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # (annotations only: the walk reads TreeFacts without the build-file records)
    from agentguard.facts.agent_services import AgentService
    from agentguard.facts.compose import ComposeFile
    from agentguard.facts.devcontainer import DevcontainerFacts
    from agentguard.facts.dockerfile import DockerfileFacts
    from agentguard.facts.installs import (
        InstallCommand,
        RequirementDecl,
        RequirementsFile,
        ToolInstall,
    )
    from agentguard.globmatch import Glob

KEEP_OUT_DIRS = {"docs": "docs", "plans": "plans", ".claude": "agent settings"}


ENV_TEMPLATE = "env-template"  # a category of its own: never reported, it locates a .env


@dataclass(frozen=True)
class TreeFacts:
    """What the walk saw that a whole-folder COPY would take (AG212): files and folders by
    category (``.env.example`` and friends as :data:`ENV_TEMPLATE`), and the folders whose
    .gitignore lists .env. A folder with a template below a .gitignore that lists .env is
    where users create the real one: the checkout does not hold it, a local build copies it."""

    keep_out: tuple[tuple[str, str], ...] = ()
    env_expected: tuple[str, ...] = ()  # folders ("" = the root)


@dataclass(frozen=True)
class IgnorePattern:
    text: str
    exclude: bool  # False for "!pattern"
    line: int
    regex: Glob  # matched in linear time whatever the pattern


@dataclass(frozen=True)
class DockerIgnore:
    path: str
    patterns: tuple[IgnorePattern, ...]
    readable: bool = True  # False: the file exists but could not be read

    def excluded(self, rel: str) -> bool:
        """True when ``rel`` (relative to the context) is kept out of the build context."""
        rel = posixpath.normpath(rel).lstrip("/")
        parts = rel.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        result = False
        for pat in self.patterns:
            if any(pat.regex.match(c) for c in candidates):
                result = pat.exclude
        return result


@dataclass(frozen=True)
class BuildFileFacts:
    """The container and build files of one project, joined across files: what the
    engine runs the build-file rules over (AG120/121/130, AG202-204, AG212, AG4xx)."""

    # each Dockerfile with the build contexts it is used with and their .dockerignore
    dockerfiles: tuple[tuple[DockerfileFacts, tuple[tuple[str, DockerIgnore | None], ...]], ...]
    # each compose file with its services' working directories (and where they came from)
    composes: tuple[tuple[ComposeFile, Mapping[str, tuple[str | None, str]]], ...]
    devcontainers: tuple[DevcontainerFacts, ...]
    # each install command with the requirements files its `-r` names may be
    installs: tuple[tuple[InstallCommand, Mapping[str, list[RequirementsFile]]], ...]
    decls: tuple[RequirementDecl, ...]
    tool_installs: tuple[ToolInstall, ...]
    tree: TreeFacts | None  # None: files from an image (AG212 probes typical names)
    # folder -> (lock file names, {package: locked versions}) of uv.lock/poetry.lock/pylock.toml
    locked: Mapping[str, tuple[str, dict[str, list[str]]]] = field(default_factory=dict)
    # containers that start an agent app (drawn by the map only; no rule reads them)
    agent_services: tuple[AgentService, ...] = ()

"""A file of a project folder (or collected from an image), as the project readers are
handed it: a record of its own, so that a scan of a folder (the lock's scan of the MCP
servers a project launches) does not build the image and container records of
:mod:`agentguard.facts.image`, which re-exports it."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ProjectFile:
    """A file of a project folder (or collected from an image) handed to the agent-config rules."""

    path: str  # relative to the project root (or absolute inside an image)
    data: bytes
    origin: str = "project"  # "project" or "image:<layer digest>"
    readable: bool = True  # False: it exists but was not read (its source says why)
    kind: str | None = None  # what to read it as when named (else decided from its path)

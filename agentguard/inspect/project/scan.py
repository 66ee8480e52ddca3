"""Ties the walk, the parsers and the rules together (filled in as the parsers land)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import Source
from agentguard.inspect.facts import ProjectFile

if TYPE_CHECKING:
    from agentguard.inspect.project import ProjectResult


def scan_path(path: Path) -> ProjectResult:
    from agentguard.inspect.project import ProjectResult

    return ProjectResult(
        findings=(),
        sources=(Source.skipped("project", str(path), "agent-configuration scan not built yet"),),
        facts={},
    )


def scan_files(files: Sequence[ProjectFile], *, workdir: str | None) -> ProjectResult:
    from agentguard.inspect.project import ProjectResult

    return ProjectResult(
        findings=(),
        sources=(
            Source.skipped("project", workdir or "/", "agent-configuration scan not built yet"),
        ),
        facts={},
    )

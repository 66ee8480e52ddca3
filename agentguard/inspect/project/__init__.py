"""Agent configuration in a project folder (or in files collected from an image).

Entry points used by the ``inspect`` command and the image inspector:

* :func:`inspect_project` -- a folder (walked) or a single file;
* :func:`inspect_files` -- files already collected (from an image), with the image's workdir.

Both return a :class:`ProjectResult`: findings, the sources read (ok / failed / skipped)
and facts for JSON readers.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import Finding, JSONValue, Source
from agentguard.inspect.facts import ProjectFile

if TYPE_CHECKING:
    from agentguard.inspect.project.model import AgentConfig


@dataclass(frozen=True)
class ProjectResult:
    findings: tuple[Finding, ...]
    sources: tuple[Source, ...]
    facts: dict[str, JSONValue]


def inspect_project(
    path: Path,
    *,
    file_kind: str | None = None,
    exclude: Sequence[str] = (),
    beside: Callable[[], None] | None = None,
    use_cache: bool = False,
    cache_dir: Path | None = None,
) -> ProjectResult:
    """Walk a project folder (or read one file) and run the agent-configuration rules.

    ``file_kind``: what a named file is (``--kind``); ``exclude``: globs not read;
    ``beside``: other work of the run, done while forked children read a large folder
    (see :func:`agentguard.inspect.project.scan.scan_path`; not called for a file);
    ``use_cache``, ``cache_dir``: the content cache of a folder (:mod:`.cache`)."""
    from agentguard.inspect.project.scan import scan_path

    return scan_path(
        path,
        file_kind=file_kind,
        exclude=exclude,
        beside=beside,
        use_cache=use_cache,
        cache_dir=cache_dir,
    )


def inspect_files(
    files: Sequence[ProjectFile],
    *,
    workdir: str | None,
    configs: Sequence[AgentConfig] = (),
) -> ProjectResult:
    """Run the agent-configuration rules over files collected from an image (and agent
    configurations read from its config, such as a `claude` entrypoint)."""
    from agentguard.inspect.project.scan import scan_files

    return scan_files(files, workdir=workdir, configs=configs)


__all__ = ["ProjectFile", "ProjectResult", "inspect_files", "inspect_project"]

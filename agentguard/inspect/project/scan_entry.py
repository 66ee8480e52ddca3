"""The project scan's two entry points: a path (a folder walked, or one named file) and
files already collected (from an image). Each reads (:mod:`.scan`, :mod:`.named`) and then
puts the result together (:mod:`.results`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.facts.agents import AgentConfig
from agentguard.facts.image import ProjectFile
from agentguard.inspect.project.files import FileOutcome
from agentguard.inspect.project.scan import collect_files, collect_folder

if TYPE_CHECKING:
    from agentguard.inspect.project import ProjectResult


def scan_path(
    path: Path,
    *,
    file_kind: str | None = None,
    exclude: Sequence[str] = (),
    beside: Callable[[], None] | None = None,
) -> ProjectResult:
    """A folder (walked, minus ``exclude``) or one file named on the command line.

    A named file is read as what its path or its content says it is (``file_kind``, from
    ``--kind``, decides when given); one that is no kind agentguard reads is a usage
    error listing the kinds, never a skipped source in a run that exits 0.
    """
    if path.is_dir():
        from agentguard.inspect.project.results import finish

        return finish(collect_folder(path, exclude=exclude, beside=beside), workdir=None)
    from agentguard.inspect.project.named import scan_named_file

    return scan_named_file(path, file_kind)


def scan_files(
    files: Sequence[ProjectFile], *, workdir: str | None, configs: Sequence[AgentConfig] = ()
) -> ProjectResult:
    col = collect_files(files, workdir=workdir)
    if configs:  # read from an image config, not from a file
        col.outcomes.append(FileOutcome(configs=list(configs), read=False))
    from agentguard.inspect.project.results import finish

    return finish(col, workdir=workdir)

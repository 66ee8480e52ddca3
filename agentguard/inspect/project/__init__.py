"""Agent configuration in a project folder (or in files collected from an image): the
readers. They gather facts and sources and never judge them; the rules run over them in
:mod:`agentguard.engine.project` (``inspect_project``, ``inspect_files``).
"""

from __future__ import annotations

# (from its own module: a reader of this package need not build the image records)
from agentguard.facts.project_file import ProjectFile as ProjectFile

__all__ = ["ProjectFile"]

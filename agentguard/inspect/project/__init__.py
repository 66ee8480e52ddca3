"""Agent configuration in a project folder (or in files collected from an image): the
readers. They gather facts and sources and never judge them; the rules run over them in
:mod:`agentguard.engine.project` (``inspect_project``, ``inspect_files``).
"""

from __future__ import annotations

from agentguard.facts.image import ProjectFile as ProjectFile

__all__ = ["ProjectFile"]

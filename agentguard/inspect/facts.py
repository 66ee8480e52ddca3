"""Moved to :mod:`agentguard.facts.image`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.image import ContainerFacts as ContainerFacts
from agentguard.facts.image import Facts as Facts
from agentguard.facts.image import FileContent as FileContent
from agentguard.facts.image import FileEntry as FileEntry
from agentguard.facts.image import HistoryEntry as HistoryEntry
from agentguard.facts.image import ImageConfig as ImageConfig
from agentguard.facts.image import ImageFacts as ImageFacts
from agentguard.facts.image import InstalledDist as InstalledDist
from agentguard.facts.image import LayerInfo as LayerInfo
from agentguard.facts.image import MountFact as MountFact
from agentguard.facts.image import ProjectFile as ProjectFile

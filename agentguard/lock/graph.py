"""Moved to :mod:`agentguard.facts.graph`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.graph import PROJECT as PROJECT
from agentguard.facts.graph import DependencyEdge as DependencyEdge
from agentguard.facts.graph import LockedPackage as LockedPackage
from agentguard.facts.graph import LockGraph as LockGraph
from agentguard.facts.graph import MajorGroups as MajorGroups
from agentguard.facts.graph import ReleasedVersions as ReleasedVersions
from agentguard.facts.graph import UpstreamBound as UpstreamBound
from agentguard.facts.graph import _major_order as _major_order
from agentguard.facts.graph import major_floor as major_floor
from agentguard.facts.graph import major_groups as major_groups
from agentguard.facts.graph import major_key as major_key
from agentguard.facts.graph import majors_admitted as majors_admitted
from agentguard.facts.graph import next_major_floor as next_major_floor
from agentguard.facts.graph import released_major_keys as released_major_keys
from agentguard.facts.graph import unbounded_above as unbounded_above

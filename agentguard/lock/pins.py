"""Moved to :mod:`agentguard.facts.pins`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.pins import LockedPackage as LockedPackage
from agentguard.facts.pins import pins_by_name as pins_by_name

"""Moved to :mod:`agentguard.facts.environments`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.environments import HIGHEST_MINOR as HIGHEST_MINOR
from agentguard.facts.environments import LOWEST_MINOR as LOWEST_MINOR
from agentguard.facts.environments import PLATFORMS as PLATFORMS
from agentguard.facts.environments import Environment as Environment
from agentguard.facts.environments import EnvironmentTable as EnvironmentTable
from agentguard.facts.environments import both as both
from agentguard.facts.environments import marker_names as marker_names
from agentguard.facts.environments import python_points as python_points
from agentguard.facts.environments import quoted_for_toml as quoted_for_toml

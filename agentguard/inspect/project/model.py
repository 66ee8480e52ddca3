"""Moved to :mod:`agentguard.facts.values` and :mod:`agentguard.facts.agents`; re-exported
for old imports."""

from __future__ import annotations

from agentguard.facts.agents import CAN_DENY as CAN_DENY
from agentguard.facts.agents import NEVER_DENIES as NEVER_DENIES
from agentguard.facts.agents import UNKNOWN_GATE as UNKNOWN_GATE
from agentguard.facts.agents import AgentConfig as AgentConfig
from agentguard.facts.agents import AgentDefinition as AgentDefinition
from agentguard.facts.agents import ClaudeSettings as ClaudeSettings
from agentguard.facts.agents import ContainerHarness as ContainerHarness
from agentguard.facts.agents import FallbackSite as FallbackSite
from agentguard.facts.agents import GateVerdict as GateVerdict
from agentguard.facts.agents import McpServer as McpServer
from agentguard.facts.agents import Option as Option
from agentguard.facts.agents import PathBuild as PathBuild
from agentguard.facts.agents import ProjectFacts as ProjectFacts
from agentguard.facts.agents import ToolGrant as ToolGrant
from agentguard.facts.values import REDACTED as REDACTED
from agentguard.facts.values import OneOf as OneOf
from agentguard.facts.values import PathSym as PathSym
from agentguard.facts.values import Unknown as Unknown
from agentguard.facts.values import alternatives as alternatives
from agentguard.facts.values import describe as describe
from agentguard.facts.values import redact_text as redact_text
from agentguard.facts.values import to_json as to_json

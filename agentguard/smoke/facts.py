"""Moved to :mod:`agentguard.facts.smoke`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.smoke import FAILED as FAILED
from agentguard.facts.smoke import NEEDS_CREDENTIALS as NEEDS_CREDENTIALS
from agentguard.facts.smoke import NOT_IN_REGISTRY as NOT_IN_REGISTRY
from agentguard.facts.smoke import OK as OK
from agentguard.facts.smoke import Crash as Crash
from agentguard.facts.smoke import Crossing as Crossing
from agentguard.facts.smoke import Install as Install
from agentguard.facts.smoke import Probe as Probe
from agentguard.facts.smoke import SmokeFacts as SmokeFacts

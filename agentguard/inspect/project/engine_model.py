"""Moved to :mod:`agentguard.facts.agents`, :mod:`agentguard.facts.workflows` and
:mod:`agentguard.facts.k8s`; re-exported for old imports."""

from __future__ import annotations

from agentguard.facts.agents import CODEX as CODEX
from agentguard.facts.agents import GEMINI as GEMINI
from agentguard.facts.agents import OPENHANDS as OPENHANDS
from agentguard.facts.agents import EnginePolicy as EnginePolicy
from agentguard.facts.k8s import K8sContainer as K8sContainer
from agentguard.facts.k8s import K8sMount as K8sMount
from agentguard.facts.k8s import K8sVolume as K8sVolume
from agentguard.facts.workflows import ActionStep as ActionStep

"""Containers that run an agent app as what they start: a compose service, or the image
of a Dockerfile no service builds, a container of a Kubernetes manifest (facts for the map
only; no rule reads them).

Filled by :func:`agentguard.inspect.project.agent_services.agent_services`. How one is
recognised, and with what confidence, is written on each record: its own start command
(compose ``command``/``entrypoint``) starting an agent engine is high; the ``CMD``/
``ENTRYPOINT`` of the Dockerfile it builds, or a published image of an agent app, is
medium; an image whose name alone is an agent's (``openhands:dev``) is low. A container
none of these says anything about is not an agent service: unknown, not drawn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from agentguard.findings import Confidence

if TYPE_CHECKING:  # (annotations only)
    from agentguard.facts.capabilities import Evidence
    from agentguard.facts.k8s import K8sContainer


@dataclass(frozen=True)
class AgentService:
    """One container that runs an agent app.

    ``compose_path``/``service``: the compose service (None: the image of ``dockerfile``,
    which no compose service builds). ``evidence``: each thing that says so (the start
    command, the Dockerfile's CMD/ENTRYPOINT, the image's name), the strongest first.
    ``how``: the same, in words."""

    engine: str  # "OpenHands", "Claude Code", "Codex CLI", "Gemini CLI", "aider"
    compose_path: str | None
    service: str | None
    dockerfile: str | None  # the Dockerfile it builds (None: none read)
    image: str | None  # the image it names (None: not named)
    line: int | None  # the service's line, or the CMD/ENTRYPOINT's
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    how: str
    command: str | None = None  # what it starts, as read (redacted), when known
    # a container of a Kubernetes manifest (``compose_path``/``service`` None; ``dockerfile``
    # the Dockerfile that builds its image here, when one does)
    kubernetes: K8sContainer | None = None

"""Facts about agents in CI workflows: agent actions (``uses:``) and agents started by ``run:``.

Frozen records produced by :mod:`agentguard.inspect.project.workflows` and
:mod:`agentguard.inspect.project.workflow_runs`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (annotations only)
    from agentguard.facts.installs import InstallCommand, RequirementsFile, ToolInstall


@dataclass(frozen=True)
class ActionStep:
    """A workflow step that runs an agent action (`uses: owner/action@ref`)."""

    action: str  # "openai/codex-action", "anthropics/claude-code-action", ...
    ref: str  # as written after "@" ("" when missing)
    path: str
    line: int
    job: str
    inputs: tuple[tuple[str, Any, int], ...] = ()  # (name, value, line)
    triggers: tuple[str, ...] = ()  # the workflow's `on:` events

    def input(self, name: str) -> tuple[Any, int] | None:
        for key, value, line in self.inputs:
            if key == name:
                return value, line
        return None


@dataclass(frozen=True)
class AgentRunStep:
    """A ``run:`` step that starts an agent, with its job's installs and triggers."""

    engine: str
    command: str  # the line that starts it, redacted
    path: str
    line: int
    job: str
    triggers: tuple[str, ...]  # the workflow's `on:` events
    open_events: tuple[str, ...]  # of those, the ones anyone can cause and no `if:` checks
    installs: tuple[InstallCommand, ...] = ()  # pip/uv installs of the job, phase "ci"
    # requirement files the job writes itself (`echo "..." > file`), by the name it installs
    written: tuple[tuple[str, RequirementsFile], ...] = ()
    # npm -g / npx of an agent CLI, `curl | sh` in the same steps (a composite action's)
    tool_installs: tuple[ToolInstall, ...] = ()

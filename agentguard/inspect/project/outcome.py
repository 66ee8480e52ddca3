"""What reading one project file produced (:class:`FileOutcome`), and its failed source."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.findings import Source

# (annotations only: a scan imports the modules of the records it builds, where it reads
# a file that holds them; the content cache imports them to decode an entry: see
# agentguard.inspect.project.cache._LAZY_RECORDS)
if TYPE_CHECKING:
    from agentguard.facts.agents import (
        AgentConfig,
        AgentDefinition,
        ClaudeSettings,
        ContainerHarness,
        CrewClass,
        EnginePolicy,
        FallbackSite,
        McpServer,
        ToolDecoration,
        ToolGrant,
    )
    from agentguard.facts.k8s import K8sContainer
    from agentguard.facts.project_file import ProjectFile
    from agentguard.facts.workflows import ActionStep, AgentRunStep
    from agentguard.inspect.project.composite import CompositeAction, LocalActionUse


@dataclass
class FileOutcome:
    configs: list[AgentConfig] = field(default_factory=list)
    grants: list[ToolGrant] = field(default_factory=list)
    harnesses: list[ContainerHarness] = field(default_factory=list)
    mcp_servers: list[McpServer] = field(default_factory=list)
    fallbacks: list[FallbackSite] = field(default_factory=list)
    definitions: list[AgentDefinition] = field(default_factory=list)  # drawn by the map only
    crew_classes: list[CrewClass] = field(default_factory=list)  # crewAI's @CrewBase classes
    # tools decorated onto an agent imported from another module (joined after the walk)
    tool_decorations: list[ToolDecoration] = field(default_factory=list)
    definitions_cut: int = 0  # how many it held, when over the cap (the first ones are kept)
    settings: list[ClaudeSettings] = field(default_factory=list)
    engine_policies: list[EnginePolicy] = field(default_factory=list)
    action_steps: list[ActionStep] = field(default_factory=list)
    agent_runs: list[AgentRunStep] = field(default_factory=list)
    k8s_containers: list[K8sContainer] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    parsed: int = 0
    read: bool = True
    container_file: ProjectFile | None = None  # handed on to the container-file scan
    # lines of the claude-code-action steps the YAML reader read (their `uses:` and
    # `claude_args:` lines): the line readers leave them alone; None: it read none
    claude_step_lines: frozenset[int] | None = None
    composites: list[CompositeAction] = field(default_factory=list)  # local action.yml
    local_uses: list[LocalActionUse] = field(default_factory=list)  # `uses: ./...` steps


def failed_source(path: str, reason: str, code: str) -> Source:
    return Source.failed(
        "file",
        path,
        reason,
        error_code=code,
        retryable=False,
        remedy="Fix the file (or exclude it); agentguard could not read what it configures.",
    )


_NEEDLE_READ = frozenset({"python", "script", "ts"})


def not_utf8_source(path: str, kind: str, data: bytes) -> Source | None:
    """The failed source of a file whose text the byte needles cannot read (UTF-16/32:
    see :func:`~agentguard.inspect.project.needles.wide_text`), so that it is never a
    file that "holds nothing"; a skipped one for a binary file under a text file's name
    (a video named ``.ts``); None for anything else. Only the kinds the needles pick
    out (code, scripts, workflows); a container/build file, a settings or MCP file and
    an engine's configuration are left to their readers, which decode them strictly and
    fail them themselves; a shell script is read as
    the shell reads it, NUL bytes dropped (:func:`~.needles.as_shell_reads`)."""
    from agentguard.inspect.project.needles import BINARY, SHELL_EXT, wide_text

    if kind not in _NEEDLE_READ or path.endswith(SHELL_EXT):
        return None
    wide = wide_text(data)
    if wide is None:
        return None
    if wide == BINARY:
        return Source.skipped(
            "file", path, "binary (NUL and control bytes, no text in any encoding): not read"
        )
    return failed_source(
        path, f"not UTF-8 text ({wide}): not read; re-encode it as UTF-8", "not-utf8"
    )

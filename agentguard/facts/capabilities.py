"""The agent capability model: one frozen entry per agent, built after gathering.

Filled by :func:`agentguard.engine.capability_map.build_map` from the project facts
(:mod:`agentguard.facts.agents`, :mod:`agentguard.facts.project`); read by ``agentguard
map``, the ``map`` key of ``inspect``/``check`` JSON, and rules that need the joins.

Every edge holds its :class:`Evidence` (file:line) and a :class:`Confidence`. A value that
could not be determined is :data:`UNKNOWN` (or ``None`` where the field says so), never an
empty tuple or ``False`` standing in for "not known". Where two candidates fit (two
compose services build the Dockerfile that copies the agent), both are kept.
"""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.findings import Confidence

UNKNOWN = "unknown"

# AgentSite.kind
CODE = "code"  # SDK options in Python/TypeScript code
CLI = "cli"  # a `claude`/`codex`/`gemini` command line, or an engine's config file
WORKFLOW_STEP = "workflow-step"  # an agent action (`uses:`) or a `run:` step in CI
IMAGE_PATH = "image-path"  # a file found in an image's layers
FRAMEWORK = "framework"  # tools handed to a model by another framework (LangChain...)
DEFINITION = "definition"  # an agent a framework's constructor defines, no risky tool seen
SERVICE = "service"  # a container whose own start runs an agent app (facts.agent_services)

# ToolAccess.category of a DEFINITION: the tools it is handed, as written (state UNKNOWN)
DECLARED = "declared"
# ToolAccess.category of one function a DEFINITION is handed as a tool: ``tools`` its name,
# each evidence after the first a call its body makes ("shell: subprocess.run"); state
# LIVE when such a call is seen, UNKNOWN when none is (its helpers are not read)
FUNCTION = "function"

# Runner.kind
COMPOSE_SERVICE = "compose-service"
DOCKERFILE = "dockerfile"  # the image built from this Dockerfile
IMAGE = "image"
WORKFLOW_JOB = "workflow-job"
KUBERNETES = "kubernetes"
PROCESS = "process"  # no container joined: the process that runs the code

# Workdir.holds_kind
PROJECT = "project"  # the project folder itself (a checkout, `cwd="."`)
HOST_FOLDER = "host-folder"  # a host folder mounted there
IMAGE_CONTENT = "image-content"  # what the image put there (COPY)
EMPTY = "empty"  # nothing known is put there
SUBFOLDER = "subfolder"  # a folder of the project, below its root

# ToolAccess.state
LIVE = "live"
REMOVED = "removed"
MAYBE = "maybe"  # live on some reading of the configuration

# ToolAccess.approval
PRE_APPROVED = "pre-approved"
ASKED = "asked"
BYPASS = "bypass"


@dataclass(frozen=True)
class Evidence:
    """Where an edge was read: a file and line (None: the file as a whole), and what
    the line says, in words."""

    path: str
    line: int | None
    note: str = ""


@dataclass(frozen=True)
class AgentSite:
    """Where the agent is defined."""

    kind: str  # CODE | CLI | WORKFLOW_STEP | IMAGE_PATH | FRAMEWORK | DEFINITION | SERVICE
    engine: str  # "claude-agent-sdk", "Codex CLI", "anthropics/claude-code-action", ...
    label: str  # "ClaudeAgentOptions(...)", "workflow step", ...
    evidence: Evidence


@dataclass(frozen=True)
class Runner:
    """One thing that runs the agent: a compose service, the image of a Dockerfile, a
    workflow job (with its triggers and who can cause them), a Kubernetes container."""

    kind: str  # COMPOSE_SERVICE | DOCKERFILE | IMAGE | WORKFLOW_JOB | KUBERNETES | PROCESS
    name: str  # service name, Dockerfile path, image reference, job id
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    how: str = ""  # the join, in words: "builds Dockerfile, which COPYs kontext_bot/"
    image: str | None = None  # the image the service names or builds (None: not named)
    dockerfile: str | None = None  # the Dockerfile it builds (None: none joined)
    triggers: tuple[str, ...] = ()  # workflow events (WORKFLOW_JOB)
    # of those, the ones anyone can cause and no `if:` checks (None: not read)
    open_triggers: tuple[str, ...] | None = None


@dataclass(frozen=True)
class CwdReading:
    """An agent configuration's ``cwd`` as written, and per reading of it whether it names
    the project: True (the checkout or an ancestor of it, or the image's working directory),
    False (another folder), None (not known: the value could not be read). Unset
    (``written`` False) reads as the process's directory, the checkout: ``(True,)``."""

    written: bool
    line: int | None  # the option's line (unset: the configuration's)
    project: tuple[bool | None, ...]  # one per reading of the value
    image_workdir: str | None = None  # the image's working directory it was read against


@dataclass(frozen=True)
class Workdir:
    """The agent's working directory and what is there.

    ``path``: as the agent sees it (None: unknown). ``holds_kind``: PROJECT, HOST_FOLDER,
    IMAGE_CONTENT, SUBFOLDER, EMPTY or UNKNOWN. ``host_source``: the host folder mounted
    there (HOST_FOLDER), as written. ``holds``: what of the project is there (``docs/``,
    ``.env``...), empty when nothing was looked for or found (see ``holds_known``)."""

    path: str | None
    holds_kind: str
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    how: str = ""
    host_source: str | None = None
    holds: tuple[str, ...] = ()
    holds_known: bool = False  # True: the walk saw the folder, so ``holds`` is what is there
    cwd: CwdReading | None = None  # the configuration's ``cwd`` (None: no configuration read)


@dataclass(frozen=True)
class ToolAccess:
    """One category of built-in tools (shell, file, web) or one tool a framework grants.

    ``state``: LIVE, REMOVED, MAYBE or UNKNOWN; ``approval``: PRE_APPROVED, ASKED,
    BYPASS or UNKNOWN (how a call of it is let through)."""

    category: str  # "shell" | "file" | "web" | "mcp" | other as the framework says
    state: str
    tools: tuple[str, ...]  # the tool names of that category in that state
    approval: str
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    how: str = ""
    reading: str = ""  # a configuration's built-in tools: how `tools`/`disallowed_tools` read


@dataclass(frozen=True)
class PathAccess:
    """A path the agent can read (and write): a mount, a copied folder, a credentials
    folder. ``writable`` None: unknown."""

    kind: str  # "bind" | "volume" | "tmpfs" | "copy" | "hostPath" | other as written
    source: str | None  # host path or volume name (None: anonymous)
    target: str | None  # where the agent sees it
    writable: bool | None
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    sensitive: str | None = None  # "credentials folder .ssh", "docker socket", ...


@dataclass(frozen=True)
class McpLink:
    """An MCP server the agent loads.

    ``launch``: "in-process" (an SDK server), "stdio", "http", "sse", UNKNOWN;
    ``command``: the redacted argv (stdio); ``pinned`` None when it cannot be told
    (not launched from a package, or the spec could not be read)."""

    name: str
    launch: str
    command: tuple[str, ...]
    pinned: bool | None
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    how: str = ""  # "mcp_servers of this configuration", ".mcp.json in its working directory"
    unpinned_why: str = ""


@dataclass(frozen=True)
class Reach:
    """What the agent can reach beyond its files: the network mode of its container
    (None: unknown; "default": compose's bridge network), web tools live, MCP servers."""

    network_mode: str | None
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    web: str  # LIVE | REMOVED | MAYBE | UNKNOWN (from the web tools)


@dataclass(frozen=True)
class SecretRef:
    """A secret the agent's process gets, by name (never the value)."""

    name: str
    via: str  # "compose environment", "workflow input", "MCP server env", ...
    evidence: tuple[Evidence, ...]


@dataclass(frozen=True)
class Fallback:
    """Another model that answers when the one asked for fails. ``witnessed``: the
    handler logs or re-raises (None: unknown); ``models`` empty: not read."""

    kind: str  # "fallback_model" | "except-handler" | "cli-flag"
    models: tuple[str, ...]
    witnessed: bool | None
    evidence: tuple[Evidence, ...]
    confidence: Confidence
    detail: str = ""


@dataclass(frozen=True)
class ModelChoice:
    """The model asked for (None: not set, the engine's default; UNKNOWN: not read), and
    the fallbacks."""

    primary: tuple[str, ...]  # literal models on any reading; empty with ``primary_state``
    primary_state: str  # "set" | "default" | UNKNOWN
    evidence: tuple[Evidence, ...]
    fallbacks: tuple[Fallback, ...] = ()


@dataclass(frozen=True)
class Hazard:
    """A capability worth a reviewer's eye, as drawn on the map (the finding, if the
    rules report one, has the fix)."""

    rule_id: str  # the rule that judges it
    text: str
    evidence: Evidence


@dataclass(frozen=True)
class AgentCapability:
    """Everything the map knows about one agent."""

    id: str  # stable within one map: "agent-1", in the order agents are found
    site: AgentSite
    runners: tuple[Runner, ...]  # empty: none joined (``runner_note`` says why)
    runner_note: str
    workdir: Workdir
    tools: tuple[ToolAccess, ...]
    tools_known: bool  # False: the tools could not be read (an engine agentguard only names)
    paths: tuple[PathAccess, ...]
    reach: Reach
    mcp: tuple[McpLink, ...]
    secrets: tuple[SecretRef, ...]
    model: ModelChoice
    hazards: tuple[Hazard, ...] = ()


@dataclass(frozen=True)
class CapabilityMap:
    """The map of one project (or image): its agents, and what could not be joined."""

    target: str
    agents: tuple[AgentCapability, ...]
    notes: tuple[str, ...] = ()  # joins not made, and why (two candidates, an unread file)
    # where each agent configuration (``ProjectFacts.configs``, by index) is in ``agents``
    by_config: tuple[int, ...] = ()

    def of_config(self, index: int) -> AgentCapability | None:
        """The entry drawn from configuration ``index`` (None: the map has none)."""
        if index >= len(self.by_config):
            return None
        return self.agents[self.by_config[index]]

"""Facts about agent configuration: frozen records produced by the project parsers.

Values are those of :mod:`agentguard.facts.values` (plain, :class:`Unknown`,
:class:`PathSym`, :class:`OneOf`). An option that is absent from
:attr:`AgentConfig.options` was not set (the SDK default).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentguard.facts.values import Unknown, describe, to_json
from agentguard.findings import JSONValue
from agentguard.secret_text import redact_argv

# (annotations only: a run that reads none of these records does not build them)
if TYPE_CHECKING:
    from agentguard.facts.k8s import K8sContainer
    from agentguard.facts.mcp_pins import ServerLock
    from agentguard.facts.workflows import ActionStep, AgentRunStep


@dataclass(frozen=True)
class Option:
    value: Any
    line: int
    expr: str  # as written, shortened


CAN_DENY = "can-deny"  # some path returns a deny, raises, or returns a computed decision
NEVER_DENIES = "never-denies"  # every path allows or decides nothing: a rubber stamp
UNKNOWN_GATE = "unknown"  # defined elsewhere, or built at run time: not read


@dataclass(frozen=True)
class GateVerdict:
    """What a permission callback (``can_use_tool``/``canUseTool``) or a PreToolUse hook
    does with a tool call, read from its code: only one that can deny is a gate.

    ``option``: "can_use_tool", or "PreToolUse[i]" for the i-th matcher of ``hooks``."""

    option: str
    verdict: str  # CAN_DENY | NEVER_DENIES | UNKNOWN_GATE
    reason: str  # "returns PermissionResultDeny (line 12)", "always allows", ...


@dataclass(frozen=True)
class FirewallContainer:
    """The container a wrapper command starts a command line in, as the same file shows it:
    GitHub Agentic Workflows' Agent Workflow Firewall (``awf [flags] -- CMD``). Only what
    the compiled file writes down is here; what it does not show is None, never assumed.

    ``allow_domains``: the network egress allow-list of the config file ``awf`` reads,
    from the JSON the step writes to it (None: not read, ``domains_unread`` says why)."""

    wrapper: str  # "awf"
    line: int  # where the wrapper is invoked
    allow_domains: tuple[str, ...] | None = None
    domains_line: int | None = None  # where the allow-list is written
    domains_unread: str | None = None  # why the allow-list is not known
    workdir: str | None = None  # `--container-workdir` as written
    env_all: bool = False  # `--env-all`: the step's whole environment goes in
    excluded_env: tuple[str, ...] = ()  # `--exclude-env` names
    mounts: tuple[str, ...] = ()  # `--mount` values as written


@dataclass(frozen=True)
class AgentConfig:
    """One configuration of a Claude agent engine: SDK options or a CLI invocation.

    ``options`` uses the Python SDK's names (``tools``, ``allowed_tools``,
    ``disallowed_tools``, ``permission_mode``, ``cwd``, ``add_dirs``, ``setting_sources``,
    ``mcp_servers``, ``fallback_model``, ``sandbox``, ``allow_dangerously_skip_permissions``)
    whatever the source language.
    """

    engine: (
        str  # "claude-agent-sdk", "claude-code-sdk", "claude-agent-sdk (TypeScript)", "claude CLI"
    )
    path: str
    line: int
    label: str  # what was read: "ClaudeAgentOptions(...)", "query() without options", ...
    options: Mapping[str, Option] = field(default_factory=dict)
    ambiguous: bool = False
    ambiguity: str | None = None  # why the tool cannot tell whether this one runs
    origin: str = "project"
    open_ended: str | None = None  # options also set by something not known (``**kwargs``)
    gates: tuple[GateVerdict, ...] = ()  # what its callback and hooks do (read from code)
    # the container a wrapper in the same file starts this command line in (gh-aw's awf)
    confined_by: FirewallContainer | None = None
    # a composite action's agent step as one caller configures it: that caller's step
    # (``uses: ./FOLDER``, its job and its workflow's triggers); the map's runner
    called_from: ActionStep | None = None
    # the other jobs that run the same text (a workflow's YAML alias: `steps: *steps`)
    also_from: tuple[ActionStep, ...] = ()

    def gate(self, option: str) -> GateVerdict | None:
        return next((g for g in self.gates if g.option == option), None)

    def option(self, name: str) -> Option | None:
        """The option as set; unset under an unknown spread reads as :class:`Unknown`."""
        opt = self.options.get(name)
        if opt is None and self.open_ended:
            return Option(
                Unknown(self.open_ended, "may be set by options not known"), self.line, ""
            )
        return opt

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "engine": self.engine,
            "path": self.path,
            "line": self.line,
            "label": self.label,
            "options": {k: to_json(o.value, k) for k, o in sorted(self.options.items())},
            "ambiguous": self.ambiguous,
            "ambiguity": self.ambiguity,
            "open_ended": self.open_ended,
        }


@dataclass(frozen=True)
class ToolGrant:
    """A tool or executor handed to an agent by a framework other than the Claude SDK."""

    framework: str  # "openai-agents", "langchain", "smolagents", "autogen", "crewai"
    tool: str  # "ShellTool", "CodeAgent (local executor)", ...
    category: str  # "shell" | "file" | "web"
    path: str
    line: int
    detail: str  # what it lets the model do
    certain: bool = True  # False: depends on a value that could not be determined
    mitigated: str | None = None  # what confines it (an approval step), in words
    hosted: bool = False  # runs on the provider's side, not in this process or container


MAX_TOOL_DEFS = 50  # tool functions kept per definition (those seen to call something first)


@dataclass(frozen=True)
class ToolDef:
    """A function an agent is handed as a tool: decorated onto it (``@agent.tool``,
    ``@agent.tool_plain``) or named in its tools list (a ``@function_tool``/``@tool``
    function, or a plain one). ``effects``: (shell | file | network, the callee, line) of
    each call its own body is seen to make; empty: none seen there, which says nothing of
    the helpers it calls (unknown, not "none")."""

    name: str
    path: str
    line: int
    via: str  # "@agent.tool", "@agent.tool_plain", "@function_tool", "@tool", "function"
    effects: tuple[tuple[str, str, int], ...] = ()
    # False: the name is bound to something other than a ``def`` (a wrapped function, a
    # class): what it runs is not read (unknown)
    body: bool = True


@dataclass(frozen=True)
class AgentDefinition:
    """An agent a framework's constructor defines (``pydantic_ai.Agent(...)``,
    ``create_react_agent(...)``, ``StateGraph(...).compile()``), read whatever its tools:
    the map draws it; no rule reads it (its risky tools, if any, are :class:`ToolGrant`).

    ``model``: the model as written when a literal (None: not read, or not set).
    ``tools``: each tool as written (text), or None when the list is computed (unknown);
    ``tools_set`` False: the call hands no tools (others may be added elsewhere: unknown).
    ``builtin``: what the class does by itself, in words ("drives a web browser")."""

    framework: str  # "pydantic-ai", "openai-agents", "langgraph", ...
    callee: str  # the qualified name as resolved: "pydantic_ai.Agent"
    label: str  # "Agent(...)", "StateGraph(...).compile()"
    path: str
    line: int
    model: str | None = None
    model_expr: str = ""  # the model argument as written ("" when not given)
    tools: tuple[str, ...] | None = ()
    tools_expr: str = ""  # the tools argument as written ("" when not given)
    tools_set: bool = False
    builtin: str = ""
    tool_defs: tuple[ToolDef, ...] = ()  # the functions read as its tools (see ToolDef)
    tools_cut: int = 0  # tool functions past :data:`MAX_TOOL_DEFS` (not drawn, counted)
    # crewAI: the agents.yaml entry it is built from (`config=self.agents_config["x"]`)
    config_key: str | None = None
    # the module-level names bound to this call on every reading (`agent = Agent(...)`):
    # what another module imports to decorate tools onto it
    bound_to: tuple[str, ...] = ()
    # each tools-list element bound to an import: (the name as written, its qualified
    # origin as imported, ``.tools.search`` for a relative import)
    tool_imports: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ToolDecoration:
    """A function decorated ``@X.tool``/``@X.tool_plain`` where ``X`` is imported from
    another module (``from .agent import agent``): ``owners``, the qualified origins ``X``
    may be (relative ones start with dots); joined to that module's agent definition
    after the files are read (:mod:`agentguard.inspect.project.python_tool_imports`)."""

    path: str
    owners: tuple[str, ...]
    tool: ToolDef


@dataclass(frozen=True)
class CrewClass:
    """A crewAI ``@CrewBase`` class: where its agents' YAML is (``agents_config``, as
    written, relative to its file; crewAI's default ``config/agents.yaml`` when unset;
    None when computed) and its ``@tool`` methods, which a YAML ``tools:`` list names."""

    path: str
    line: int
    name: str
    agents_config: str | None
    tool_methods: tuple[tuple[str, int], ...] = ()  # (method name, line)


@dataclass(frozen=True)
class ContainerHarness:
    """Code that starts a container for scripts of its own package (a benchmark harness:
    agbench's ``run_cmd.py`` copies a task's template folder in and runs its
    ``scenario.py`` there). Only what its file shows, each with its line.

    ``scripts``: (file name, line) of each string literal in the file that runs a Python
    script (``python scenario.py``): the commands it writes for the container, or for
    another way it runs them; the file does not say which literal goes where."""

    path: str
    line: int  # the container start: ``<client>.containers.run(...)``/``.create(...)``
    scripts: tuple[tuple[str, int], ...] = ()
    socket_line: int | None = None  # where it binds the host's Docker socket into it
    host_network_line: int | None = None  # ``network="host"``/``network_mode="host"``


@dataclass(frozen=True)
class McpServer:
    """An MCP server definition: from ``.mcp.json``, ``mcp_servers=``, ``MCPServerStdio``..."""

    name: str
    path: str
    line: int
    declared_in: str  # ".mcp.json", "mcp_servers", "MCPServerStdio(...)", ...
    transport: str  # "stdio" | "http" | "sse" | "sdk" | "unknown"
    command: Any = None  # str | Unknown | None
    args: Any = ()  # tuple of str/Unknown, or Unknown
    image: str | None = None  # docker image named in the args, when there is one
    # literal environment of a stdio server (name, value): values may be secrets, never shown
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)
    # what the project's own files (.npmrc, uv.toml...) set for the launchers' registries:
    # (kind, "FILE:LINE sets `KEY`"), read by agentguard.facts.launch_argv
    registries: tuple[tuple[str, str], ...] = ()
    # image references with a digest that the same file pulls (gh-aw's compiled workflows
    # pull each gateway container by digest, then the gateway runs it by name): (ref, line)
    pulled_digests: tuple[tuple[str, int], ...] = ()

    def safe_argv(self) -> list[str]:
        """command + args with secrets redacted (flag values, known key formats)."""
        args = self.args if isinstance(self.args, tuple) else (self.args,)
        argv = [describe(a) if not isinstance(a, str) else a for a in (self.command, *args)]
        return redact_argv([a for a in argv if a is not None]) or []

    def to_json(self) -> dict[str, JSONValue]:
        return {
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "declared_in": self.declared_in,
            "transport": self.transport,
            **self._argv_json(),
        }

    def _argv_json(self) -> dict[str, JSONValue]:
        if isinstance(self.command, str) and isinstance(self.args, tuple):
            argv = self.safe_argv()  # flag values and key-format strings redacted
            return {"command": argv[0], "args": argv[1:]}
        return {"command": to_json(self.command), "args": to_json(self.args)}


@dataclass(frozen=True)
class PathBuild:
    """One call of a model path (the ``try`` body or an ``except`` handler) that asks for
    a model or sets its tools or system prompt, as the text shows it (AG321)."""

    callee: str  # "ClaudeAgentOptions", "client.messages.create"
    line: int
    model: str | None  # the model asked for, when a literal
    tools_key: str | None  # the keyword that sets the tools; None: not set here
    tools: Any  # tuple of tool names as written | Unknown | None (not set)
    prompt: Any  # str | Unknown | None (not set)


@dataclass(frozen=True)
class FallbackSite:
    """A place where another model (or client) may answer instead of the one asked for."""

    kind: str  # "fallback_model" | "except-handler" | "cli-flag"
    path: str
    line: int
    detail: str
    models: tuple[str, ...] = ()
    witnessed: bool = False  # the handler logs or re-raises
    certain: bool = True
    # the calls that build the primary path (the try body) and the fallback (the handler)
    primary: tuple[PathBuild, ...] = ()
    fallback: tuple[PathBuild, ...] = ()
    # the qualified name of the class or function that takes the fallback as an option
    # (`pydantic_ai.models.fallback.FallbackModel`); "" where no call names one
    callee: str = ""


@dataclass(frozen=True)
class ClaudeSettings:
    """One Claude Code settings file (``.claude/settings.json`` and friends)."""

    path: str
    scope: str  # "project" | "local" | "managed" | "user"
    allow: tuple[str, ...] | None  # None: key absent
    deny: tuple[str, ...] | None
    ask: tuple[str, ...] | None
    default_mode: str | None
    disable_bypass: str | None  # permissions.disableBypassPermissionsMode
    lines: Mapping[str, int] = field(default_factory=dict)  # "permissions.allow" -> line
    env: tuple[tuple[str, str], ...] = field(default=(), repr=False)  # values may be secrets
    sandbox_enabled: Any = None  # `sandbox.enabled` as written (None: not set)
    # (key, value as written, line) of settings that let commands out of the sandbox or
    # skip the bypass-mode warning
    hatches: tuple[tuple[str, str, int | None], ...] = ()

    def line_of(self, key: str) -> int | None:
        return self.lines.get(key)


@dataclass(frozen=True)
class ProjectFacts:
    """Everything the agent-config parsers found in one project (or one image's files)."""

    configs: tuple[AgentConfig, ...] = ()
    grants: tuple[ToolGrant, ...] = ()
    mcp_servers: tuple[McpServer, ...] = ()
    fallbacks: tuple[FallbackSite, ...] = ()
    settings: tuple[ClaudeSettings, ...] = ()
    engine_policies: tuple[EnginePolicy, ...] = ()  # Codex and Gemini CLI policies
    action_steps: tuple[ActionStep, ...] = ()  # agent actions in CI workflows
    agent_runs: tuple[AgentRunStep, ...] = ()  # agents a workflow starts with `run:`
    k8s_containers: tuple[K8sContainer, ...] = ()  # containers of Kubernetes manifests
    workdir: str | None = None  # the image's working directory (inspect_files) or None
    project_markers: tuple[str, ...] = ()  # CLAUDE.md, .claude/settings.json... present
    runs_as_root: bool | None = None  # from the container files (AG401), None unknown
    project_mounted: bool | None = None  # from the container files (AG202/AG201/AG212)
    server_lock: ServerLock | None = None  # the project's mcp.lock.json (None: none read)
    harnesses: tuple[
        ContainerHarness, ...
    ] = ()  # code that runs its package's scripts in a container
    package_roots: tuple[str, ...] = ()  # folders with a pyproject.toml ("" = the root)
    # agents a framework's constructor defines, risky tools or not (drawn by the map only)
    definitions: tuple[AgentDefinition, ...] = ()
    # (file, how many it defines) where only the first of them are kept (the per-file cap)
    definitions_cut: tuple[tuple[str, int], ...] = ()

    def iter_configs(self) -> Iterator[AgentConfig]:
        return iter(self.configs)

    def definitions_of(self, path: str) -> tuple[AgentDefinition, ...]:
        return tuple(d for d in self.definitions if d.path == path)


CODEX = "Codex CLI"


GEMINI = "Gemini CLI"


OPENHANDS = "OpenHands"


@dataclass(frozen=True)
class EnginePolicy:
    """What one configuration of the Codex or Gemini CLI lets the agent do unasked.

    ``sandbox`` and ``approval`` hold the engine's own words (Codex: ``read-only``,
    ``workspace-write``, ``danger-full-access`` / ``untrusted``, ``on-failure``,
    ``on-request``, ``never``; Gemini: ``true``/``false``/a sandbox command / ``default``,
    ``auto_edit``, ``plan``, ``yolo``); None when this configuration does not set them.
    """

    engine: str  # CODEX | GEMINI
    path: str
    line: int
    label: str  # "config.toml", "codex command line", "openai/codex-action inputs", ...
    sandbox: Option | None = None
    approval: Option | None = None
    shell_removed: Option | None = None  # Gemini: tools.exclude / tools.core drop the shell
    shell_preapproved: Option | None = None  # Gemini: tools.allowed lists the whole shell
    yolo_disabled: Option | None = None  # Gemini: security.disableYoloMode / secure mode
    headless: bool = False  # `codex exec` (approval is always "never") or a CI action
    profile: str | None = None  # Codex profile the values come from
    # OpenHands: [sandbox] volumes, (host, container, writable; None: unknown), on `line`
    volumes: tuple[tuple[str, str, bool | None], ...] = ()
    volumes_line: int | None = None

    def to_json(self) -> dict[str, JSONValue]:
        def opt(o: Option | None) -> JSONValue:
            return None if o is None else to_json(o.value)

        return {
            "engine": self.engine,
            "path": self.path,
            "line": self.line,
            "label": self.label,
            "sandbox": opt(self.sandbox),
            "approval": opt(self.approval),
            "profile": self.profile,
        }

"""Facts about agent configuration: frozen records produced by the project parsers.

A value read from code is one of:

* a plain value (``str``, ``int``, ``bool``, ``None``, a ``tuple`` for a list, a ``dict``);
* :class:`Unknown` -- could not be determined statically (a parameter, an environment
  variable, a call); rules treat it as "may be anything", never as safe or empty;
* :class:`PathSym` -- a path known only symbolically (the process's working directory,
  the folder of the source file, its parent...);
* :class:`OneOf` -- depends on a branch: each alternative is kept, none is picked.

An option that is absent from :attr:`AgentConfig.options` was not set (the SDK default).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agentguard.findings import JSONValue
from agentguard.redact import mask_value

if TYPE_CHECKING:
    from agentguard.inspect.project.engine_model import ActionStep, EnginePolicy, K8sContainer
    from agentguard.inspect.project.workflow_runs import AgentRunStep


@dataclass(frozen=True)
class Unknown:
    expr: str  # the source text, shortened
    reason: str  # "function parameter", "environment variable HOME", "call to make()", ...

    def describe(self) -> str:
        return f"unknown ({self.reason}: `{self.expr}`)"


@dataclass(frozen=True)
class PathSym:
    """A path known by what it is, not by its text.

    ``base``: "process-cwd" (``"."``, ``os.getcwd()``, ``process.cwd()``), "source-dir"
    (the folder of the file that holds the code; ``up`` folders above it), "home".
    ``sub``: a relative path joined below it ("" = the folder itself).
    """

    base: str
    up: int = 0
    sub: str = ""

    def describe(self) -> str:
        if self.base == "source-dir":
            text = (
                "the folder of this source file"
                if self.up == 0
                else "the parent of this source file's folder"
                if self.up == 1
                else f"{self.up} folders above this source file's folder"
            )
        else:
            text = {
                "process-cwd": "the process's working directory",
                "source-file": "this source file",
                "home": "the home directory",
            }.get(self.base, self.base)
            if self.up:
                text = f"{self.up} folder(s) above {text}"
        if self.sub:
            text += f", subfolder {self.sub}"
        return text


@dataclass(frozen=True)
class OneOf:
    """The value depends on a branch: every alternative, in source order."""

    alternatives: tuple[Any, ...]


def alternatives(value: Any) -> list[Any]:
    """The possible values (one, or the alternatives of a :class:`OneOf`, flattened)."""
    if isinstance(value, OneOf):
        out: list[Any] = []
        for alt in value.alternatives:
            out.extend(alternatives(alt))
        return out
    return [value]


REDACTED = mask_value()  # the one mask of agentguard.redact


def _secret_text(text: str, key: str | None = None) -> bool:
    from agentguard.rules.secret_values import classify, value_format

    if value_format(text) is not None:
        return True
    return key is not None and classify(key, text) is not None


def to_json(value: Any, key: str | None = None) -> JSONValue:
    """JSON form of a value (unknowns and symbols described in words, secrets redacted:
    a string in a known key format, or under a name that says secret, becomes the mask)."""
    if isinstance(value, str):
        return REDACTED if _secret_text(value, key) else value
    if isinstance(value, Unknown):
        return {"unknown": value.reason, "expr": redact_text(value.expr)}
    if isinstance(value, PathSym):
        return {"path": value.describe()}
    if isinstance(value, OneOf):
        return {"one_of": [to_json(v) for v in value.alternatives]}
    if isinstance(value, tuple | list):
        return [to_json(v, key) for v in value]
    if isinstance(value, dict):
        return {str(k): to_json(v, str(k)) for k, v in value.items()}
    if isinstance(value, int | float | bool) or value is None:
        return value
    return repr(value)


def redact_text(text: str) -> str:
    from agentguard.rules.secret_values import redact_step, value_format

    text = redact_step(text)
    return " ".join(REDACTED if value_format(w.strip("'\",")) else w for w in text.split(" "))


def describe(value: Any) -> str:
    """Short text for messages."""
    if isinstance(value, Unknown):
        return redact_text(value.describe())
    if isinstance(value, PathSym):
        return value.describe()
    if isinstance(value, OneOf):
        return " or ".join(describe(v) for v in value.alternatives)
    if isinstance(value, tuple | list):
        return "[" + ", ".join(describe(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(REDACTED) if _secret_text(value) else repr(value)
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{k!r}: {describe(to_json(v, str(k)))}" for k, v in value.items())
            + "}"
        )
    return str(value)


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

    def safe_argv(self) -> list[str]:
        """command + args with secrets redacted (flag values, known key formats)."""
        from agentguard.inspect.summary import redact_argv

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

    def iter_configs(self) -> Iterator[AgentConfig]:
        return iter(self.configs)

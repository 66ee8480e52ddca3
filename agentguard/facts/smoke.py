"""What a smoke run observed: frozen records the AG6xx rules read (they never do I/O).

A probe is one thing the run tried to start: an import of an agent SDK module, an
in-process MCP server built through the SDK (or FastMCP, or the ``mcp`` server class), or
a stdio MCP server the project launches. Its ``status`` says what happened; a probe that
could not be tried is not here but in the report's sources, as skipped with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from agentguard.findings import JSONValue

if TYPE_CHECKING:  # (annotations only)
    from agentguard.facts.mcp_tools import ToolsCompared, ToolSnapshot

# statuses of a probe
OK = "ok"
FAILED = "failed"  # it raised, exited, hung past its deadline or broke the protocol
NEEDS_CREDENTIALS = "needs-credentials"  # it declares a secret, got none, and did not start
NOT_IN_REGISTRY = "not-in-registry"  # the package it launches is held by no registry


@dataclass(frozen=True)
class Crash:
    """An exception raised in the child, as the child described it."""

    exc_type: str  # "AttributeError"
    message: str
    frame: str | None = None  # "claude_agent_sdk/__init__.py:445" (the package's own frame)
    frame_source: str | None = None  # that line's text
    frame_package: str | None = None  # the distribution that holds the frame
    frame_version: str | None = None
    # for an AttributeError: the object's class, its module's distribution and the name
    owner: str | None = None  # "mcp.server.lowlevel.server.Server"
    owner_package: str | None = None
    owner_version: str | None = None
    attribute: str | None = None

    def to_json(self) -> dict[str, JSONValue]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Probe:
    kind: str  # "import" | "sdk-server" | "fastmcp" | "mcp-server" | "stdio"
    subject: str  # the module, or the server's name
    status: str
    stage: str  # "import" | "construct" | "list-tools" | "start" | "initialize"
    path: str | None = None  # where the project names it (file of the project)
    line: int | None = None
    detail: str = ""  # one line: what happened
    tools: tuple[str, ...] | None = None  # tools listed (None: not listed)
    crash: Crash | None = None
    package: str | None = None  # the distribution probed (claude-agent-sdk, an npm package)
    version: str | None = None
    output: tuple[str, ...] = ()  # the last lines the child or the server wrote (redacted)
    # a stdio server: its tools/list answer (bounded), and the key of the mcp.lock.json
    # entry its launch matches (file, server, kind, package; None: not a registry launch)
    snapshot: ToolSnapshot | None = None
    lock_key: tuple[str, str, str, str] | None = None
    # it did not answer within the time it was given (a stdio server): whose deadline that
    # was decides whether it is the server's failure or a run that ended first
    timed_out: bool = False

    def to_json(self) -> dict[str, JSONValue]:
        out: dict[str, JSONValue] = {
            "kind": self.kind,
            "subject": self.subject,
            "status": self.status,
            "stage": self.stage,
            "path": self.path,
            "line": self.line,
            "detail": self.detail,
            "tools": list(self.tools) if self.tools is not None else None,
            "package": self.package,
            "version": self.version,
        }
        if self.crash is not None:
            out["crash"] = self.crash.to_json()
        if self.snapshot is not None:
            out["tools_snapshot"] = {
                "digest": self.snapshot.digest,
                "count": self.snapshot.count,
                "truncated": list(self.snapshot.truncated),
            }
        return out


@dataclass(frozen=True)
class Crossing:
    """A range of the lock that crosses a major (AG101's evidence), to explain a crash."""

    package: str  # the child: "mcp"
    locked: tuple[str, ...]  # "2.3.0"
    parent: str  # "claude-agent-sdk"
    parent_version: str | None
    majors: tuple[str, ...]
    fix: str  # AG101's fix, as it said it
    snippet: str | None = None


@dataclass(frozen=True)
class Install:
    """The scratch environment: how the lock was installed into it."""

    lock: str  # "requirements.lock", "uv.lock"
    interpreter: str  # "3.11.7"
    status: str  # ok | failed
    seconds: float
    detail: str = ""
    interpreter_note: str | None = None  # the project's floor was not available here, ...
    output: tuple[str, ...] = ()


@dataclass(frozen=True)
class NotStarted:
    """A stdio server the smoke run did not start, and why (its source says it too)."""

    server: str
    path: str
    line: int
    reason: str
    lock_key: tuple[str, str, str, str] | None = None


@dataclass(frozen=True)
class SmokeFacts:
    root: str
    install: Install | None
    probes: tuple[Probe, ...] = ()
    crossings: tuple[Crossing, ...] = ()
    versions: tuple[tuple[str, str], ...] = field(default=())  # (name, version) installed
    # each mcp.lock.json entry holding a tools snapshot, beside its server's live answer
    tools: tuple[ToolsCompared, ...] = ()
    not_started: tuple[NotStarted, ...] = ()

    def version_of(self, name: str) -> str | None:
        from agentguard.facts.names import canonical_name

        want = canonical_name(name)
        return next((v for n, v in self.versions if canonical_name(n) == want), None)

    def to_json(self) -> dict[str, JSONValue]:
        inst = self.install
        return {
            "install": None
            if inst is None
            else {
                "lock": inst.lock,
                "interpreter": inst.interpreter,
                "status": inst.status,
                "seconds": round(inst.seconds, 2),
                "detail": inst.detail,
                "interpreter_note": inst.interpreter_note,
            },
            "probes": [p.to_json() for p in self.probes],
        }

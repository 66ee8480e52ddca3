"""What a smoke run tries, read from the project: the agent SDK modules its code imports,
the in-process MCP servers it builds, and the stdio MCP servers it launches.

Imports and server constructions come from an AST pass over the project's Python files
(read through the project walk, which refuses links out of the project); the stdio
servers are the ones agentguard's own readers find (``.mcp.json``, Claude settings,
``mcp_servers=`` in code). The project's own modules are never imported: an in-process
server is built with a one-tool probe, not with the project's tools (importing the
project's code would run it, and whether a module is free of side effects cannot be told
from its text).
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.findings import Source

# Top-level modules of agent SDKs and MCP libraries whose imports are probed.
AGENT_MODULES = frozenset(
    {
        "claude_agent_sdk",
        "claude_code_sdk",
        "mcp",
        "fastmcp",
        "agents",
        "anthropic",
        "openai",
        "langchain",
        "langchain_core",
        "langchain_anthropic",
        "langchain_openai",
        "langchain_mcp_adapters",
        "langgraph",
        "smolagents",
        "crewai",
        "autogen",
        "autogen_agentchat",
        "autogen_ext",
        "pydantic_ai",
        "llama_index",
        "mcp_agent",
        "camel",
        "google.adk",
    }
)
SDK_SERVER_MODULES = frozenset({"claude_agent_sdk", "claude_code_sdk"})
# (module that defines the class, class) -> probe kind
SERVER_CLASSES = {
    ("mcp.server.fastmcp", "FastMCP"): "fastmcp",
    ("fastmcp", "FastMCP"): "fastmcp",
    ("mcp.server", "Server"): "mcp-server",
    ("mcp.server.lowlevel", "Server"): "mcp-server",
    ("mcp.server.lowlevel.server", "Server"): "mcp-server",
}
MAX_FILE = 2 * 1024 * 1024


@dataclass(frozen=True)
class Target:
    kind: str  # "import" | "sdk-server" | "fastmcp" | "mcp-server"
    module: str
    names: tuple[str, ...]
    path: str
    line: int


@dataclass
class Targets:
    probes: list[Target] = field(default_factory=list)
    servers: list[McpServer] = field(default_factory=list)  # stdio servers launched
    sources: list[Source] = field(default_factory=list)


def _top(module: str) -> str | None:
    if module in AGENT_MODULES:
        return module
    first = module.split(".")[0]
    two = ".".join(module.split(".")[:2])
    return first if first in AGENT_MODULES else two if two in AGENT_MODULES else None


def read_python(rel: str, data: bytes, out: Targets) -> None:
    """The imports of agent modules and the server constructions in one file."""
    if not any(m.split(".")[0].encode() in data for m in AGENT_MODULES):
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            tree = ast.parse(data, filename=rel)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            out.sources.append(
                Source.skipped("file", rel, f"not parsed for the smoke run: {type(exc).__name__}")
            )
            return
    bound: dict[str, tuple[str, str]] = {}  # local name -> (module, name)
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _top(alias.name):
                    out.probes.append(Target("import", alias.name, (), rel, node.lineno))
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            if not _top(node.module):
                continue
            names = tuple(a.name for a in node.names if a.name != "*")
            out.probes.append(Target("import", node.module, names, rel, node.lineno))
            for a in node.names:
                bound[a.asname or a.name] = (node.module, a.name)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        kind, module = _server_call(node.func, bound)
        if kind is not None and module is not None:
            out.probes.append(Target(kind, module, (), rel, node.lineno))


def _server_call(
    func: ast.expr, bound: dict[str, tuple[str, str]]
) -> tuple[str | None, str | None]:
    if isinstance(func, ast.Name) and func.id in bound:
        module, name = bound[func.id]
    elif isinstance(func, ast.Attribute):
        parts: list[str] = [func.attr]
        value = func.value
        while isinstance(value, ast.Attribute):
            parts.append(value.attr)
            value = value.value
        if not isinstance(value, ast.Name):
            return None, None
        parts.append(value.id)
        dotted = ".".join(reversed(parts))
        module, _, name = dotted.rpartition(".")
        if module.split(".")[0] in bound:  # `import mcp.server as s` forms are left out
            return None, None
    else:
        return None, None
    if name == "create_sdk_mcp_server" and module.split(".")[0] in SDK_SERVER_MODULES:
        return "sdk-server", module.split(".")[0]
    kind = SERVER_CLASSES.get((module, name))
    return (kind, module) if kind else (None, None)


def merged(probes: list[Target]) -> list[Target]:
    """One probe per (kind, module): the first place that names it, every name imported."""
    first: dict[tuple[str, str], Target] = {}
    names: dict[tuple[str, str], list[str]] = {}
    for t in sorted(probes, key=lambda t: (t.path, t.line)):
        key = (t.kind, t.module)
        first.setdefault(key, t)
        seen = names.setdefault(key, [])
        seen += [n for n in t.names if n not in seen]
    order = {"import": 0, "sdk-server": 1, "fastmcp": 1, "mcp-server": 1}
    out = [
        Target(k[0], k[1], tuple(names[k]), first[k].path, first[k].line)
        for k in sorted(first, key=lambda k: (order[k[0]], k[1]))
    ]
    return out


def gather(root: Path, exclude: tuple[str, ...] = ()) -> Targets:
    """Walk the project (as the scan does) and read what the smoke run needs."""
    from agentguard import safeio
    from agentguard.inspect.project.files import process_file
    from agentguard.inspect.project.walk import walk

    out = Targets()
    got = walk(str(root), exclude=exclude)
    for cand in got.candidates:
        if cand.outside is not None or cand.kind not in ("python", "mcp", "settings"):
            continue
        try:
            data = safeio.read_candidate(cand.abspath, cand.regular, cap=MAX_FILE)
        except OSError as exc:
            out.sources.append(Source.skipped("file", cand.rel, f"not read: {exc}"))
            continue
        if cand.kind == "python":
            read_python(cand.rel, data, out)
            if b"command" not in data:
                continue
        outcome = process_file(cand.rel, cand.kind, data)
        out.servers += [s for s in outcome.mcp_servers if s.transport == "stdio"]
    out.probes = merged(out.probes)
    return out

"""The functions an agent definition is handed as tools, and what their bodies are seen
to run (facts for the map only; nothing here judges).

Two ways a function becomes one of an agent's tools, both read through the file's scopes:

- a decorator of the agent itself: ``@agent.tool`` / ``@agent.tool_plain`` (pydantic-ai),
  where ``agent`` is bound, on every reading, to the ``Agent(...)`` call of a definition;
- its name in the definition's tools list (``Agent(tools=[get_weather])``): a function
  decorated ``@function_tool`` (openai-agents) or ``@tool`` (smolagents, LangChain,
  crewAI), or a plain function (pydantic-ai takes those).

What a tool runs is read cheaply from its own body: a call of ``subprocess``/
``os.system``/``exec`` (shell), ``open``/``shutil``/``Path.write_text`` (file),
``requests``/``httpx``/``urllib.request`` (network). A body that calls none of them may
still reach one through a helper: that stays unknown.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Sequence

from agentguard.facts.agents import MAX_TOOL_DEFS, ToolDef
from agentguard.inspect.project.python_eval import Evaluator, reaching
from agentguard.inspect.project.python_scope import ModuleIndex, Scope

MAX_TOOLS = MAX_TOOL_DEFS  # tool functions kept per definition
MAX_EFFECTS = 8  # effect calls kept per tool

# decorator qualname -> how the map names it
TOOL_DECORATORS = {
    "agents.function_tool": "@function_tool",
    "agents.tool.function_tool": "@function_tool",
    "agents.decorators.function_tool": "@function_tool",
    "agents.decorators.tool": "@tool",  # (openai-agents' alias of function_tool)
    "smolagents.tool": "@tool",
    "smolagents.tools.tool": "@tool",
    "langchain_core.tools.tool": "@tool",
    "langchain_core.tools.convert.tool": "@tool",
    "langchain.tools.tool": "@tool",
    "langchain.agents.tool": "@tool",
    "crewai.tools.tool": "@tool",
    "crewai.tools.base_tool.tool": "@tool",
}
AGENT_METHODS = frozenset({"tool", "tool_plain"})  # pydantic-ai's Agent decorators

_SHELL = ("subprocess.", "os.system", "os.popen", "os.exec", "os.spawn", "os.posix_spawn",
          "asyncio.create_subprocess_", "pty.spawn", "pexpect.")  # fmt: skip
_FILE = ("shutil.", "os.remove", "os.unlink", "os.rename", "os.replace", "os.makedirs",
         "os.mkdir", "os.rmdir", "os.removedirs", "os.listdir", "os.scandir", "os.walk",
         "glob.", "aiofiles.open", "io.open", "builtins.open", "tempfile.")  # fmt: skip
_NETWORK = ("requests.", "httpx.", "urllib.request.", "urllib3.", "aiohttp.", "socket.",
            "http.client.", "smtplib.", "ftplib.", "websockets.", "webbrowser.")  # fmt: skip
_BUILTINS = {"open": "file", "exec": "shell", "eval": "shell"}
_FILE_METHODS = frozenset(
    {"read_text", "write_text", "read_bytes", "write_bytes", "unlink", "rmdir", "mkdir", "touch"}
)

Def = ast.FunctionDef | ast.AsyncFunctionDef


def function_defs(index: ModuleIndex) -> Iterator[tuple[Def, Scope]]:
    """Every ``def`` of the module and of its functions, with the scope that binds it
    (where its decorators are evaluated); a class body's methods are not among them."""
    for scope in (index.module, *index.function_scopes.values()):
        for bindings in scope.bindings.values():
            for b in bindings:
                if b.node is not None:
                    yield b.node, scope


def decorated_onto(node: Def, scope: Scope) -> list[tuple[ast.Call, str]]:
    """The agent calls a ``@X.tool``/``@X.tool_plain`` decorator of ``node`` names: each
    ``Agent(...)`` call ``X`` is bound to, on every reading (a binding that is not a call:
    none), with the decorator as the map names it."""
    out: list[tuple[ast.Call, str]] = []
    for d in node.decorator_list:
        target = d.func if isinstance(d, ast.Call) else d
        if not (
            isinstance(target, ast.Attribute)
            and target.attr in AGENT_METHODS
            and isinstance(target.value, ast.Name)
        ):
            continue
        owner, bindings = reaching(target.value.id, scope, node.lineno)
        if (
            owner is None
            or not bindings
            or not all(isinstance(b.value, ast.Call) for b in bindings)
        ):
            continue
        via = f"@{target.value.id}.{target.attr}"
        out += [(b.value, via) for b in bindings if isinstance(b.value, ast.Call)]
    return out


def named_tool(elt: ast.expr, scope: Scope) -> list[tuple[Def, Scope]]:
    """The functions a tools list's element names (``get_weather``): each ``def`` it is
    bound to where the list is read, with the scope that binds it; none when any binding
    is something else."""
    if not isinstance(elt, ast.Name):
        return []
    owner, bindings = reaching(elt.id, scope, elt.lineno)
    if owner is None or not bindings or any(b.node is None for b in bindings):
        return []
    return [(b.node, owner) for b in bindings if b.node is not None]


def keep_tools(tools: Sequence[ToolDef], cap: int = MAX_TOOLS) -> tuple[tuple[ToolDef, ...], int]:
    """At most ``cap`` tools, in their order, and how many were left out. Those whose body
    is seen to call something (or is not read) are kept first: fifty harmless tools never
    push a shell tool past the cap."""
    if len(tools) <= cap:
        return tuple(tools), 0
    risky = [i for i, t in enumerate(tools) if t.effects or not t.body]
    plain = [i for i, t in enumerate(tools) if not (t.effects or not t.body)]
    keep = sorted((risky + plain)[:cap])
    return tuple(tools[i] for i in keep), len(tools) - cap


def tool_def(
    path: str, node: Def, via: str | None, bound_in: Scope, index: ModuleIndex, ev: Evaluator
) -> ToolDef:
    """A tool function: its decorator (or how it was found) and what its body runs;
    ``bound_in``: the scope that binds it (where its decorators are read)."""
    if via is None:
        via = "function"
        for d in node.decorator_list:
            target = d.func if isinstance(d, ast.Call) else d
            known = [
                TOOL_DECORATORS[q] for q in ev.qualnames(target, bound_in) if q in TOOL_DECORATORS
            ]
            if known:
                via = known[0]
                break
    return ToolDef(node.name, path, node.lineno, via, _effects(node, index, ev))


def _effects(node: Def, index: ModuleIndex, ev: Evaluator) -> tuple[tuple[str, str, int], ...]:
    scope = index.function_scopes.get(id(node))
    if scope is None:
        return ()
    out: list[tuple[str, str, int]] = []
    for stmt in node.body:
        for sub in ast.walk(stmt):
            if not isinstance(sub, ast.Call):
                continue
            hit = _effect(sub, scope, ev)
            if hit is not None and hit not in out:
                out.append(hit)
                if len(out) >= MAX_EFFECTS:
                    return tuple(out)
    return tuple(out)


def _effect(call: ast.Call, scope: Scope, ev: Evaluator) -> tuple[str, str, int] | None:
    func = call.func
    if isinstance(func, ast.Name) and func.id in _BUILTINS:
        owner, _bindings = reaching(func.id, scope, call.lineno)
        if owner is None:  # (not rebound in the file: the builtin)
            return _BUILTINS[func.id], func.id, call.lineno
        return None
    for q in ev.qualnames(func, scope):
        for category, prefixes in (("shell", _SHELL), ("file", _FILE), ("network", _NETWORK)):
            if any(q == p.rstrip(".") or q.startswith(p) for p in prefixes):
                return category, q, call.lineno
    if isinstance(func, ast.Attribute) and func.attr in _FILE_METHODS:
        return "file", f".{func.attr}()", call.lineno
    return None

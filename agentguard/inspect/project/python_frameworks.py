"""Tools and executors handed to agents by frameworks other than the Claude SDK.

openai-agents (``ShellTool``, ``LocalShellTool``, ``ComputerTool``, ``ApplyPatchTool``,
``WebSearchTool``, ``CodeInterpreterTool``, ``SandboxAgent`` with its default
capabilities), LangChain (``ShellTool``, ``FileManagementToolkit`` without ``root_dir``,
requests tools, ``load_tools``), smolagents (``CodeAgent`` with the local executor),
AutoGen (the local command-line executor, ``use_docker=False``), crewAI (unsafe code
execution). Callees are matched through the file's imports, never by bare name.
"""

from __future__ import annotations

import ast
from dataclasses import replace
from typing import Any

from agentguard.inspect.project.model import ToolGrant, Unknown, alternatives
from agentguard.inspect.project.python_eval import Evaluator
from agentguard.inspect.project.python_import_needles import may_import, spelled_in_code
from agentguard.inspect.project.python_scope import ModuleIndex, Scope, short

_OPENAI = {
    "ShellTool": ("shell", "runs shell commands the model writes"),
    "LocalShellTool": ("shell", "runs shell commands the model writes on this machine"),
    "ComputerTool": ("shell", "lets the model drive a computer (keyboard, mouse, screen)"),
    "CodeInterpreterTool": ("shell", "runs code the model writes (hosted container)"),
    "ApplyPatchTool": ("file", "lets the model rewrite files"),
    "WebSearchTool": ("web", "lets the model search the web"),
}
_LANGCHAIN = {
    "ShellTool": ("shell", "runs shell commands the model writes on this machine"),
    "PythonREPLTool": ("shell", "runs Python the model writes in this process"),
    "PythonAstREPLTool": ("shell", "runs Python the model writes in this process"),
    "RequestsGetTool": ("web", "fetches any URL the model names"),
    "RequestsPostTool": ("web", "sends requests to any URL the model names"),
    "RequestsPutTool": ("web", "sends requests to any URL the model names"),
    "RequestsPatchTool": ("web", "sends requests to any URL the model names"),
    "RequestsDeleteTool": ("web", "sends requests to any URL the model names"),
    "RequestsToolkit": ("web", "fetches and sends requests to any URL the model names"),
}
_LOAD_TOOLS = {
    "terminal": ("shell", "the `terminal` tool runs shell commands"),
    "requests": ("web", "the requests tools fetch any URL"),
    "requests_all": ("web", "the requests tools fetch any URL"),
    "requests_get": ("web", "the requests tools fetch any URL"),
    "requests_post": ("web", "the requests tools send requests to any URL"),
}

# Every name the readers below match as the last part of a callee's qualname or as a
# keyword they read, and the framework module matched by its name alone: a file that holds
# none of them cannot yield a grant, so it need not be parsed for one (the second-stage
# pre-filter; tests/inspect/project/test_prefilter_sound.py holds this list to the readers).
NEEDLES: tuple[bytes, ...] = tuple(
    n.encode()
    for n in sorted(
        {
            *_OPENAI,
            *_LANGCHAIN,
            "SandboxAgent",
            "FileManagementToolkit",
            "load_tools",
            "CodeAgent",
            "LocalCommandLineCodeExecutor",
            "code_execution_config",
            # crewAI's `Agent` grants only with this keyword written out (its
            # CodeInterpreterTool is a needle above): the module's name is not needed
            "allow_code_execution",
        }
    )
)


def may_grant(data: bytes) -> bool:
    """False only when :func:`framework_grants` cannot find a grant in the file: it needs
    a needle and an import of a framework (:func:`_imports_a_framework`)."""
    # (a callee's last name or a keyword, whole and in code: a docstring's `ShellTool(...)`
    # is none, nor `ShellToolSet` or `ResponseComputerToolCall`: the qualname's last name
    # is an import's or an attribute's, written whole)
    return (
        may_import(data, (b"agents", b"smolagents"), prefixes=(b"langchain", b"autogen", b"crewai"))
        and any(n in data for n in NEEDLES)
        and spelled_in_code(data, NEEDLES, whole=True)
    )


def _kw(node: ast.Call, name: str) -> ast.expr | None:
    for kw in node.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _imports_a_framework(roots: set[str]) -> bool:
    return any(
        r in ("agents", "smolagents") or r.startswith(("langchain", "autogen", "crewai"))
        for r in roots
    )


def framework_grants(path: str, index: ModuleIndex, ev: Evaluator) -> list[ToolGrant]:
    if not _imports_a_framework(index.import_roots):
        return []  # every callee matched below resolves to an import of a framework
    out: list[ToolGrant] = []
    for node, scope in index.calls:
        q = ev.qualname(node.func, scope)
        if q is None:
            continue
        top, last = q.split(".")[0], q.split(".")[-1]
        if top == "agents":
            out.extend(_openai(path, node, scope, ev, last))
        elif top.startswith("langchain"):
            out.extend(_langchain(path, node, scope, ev, last))
        elif top == "smolagents" and last == "CodeAgent":
            out.extend(_smolagents(path, node, scope, ev))
        elif top.startswith("autogen"):
            out.extend(_autogen(path, node, scope, ev, last))
        elif top.startswith("crewai"):
            out.extend(_crewai(path, node, scope, ev, last))
    return out


def _grant(
    framework: str,
    tool: str,
    category: str,
    path: str,
    node: ast.AST,
    detail: str,
    certain: bool = True,
) -> ToolGrant:
    return ToolGrant(framework, tool, category, path, getattr(node, "lineno", 0), detail, certain)


# openai-agents tools the provider runs (OpenAI's container or search), not this process
_HOSTED = frozenset({"CodeInterpreterTool", "WebSearchTool"})


def _approval(node: ast.Call, scope: Scope, ev: Evaluator) -> str | None:
    """``needs_approval=True`` (or a function that decides): each call waits for approval."""
    arg = _kw(node, "needs_approval")
    if arg is None:
        return None
    value = ev.eval(arg, scope)
    if value is True:
        return "`needs_approval=True`: each call waits for a human's approval"
    if isinstance(arg, ast.Name | ast.Attribute | ast.Lambda) and not isinstance(value, bool):
        return f"`needs_approval={short(arg, 40)}` decides, call by call, whether to ask"
    return None


def _openai(path: str, node: ast.Call, scope: Scope, ev: Evaluator, last: str) -> list[ToolGrant]:
    if last in _OPENAI:
        category, detail = _OPENAI[last]
        grant = _grant("openai-agents", last, category, path, node, detail)
        if last in _HOSTED:
            return [
                replace(
                    grant,
                    hosted=True,
                    mitigated="a hosted tool: it runs on the "
                    "provider's side, not in this process or its container",
                )
            ]
        return [replace(grant, mitigated=_approval(node, scope, ev))]
    if last != "SandboxAgent":
        return []
    caps = _kw(node, "capabilities")
    if caps is None:
        return [
            _grant(
                "openai-agents",
                "SandboxAgent (default capabilities: Shell)",
                "shell",
                path,
                node,
                "the default capabilities include Shell: commands run in the sandbox "
                "session (UnixLocalSandboxClient adds no confinement on Linux)",
            ),
            _grant(
                "openai-agents",
                "SandboxAgent (default capabilities: Filesystem)",
                "file",
                path,
                node,
                "the default capabilities include Filesystem tools",
            ),
        ]
    value = ev.eval(caps, scope)
    texts = [_text(v) for v in (value if isinstance(value, tuple) else (value,))]
    grants: list[ToolGrant] = []
    certain = not any(
        isinstance(v, Unknown) and "Capabilit" not in v.expr and "(" not in v.expr
        for v in (value if isinstance(value, tuple) else (value,))
    )
    joined = " ".join(texts)
    if "Capabilities.default" in joined or "Shell(" in joined:
        grants.append(
            _grant(
                "openai-agents",
                "SandboxAgent (Shell capability)",
                "shell",
                path,
                node,
                "the Shell capability runs commands in the sandbox session",
            )
        )
    if "Capabilities.default" in joined or "Filesystem(" in joined:
        grants.append(
            _grant(
                "openai-agents",
                "SandboxAgent (Filesystem capability)",
                "file",
                path,
                node,
                "the Filesystem capability reads and edits files",
            )
        )
    if not grants and not certain:
        grants.append(
            _grant(
                "openai-agents",
                "SandboxAgent (capabilities unknown)",
                "shell",
                path,
                node,
                f"capabilities `{short(caps, 60)}` could not be determined",
                certain=False,
            )
        )
    return grants


def _text(value: Any) -> str:
    if isinstance(value, Unknown):
        return value.expr
    return str(value)


def _langchain(
    path: str, node: ast.Call, scope: Scope, ev: Evaluator, last: str
) -> list[ToolGrant]:
    if last in _LANGCHAIN:
        category, detail = _LANGCHAIN[last]
        return [_grant("langchain", last, category, path, node, detail)]
    if last == "FileManagementToolkit":
        root = _kw(node, "root_dir")
        if root is None:
            return [
                _grant(
                    "langchain",
                    "FileManagementToolkit without root_dir",
                    "file",
                    path,
                    node,
                    "reads and writes files anywhere the process can (no root_dir)",
                )
            ]
        return []
    if last == "load_tools" and node.args:
        names = ev.eval(node.args[0], scope)
        grants = []
        items = names if isinstance(names, tuple) else (names,)
        for item in items:
            if isinstance(item, str) and item in _LOAD_TOOLS:
                category, detail = _LOAD_TOOLS[item]
                grants.append(
                    _grant("langchain", f"load_tools({item!r})", category, path, node, detail)
                )
            elif isinstance(item, Unknown):
                grants.append(
                    _grant(
                        "langchain",
                        "load_tools(...)",
                        "shell",
                        path,
                        node,
                        f"tool names `{item.expr}` could not be determined ({item.reason})",
                        certain=False,
                    )
                )
        return grants
    return []


def _smolagents(path: str, node: ast.Call, scope: Scope, ev: Evaluator) -> list[ToolGrant]:
    executor = _kw(node, "executor_type")
    if executor is None:
        return [
            _grant(
                "smolagents",
                "CodeAgent (local executor)",
                "shell",
                path,
                node,
                "runs model-written Python in this process; the import allow-list is not a sandbox",
            )
        ]
    values = alternatives(ev.eval(executor, scope))
    if any(v == "local" for v in values):
        return [
            _grant(
                "smolagents",
                "CodeAgent (executor_type='local')",
                "shell",
                path,
                node,
                "runs model-written Python in this process",
            )
        ]
    if any(isinstance(v, Unknown) for v in values):
        return [
            _grant(
                "smolagents",
                "CodeAgent (executor unknown)",
                "shell",
                path,
                node,
                f"executor_type `{short(executor, 40)}` could not be determined",
                certain=False,
            )
        ]
    return []


def _autogen(path: str, node: ast.Call, scope: Scope, ev: Evaluator, last: str) -> list[ToolGrant]:
    if last == "LocalCommandLineCodeExecutor":
        return [
            _grant(
                "autogen",
                last,
                "shell",
                path,
                node,
                "runs model-written code as local processes, no container",
            )
        ]
    cfg = _kw(node, "code_execution_config")
    if cfg is None:
        return []
    value = ev.eval(cfg, scope)
    if isinstance(value, dict):
        use_docker = value.get("use_docker", True)
        if use_docker is False:
            return [
                _grant(
                    "autogen",
                    f"{last}(code_execution_config use_docker=False)",
                    "shell",
                    path,
                    node,
                    "runs model-written code on this machine",
                )
            ]
        if isinstance(use_docker, Unknown):
            return [
                _grant(
                    "autogen",
                    f"{last}(code_execution_config)",
                    "shell",
                    path,
                    node,
                    "use_docker could not be determined",
                    certain=False,
                )
            ]
    return []


def _crewai(path: str, node: ast.Call, scope: Scope, ev: Evaluator, last: str) -> list[ToolGrant]:
    if last == "CodeInterpreterTool":
        unsafe = _kw(node, "unsafe_mode")
        if unsafe is not None and True in alternatives(ev.eval(unsafe, scope)):
            return [
                _grant(
                    "crewai",
                    "CodeInterpreterTool(unsafe_mode=True)",
                    "shell",
                    path,
                    node,
                    "runs model-written code on this machine, no container",
                )
            ]
        return []
    if last != "Agent":
        return []
    allow = _kw(node, "allow_code_execution")
    if allow is None or True not in alternatives(ev.eval(allow, scope)):
        return []
    mode = _kw(node, "code_execution_mode")
    if mode is None:
        return []
    values = alternatives(ev.eval(mode, scope))
    if "unsafe" in values:
        return [
            _grant(
                "crewai",
                "Agent(code_execution_mode='unsafe')",
                "shell",
                path,
                node,
                "runs model-written code on this machine, no container",
            )
        ]
    if any(isinstance(v, Unknown) for v in values):
        return [
            _grant(
                "crewai",
                "Agent(code_execution_mode=?)",
                "shell",
                path,
                node,
                f"code_execution_mode `{short(mode, 40)}` could not be determined",
                certain=False,
            )
        ]
    return []

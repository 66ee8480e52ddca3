"""Tools handed to the model through an LLM API's own tool types, outside any agent SDK.

A loop that passes Anthropic's client tools (``{"type": "bash_20250124", ...}``,
``text_editor_*``, ``computer_*``) or OpenAI's (``local_shell``, ``computer_use_preview``)
to the model runs whatever the model asks for in the caller's own process: the code around
the call executes the command, edits the file or drives the screen. Server tools that the
provider runs on its side (``code_execution_*``, ``web_search_*``, ``web_fetch_*``) are
read too, marked hosted. Only dict literals handed to the model are read: inside a
``tools=`` argument, or in a list bound to a name whose head word is ``tools`` (``TOOLS =
[...]``, ``tools.append({...})``), in a file that imports the ``anthropic`` or ``openai``
client. A library that maps or converts tool types (an SDK's own request builder, returning
``{"type": "computer_use_preview", ...}``) hands nothing to a model itself.
"""

from __future__ import annotations

import ast
import re

from agentguard.inspect.project.model import ToolGrant
from agentguard.inspect.project.python_fallback import head_word
from agentguard.inspect.project.python_scope import ModuleIndex

# tool type -> (category, what it lets the model do, provider-hosted)
_TYPES: tuple[tuple[re.Pattern[str], str, str, str, bool], ...] = (
    (
        re.compile(r"bash_\d{8}"),
        "anthropic",
        "shell",
        "runs the shell commands the model writes, in this code's process",
        False,
    ),
    (
        re.compile(r"text_editor_\d{8}"),
        "anthropic",
        "file",
        "views and rewrites the files the model names",
        False,
    ),
    (
        re.compile(r"computer_\d{8}"),
        "anthropic",
        "shell",
        "lets the model drive this computer (keyboard, mouse, screen)",
        False,
    ),
    (
        re.compile(r"local_shell"),
        "openai",
        "shell",
        "runs the shell commands the model writes on this machine",
        False,
    ),
    (
        re.compile(r"computer_use(_preview)?"),
        "openai",
        "shell",
        "lets the model drive this computer (keyboard, mouse, screen)",
        False,
    ),
    (
        re.compile(r"code_execution_\d{8}"),
        "anthropic",
        "shell",
        "runs code the model writes in the provider's sandbox",
        True,
    ),
    (
        re.compile(r"web_search_\d{8}|web_fetch_\d{8}"),
        "anthropic",
        "web",
        "lets the model search and fetch the web",
        True,
    ),
)
# what a file must spell for the reader to find anything (the second-stage pre-filter)
NEEDLES: tuple[bytes, ...] = (
    b"bash_",
    b"text_editor_",
    b"computer_",
    b"local_shell",
    b"code_execution_",
    b"web_search_",
    b"web_fetch_",
)


def may_declare(data: bytes) -> bool:
    return any(n in data for n in NEEDLES)


def _tool_type(value: str) -> tuple[str, str, str, bool] | None:
    for pattern, provider, category, detail, hosted in _TYPES:
        if pattern.fullmatch(value):
            return provider, category, detail, hosted
    return None


def _tools_name(node: ast.AST) -> bool:
    name = (
        node.id
        if isinstance(node, ast.Name)
        else node.attr
        if isinstance(node, ast.Attribute)
        else ""
    )
    return head_word(name) in ("tools", "tool")


def _handed_over(tree: ast.AST) -> list[ast.Dict]:
    """Dict literals that reach a model's tool list: in a ``tools=`` argument, or in a value
    bound to (or appended to) a name whose head word is ``tools``."""
    roots: list[ast.AST] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            roots += [kw.value for kw in node.keywords if kw.arg == "tools"]
            func = node.func
            if (
                isinstance(func, ast.Attribute)
                and func.attr in ("append", "extend", "insert")
                and _tools_name(func.value)
            ):
                roots += node.args
        elif isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(_tools_name(t) for t in targets):
                roots.append(node.value)
    seen: dict[int, ast.Dict] = {}
    for root in roots:
        for sub in ast.walk(root):
            if isinstance(sub, ast.Dict):
                seen.setdefault(id(sub), sub)
    return list(seen.values())


def api_tool_grants(path: str, tree: ast.AST, index: ModuleIndex) -> list[ToolGrant]:
    roots = index.import_roots
    if not ({"anthropic", "openai"} & roots):
        return []
    out: list[ToolGrant] = []
    for node in _handed_over(tree):
        for key, value in zip(node.keys, node.values, strict=True):
            if not (isinstance(key, ast.Constant) and key.value == "type"):
                continue
            if not (isinstance(value, ast.Constant) and isinstance(value.value, str)):
                continue
            found = _tool_type(value.value)
            if found is None:
                continue
            provider, category, detail, hosted = found
            if provider not in roots:
                continue  # Anthropic's types in an OpenAI-only file name something else
            out.append(
                ToolGrant(
                    framework=f"{provider} API",
                    tool=value.value,
                    category=category,
                    path=path,
                    line=node.lineno,
                    detail=detail,
                    hosted=hosted,
                    mitigated="a server tool: it runs on the provider's side, not in this "
                    "process or its container"
                    if hosted
                    else None,
                )
            )
    return out

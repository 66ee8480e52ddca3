"""The Claude engine's built-in tools by category, and how a configuration spells its
options: data the capability model and the AG3xx rules share (no judgement here)."""

from __future__ import annotations

from typing import Any

from agentguard.facts.agents import AgentConfig

SHELL_TOOLS = ("Bash", "BashOutput", "KillShell", "KillBash")
FILE_TOOLS = ("Read", "Write", "Edit", "MultiEdit", "Glob", "Grep", "NotebookEdit", "LS")
WEB_TOOLS = ("WebFetch", "WebSearch")
OTHER_TOOLS = ("Task", "TodoWrite")
BUILTIN_TOOLS = SHELL_TOOLS + FILE_TOOLS + WEB_TOOLS + OTHER_TOOLS

# the categories the model draws (ToolAccess.category) and AG301-AG303 judge, in order
TOOL_CATEGORIES: dict[str, tuple[str, ...]] = {
    "shell": SHELL_TOOLS,
    "file": FILE_TOOLS,
    "web": WEB_TOOLS,
}

_TYPESCRIPT = {
    "tools": "tools",
    "allowed_tools": "allowedTools",
    "disallowed_tools": "disallowedTools",
    "permission_mode": "permissionMode",
    "setting_sources": "settingSources",
    "fallback_model": "fallbackModel",
    "can_use_tool": "canUseTool",
}
_CLI = {
    "tools": "--tools",
    "allowed_tools": "--allowedTools",
    "disallowed_tools": "--disallowedTools",
    "permission_mode": "--permission-mode",
    "setting_sources": "--setting-sources",
    "fallback_model": "--fallback-model",
}


def option_syntax(cfg: AgentConfig, name: str) -> str:
    """The option's name as written in this configuration's language."""
    if cfg.engine.endswith("(TypeScript)"):
        return _TYPESCRIPT.get(name, name)
    if cfg.engine == "claude CLI":
        return _CLI.get(name, name)
    return name


def listed_names(value: Any) -> tuple[set[str], bool]:
    """Tool names in a list value (a tuple, or a comma/space separated string), and whether
    the list is complete (no part that could not be read)."""
    if isinstance(value, str):
        return {v for v in value.replace(",", " ").split() if v}, True
    if isinstance(value, tuple):
        names = {v for v in value if isinstance(v, str)}
        return names, not any(not isinstance(v, str) for v in value)
    return set(), False

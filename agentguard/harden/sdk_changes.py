"""The agent-engine change: hardened Claude agent options, per configuration found.

For each Claude agent configuration (Python ``ClaudeAgentOptions``, TypeScript
``query()`` options, a ``claude`` command line) a snippet file is written under
``agent/`` that the inspector reads like any other agent code: built-in tools removed
explicitly, the working directory pointed at the empty one, no project settings, the
default permission mode, strict MCP configuration where MCP config files are present.
Claude Code settings files get a hardened ``.claude/settings.json``.

The tools an agent keeps are the ones its author declared (``tools``, else
``allowed_tools``); with none declared it keeps none. Whether that is right depends on
what the agent must do: every snippet lists the choices instead of guessing.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.facts.builtin_tools import BUILTIN_TOOLS
from agentguard.findings import Finding
from agentguard.harden.escape import comment, docstring
from agentguard.inspect.project.model import ClaudeSettings
from agentguard.rules.agent_tools import CATEGORY_RULES

TOOL_RULES = {rule.id: category for category, (rule, _m) in CATEGORY_RULES.items()}


@dataclass(frozen=True)
class ConfigChange:
    """The hardened replacement of one agent configuration."""

    path: str  # the configuration's file, as the inspector named it
    line: int
    label: str
    engine: str
    snippet_file: str  # under the output folder
    kept: tuple[str, ...]  # built-in tools the author declared and the snippet keeps
    fixes: frozenset[str]  # rule ids this configuration no longer triggers
    choices: tuple[str, ...]


@dataclass
class SdkChanges:
    files: dict[str, str] = field(default_factory=dict)
    configs: list[ConfigChange] = field(default_factory=list)
    settings: dict[str, str] = field(default_factory=dict)  # original path -> written file
    notes: list[str] = field(default_factory=list)


def _strings(value: Any) -> tuple[str, ...] | None:
    """A complete list of strings from an option's JSON form, else None (unknown)."""
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return tuple(value)
    if isinstance(value, str):
        return tuple(v for v in value.replace(",", " ").split() if v)
    return None


def declared_tools(options: Mapping[str, Any]) -> tuple[tuple[str, ...], str]:
    """(built-in tools to keep, where that came from)."""
    for key in ("tools", "allowed_tools"):
        if key in options:
            names = _strings(options[key])
            if names is not None:
                kept = tuple(t for t in BUILTIN_TOOLS if t in names)
                return kept, f"`{key}` declared {', '.join(names) or 'none'}"
            return (), f"`{key}` could not be read, so none is kept"
    return (), "no tools were declared, so none is kept"


def _fixes(engine: str, kept: Sequence[str]) -> frozenset[str]:
    ids = {"AG211", "AG304", "AG305"}
    if engine != "claude CLI":
        ids.add("AG210")  # a command line works wherever it is started: not fixable by flags
    for rule_id, category in TOOL_RULES.items():
        members = CATEGORY_RULES[category][1]
        if not any(t in members for t in kept):
            ids.add(rule_id)
    return frozenset(ids)


def _choices(kept: Sequence[str], why: str, workdir: str) -> tuple[str, ...]:
    out = [
        f"Tools kept: {', '.join(kept) or 'none'} ({why}). Which tools the agent needs "
        "depends on its task; the snippet does not guess:",
        "no built-in tool (an empty tool list): an agent that only talks, or uses its own "
        "MCP tools",
        f"read its inputs (Read, Grep, Glob): they see {workdir}, empty, and what you mount "
        "read-only with --allow-mount; nothing of the project",
        "run commands (Bash): only inside this hardened container (read-only root, no "
        "capabilities, no network unless you chose one)",
    ]
    return tuple(out)


def _stem(path: str) -> str:
    base = posixpath.splitext(posixpath.basename(path))[0] or "agent"
    return "".join(c if c.isalnum() else "_" for c in base)


def _py_list(items: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(i) for i in items) + "]"


def python_snippet(
    cfg: Mapping[str, Any],
    kept: Sequence[str],
    workdir: str,
    strict_mcp: bool,
    choices: Sequence[str],
) -> str:
    disallowed = [t for t in BUILTIN_TOOLS if t not in kept]
    where = f"{cfg['path']}:{cfg['line']} ({cfg['label']}, {cfg['engine']})"
    lines = [
        f'"""agentguard harden: hardened options for {docstring(where)}.',
        "",
        "Replace the options there with these (keep your own prompt, model and MCP servers;",
        "pin each MCP server to a reviewed version).",
        "",
        *(docstring(c) for c in choices[:1]),
        *(f"  - {docstring(c)}" for c in choices[1:]),
        '"""',
        "",
        "from claude_agent_sdk import ClaudeAgentOptions",
        "",
        "HARDENED_OPTIONS = ClaudeAgentOptions(",
        f"    tools={_py_list(kept)},",
        f"    disallowed_tools={_py_list(disallowed)},",
        f'    cwd="{workdir}",',
        "    setting_sources=[],",
        '    permission_mode="default",',
    ]
    if strict_mcp:
        lines.append(
            '    extra_args={"strict-mcp-config": None},  # MCP servers only from mcp_servers='
        )
    lines.append(")")
    return "\n".join(lines) + "\n"


def ts_snippet(
    cfg: Mapping[str, Any],
    kept: Sequence[str],
    workdir: str,
    strict_mcp: bool,
    choices: Sequence[str],
) -> str:
    disallowed = [t for t in BUILTIN_TOOLS if t not in kept]
    where = f"{cfg['path']}:{cfg['line']} ({cfg['label']}, {cfg['engine']})"
    lines = [
        f"// agentguard harden: hardened options for {where}.",
        "// Replace the options there with these (keep your prompt, model and MCP servers).",
        *(f"// {c}" if i == 0 else f"//   - {c}" for i, c in enumerate(choices)),
        'import { query, type Options } from "@anthropic-ai/claude-agent-sdk";',
        "",
        "export const hardenedOptions: Options = {",
        f"  tools: {json.dumps(list(kept))},",
        f"  disallowedTools: {json.dumps(disallowed)},",
        f'  cwd: "{workdir}",',
        "  settingSources: [],",
        '  permissionMode: "default",',
    ]
    if strict_mcp:
        lines.append("  strictMcpConfig: true,")
    lines += [
        "};",
        "",
        "export const run = (prompt: string) => query({ prompt, options: hardenedOptions });",
    ]
    return "\n".join(lines) + "\n"


def cli_snippet(
    cfg: Mapping[str, Any],
    kept: Sequence[str],
    workdir: str,
    strict_mcp: bool,
    choices: Sequence[str],
) -> str:
    disallowed = [t for t in BUILTIN_TOOLS if t not in kept]
    where = f"{cfg['path']}:{cfg['line']} ({cfg['engine']})"
    flags = [
        f'--tools "{" ".join(kept)}"',
        f'--disallowedTools "{" ".join(disallowed)}"',
        "--setting-sources user",
        "--permission-mode default",
    ]
    if strict_mcp:
        flags.append("--strict-mcp-config")
    lines = [
        "#!/bin/sh",
        f"# agentguard harden: hardened flags for {comment(where)}.",
        f"# Start it from the empty working directory {workdir}: a command line works in the",
        "# directory it is started from (keep your prompt, model and --mcp-config).",
        *(f"# {comment(c)}" if i == 0 else f"#   - {comment(c)}" for i, c in enumerate(choices)),
        "set -eu",
        f"cd {workdir}",
        # the template of the hardened command line the person runs, not a launch:
        'exec claude -p "$1" \\',  # agentguard: ignore[AG210,AG211,AG301,AG302,AG303]
        *(f"  {f} \\" for f in flags[:-1]),
        f"  {flags[-1]}",
    ]
    return "\n".join(lines) + "\n"


def plan_configs(
    configs: Sequence[Mapping[str, Any]], *, workdir: str, strict_mcp: bool
) -> SdkChanges:
    """One snippet per Claude agent configuration."""
    out = SdkChanges()
    used: set[str] = set()
    for cfg in configs:
        engine = str(cfg.get("engine", ""))
        options = cfg.get("options") if isinstance(cfg.get("options"), Mapping) else {}
        assert isinstance(options, Mapping)
        kept, why = declared_tools(options)
        choices = _choices(kept, why, workdir)
        if engine == "claude CLI":
            ext, render = ".sh", cli_snippet
        elif "TypeScript" in engine:
            ext, render = ".ts", ts_snippet
        else:
            ext, render = ".py", python_snippet
        base = f"agent/{_stem(str(cfg.get('path', 'agent')))}_hardened"
        name, n = base + ext, 2
        while name in used:
            name, n = f"{base}_{n}{ext}", n + 1
        used.add(name)
        out.files[name] = render(cfg, kept, workdir, strict_mcp, choices)
        out.configs.append(
            ConfigChange(
                path=str(cfg.get("path")),
                line=int(cfg.get("line") or 0),
                label=str(cfg.get("label", "")),
                engine=engine,
                snippet_file=name,
                kept=kept,
                fixes=_fixes(engine, kept),
                choices=choices,
            )
        )
    return out


def _tool_of(entry: str) -> str:
    return entry.split("(", 1)[0].strip()


def hardened_settings(originals: Sequence[ClaudeSettings]) -> tuple[str, tuple[str, ...]]:
    """One settings file for the agent: the original allow entries for tools it keeps,
    every other built-in denied, bypass mode off and disabled. Returns (text, kept tools)."""
    allow: list[str] = []
    for s in originals:
        for entry in s.allow or ():
            if entry not in allow:
                allow.append(entry)
    kept = tuple(t for t in BUILTIN_TOOLS if any(_tool_of(a) == t for a in allow))
    denied = [t for t in BUILTIN_TOOLS if t not in kept]
    doc = {
        "permissions": {
            "allow": [a for a in allow if _tool_of(a) not in denied],
            "deny": denied,
            "defaultMode": "default",
            "disableBypassPermissionsMode": "disable",
        }
    }
    return json.dumps(doc, indent=2) + "\n", kept


def claim_for(change: ConfigChange, finding: Finding) -> bool:
    """Does this configuration's snippet fix ``finding`` (which it belongs to)?"""
    return finding.rule_id in change.fixes


def config_for(changes: Sequence[ConfigChange], finding: Finding) -> ConfigChange | None:
    """The configuration a finding belongs to: same file and label, nearest line above."""
    if not finding.locations:
        return None
    loc = finding.locations[0]
    same = [
        c
        for c in changes
        if c.path == loc.path
        and (loc.note is None or loc.note == c.label)
        and c.line <= (loc.line or 0)
    ]
    if not same:
        return None
    return max(same, key=lambda c: c.line)

"""Claude Code settings files and MCP server files (JSON, comments tolerated).

* ``.claude/settings.json`` (project), ``.claude/settings.local.json`` (local),
  ``managed-settings.json`` (managed policy), ``~/.claude/settings.json`` inside an image
  (user): ``permissions.allow/deny/ask``, ``permissions.defaultMode``,
  ``permissions.disableBypassPermissionsMode``.
* ``.mcp.json``, ``.vscode/mcp.json``/``.cursor/mcp.json`` (``servers``),
  ``claude_desktop_config.json`` and ``.claude.json`` (``mcpServers``, also per project).

A file that is not valid JSON, or whose keys have the wrong type, raises
:class:`~agentguard.inspect.project.lined.DocumentError` (the caller records a failed
source with its line).
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import DocumentError, LinedDoc
from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import ClaudeSettings, McpServer

_USER_SETTINGS = re.compile(r"(^|/)(root|home/[^/]+)/\.claude/settings(\.local)?\.json$")


def settings_scope(path: str) -> str:
    name = posixpath.basename(path)
    if name == "managed-settings.json" or posixpath.dirname(path).endswith("managed-settings.d"):
        return "managed"
    if _USER_SETTINGS.search(path):
        return "user"
    return "local" if name == "settings.local.json" else "project"


def _decode(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None


def _str_list(doc: LinedDoc, value: Any, key: str) -> tuple[str, ...] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DocumentError(
            f"`permissions.{key}` must be a list of strings",
            line=doc.line("permissions", key),
            code="schema",
        )
    return tuple(value)


def parse_settings(path: str, data: bytes) -> ClaudeSettings:
    doc = load_jsonc(_decode(data))
    root = doc.value
    if not isinstance(root, dict):
        raise DocumentError("settings must be a JSON object", line=1, code="schema")
    perms = root.get("permissions", {})
    if not isinstance(perms, dict):
        raise DocumentError(
            "`permissions` must be an object", line=doc.line("permissions"), code="schema"
        )
    mode = perms.get("defaultMode")
    disable = perms.get("disableBypassPermissionsMode")
    lines: dict[str, int] = {}
    for key in ("allow", "deny", "ask", "defaultMode", "disableBypassPermissionsMode"):
        line = doc.lines.get(("permissions", key))
        if line is not None:
            lines[f"permissions.{key}"] = line
    if "permissions" in root:
        lines["permissions"] = doc.line("permissions") or 1
    env = root.get("env", {})
    if not isinstance(env, dict):
        raise DocumentError("`env` must be an object", line=doc.line("env"), code="schema")
    if "env" in root:
        lines["env"] = doc.line("env") or 1
    sandbox = root.get("sandbox")
    hatches: list[tuple[str, str, int | None]] = []
    if isinstance(sandbox, dict):
        for key, value in sandbox.items():
            where = doc.line("sandbox", key)
            if key == "excludedCommands" and isinstance(value, list):
                for n, cmd in enumerate(value):
                    if isinstance(cmd, str) and cmd.rstrip().endswith(":*"):
                        hatches.append((f"sandbox.excludedCommands[{n}]", cmd, where))
            elif key in ("allowUnsandboxedCommands", "dangerouslyDisableSandbox") and value:
                hatches.append((f"sandbox.{key}", repr(value).lower(), where))
    for key in ("dangerouslyDisableSandbox", "skipDangerousModePermissionPrompt"):
        if root.get(key) is True:
            hatches.append((key, "true", doc.line(key)))
    return ClaudeSettings(
        path=path,
        scope=settings_scope(path),
        sandbox_enabled=sandbox.get("enabled") if isinstance(sandbox, dict) else None,
        hatches=tuple(hatches),
        allow=_str_list(doc, perms.get("allow"), "allow"),
        deny=_str_list(doc, perms.get("deny"), "deny"),
        ask=_str_list(doc, perms.get("ask"), "ask"),
        default_mode=mode if isinstance(mode, str) else None,
        disable_bypass=disable if isinstance(disable, str) else None,
        lines=lines,
        env=tuple((str(k), v) for k, v in env.items() if isinstance(v, str)),
    )


def parse_mcp_file(path: str, data: bytes) -> list[McpServer]:
    doc = load_jsonc(_decode(data))
    root = doc.value
    if not isinstance(root, dict):
        raise DocumentError("an MCP configuration must be a JSON object", line=1, code="schema")
    out: list[McpServer] = []
    name = posixpath.basename(path)
    tables: list[tuple[tuple[str | int, ...], Any]] = []
    for key in ("mcpServers", "servers"):
        if key in root:
            tables.append(((key,), root[key]))
    projects = root.get("projects") if name == ".claude.json" else None
    if isinstance(projects, dict):
        for proj, cfg in projects.items():
            if isinstance(cfg, dict) and "mcpServers" in cfg:
                tables.append((("projects", proj, "mcpServers"), cfg["mcpServers"]))
    for keypath, table in tables:
        if not isinstance(table, dict):
            raise DocumentError(
                f"`{'.'.join(map(str, keypath))}` must be an object",
                line=doc.line(*keypath),
                code="schema",
            )
        for server, spec in table.items():
            line = doc.line(*keypath, server) or 1
            if not isinstance(spec, dict):
                raise DocumentError(
                    f"server {server!r} must be an object", line=line, code="schema"
                )
            args = spec.get("args", [])
            if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
                raise DocumentError(
                    f"`args` of server {server!r} must be a list of strings",
                    line=doc.line(*keypath, server, "args") or line,
                    code="schema",
                )
            out.append(
                mcp_server_from_mapping(
                    server, {**spec, "args": tuple(args)}, path=path, line=line, declared_in=name
                )
            )
    return out

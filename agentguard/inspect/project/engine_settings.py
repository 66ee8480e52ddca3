"""Codex ``config.toml`` and Gemini ``settings.json``: the engines' own configuration files.

Key names are the engines' documented ones:

- Codex (``.codex/config.toml`` in a project, ``$CODEX_HOME/config.toml``): top-level
  ``sandbox_mode`` and ``approval_policy``, the same keys under ``[profiles.NAME]`` (the
  top-level ``profile`` picks one), and ``[mcp_servers.NAME]`` with ``command``, ``args``,
  ``env``.
- Gemini (``.gemini/settings.json``, also written by the ``settings`` input of
  google-github-actions/run-gemini-cli): ``tools.sandbox``, ``tools.core`` (the built-in
  tools that exist), ``tools.exclude``, ``tools.allowed`` (pre-approved),
  ``general.defaultApprovalMode``, ``security.disableYoloMode``,
  ``admin.secureModeEnabled``, ``mcpServers``; and the flat keys of earlier releases
  (``sandbox``, ``coreTools``, ``excludeTools``, ``allowedTools``).

Both raise :class:`~.lined.DocumentError` for a file that cannot be read, so the caller
records a failed source, never an empty configuration.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from agentguard.inspect.project.engine_model import CODEX, GEMINI, EnginePolicy
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import DocumentError, LinedDoc
from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import McpServer, Option

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SHELL_TOOL_NAMES = ("run_shell_command", "ShellTool")
_TABLE = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-\"'.]+)\s*=")


def toml_lines(text: str) -> dict[tuple[str, str], int]:
    """(table, key) -> line, for the simple layouts config files use (good enough for
    evidence; a key not found falls back to its table's line)."""
    out: dict[tuple[str, str], int] = {}
    table = ""
    for n, line in enumerate(text.splitlines(), 1):
        m = _TABLE.match(line)
        if m:
            table = m.group(1).replace('"', "").replace("'", "")
            out.setdefault((table, ""), n)
            continue
        k = _KEY.match(line)
        if k:
            out.setdefault((table, k.group(1).strip("\"'")), n)
    return out


def parse_codex_config(path: str, data: bytes) -> tuple[list[EnginePolicy], list[McpServer]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"at line (\d+)", str(exc))
        line = int(at.group(1)) if at else None
        raise DocumentError(f"not valid TOML: {exc}", line=line) from None
    lines = toml_lines(text)

    def line_of(table: str, key: str) -> int:
        return lines.get((table, key)) or lines.get((table, "")) or 1

    def opt(table: str, mapping: dict[str, Any], key: str) -> Option | None:
        value = mapping.get(key)
        if value is None:
            return None
        return Option(str(value), line_of(table, key), f"{key} = {value!r}")

    policies: list[EnginePolicy] = []
    active = doc.get("profile") if isinstance(doc.get("profile"), str) else None
    top = EnginePolicy(
        engine=CODEX,
        path=path,
        line=1,
        label="config.toml",
        sandbox=opt("", doc, "sandbox_mode"),
        approval=opt("", doc, "approval_policy"),
    )
    profiles = doc.get("profiles")
    for name, spec in sorted(profiles.items()) if isinstance(profiles, dict) else ():
        if not isinstance(spec, dict):
            continue
        where = f"profiles.{name}"
        sandbox = opt(where, spec, "sandbox_mode") or top.sandbox
        approval = opt(where, spec, "approval_policy") or top.approval
        policies.append(
            EnginePolicy(
                engine=CODEX,
                path=path,
                line=line_of(where, ""),
                label=f"config.toml profile {name}" + (" (the default)" if name == active else ""),
                sandbox=sandbox,
                approval=approval,
                profile=name,
            )
        )
    policies.insert(0, top)
    servers: list[McpServer] = []
    servers_table = doc.get("mcp_servers")
    for name, spec in sorted(servers_table.items()) if isinstance(servers_table, dict) else ():
        if not isinstance(spec, dict):
            raise DocumentError(
                f"mcp_servers.{name} must be a table", line=line_of(f"mcp_servers.{name}", "")
            )
        servers.append(
            mcp_server_from_mapping(
                name,
                dict(spec),
                path=path,
                line=line_of(f"mcp_servers.{name}", ""),
                declared_in="config.toml [mcp_servers]",
            )
        )
    return policies, servers


def _get(doc: LinedDoc, *keys: str) -> tuple[Any, int | None]:
    value: Any = doc.value
    for k in keys:
        if not isinstance(value, dict) or k not in value:
            return None, None
        value = value[k]
    return value, doc.line(*keys)


def _first(doc: LinedDoc, *paths: tuple[str, ...]) -> tuple[Any, int | None, str]:
    for p in paths:
        value, line = _get(doc, *p)
        if value is not None:
            return value, line, ".".join(p)
    return None, None, ""


def _tools(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _is_shell(name: str) -> bool:
    return name.split("(", 1)[0].strip() in SHELL_TOOL_NAMES


def gemini_policy_from_doc(path: str, doc: LinedDoc, label: str, line: int = 1) -> EnginePolicy:
    """The policy of one Gemini settings document (a file, or an action's input)."""
    if not isinstance(doc.value, dict):
        raise DocumentError("Gemini settings must be a JSON object", line=1, code="schema")

    def at(found: int | None) -> int:
        return line + (found or 1) - 1

    sandbox_v, sandbox_l, sandbox_k = _first(doc, ("tools", "sandbox"), ("sandbox",))
    sandbox = (
        None
        if sandbox_v is None
        else Option(str(sandbox_v).lower(), at(sandbox_l), f"{sandbox_k}: {sandbox_v!r}")
    )
    mode_v, mode_l, _ = _first(doc, ("general", "defaultApprovalMode"))
    approval = None if mode_v is None else Option(str(mode_v), at(mode_l), "defaultApprovalMode")
    removed: Option | None = None
    core_v, core_l, core_k = _first(doc, ("tools", "core"), ("coreTools",))
    excl_v, excl_l, excl_k = _first(doc, ("tools", "exclude"), ("excludeTools",))
    if any(_is_shell(t) and "(" not in t for t in _tools(excl_v)):
        removed = Option(True, at(excl_l), f"{excl_k} lists run_shell_command")
    elif core_v is not None:
        core = _tools(core_v)
        shell = [t for t in core if _is_shell(t)]
        if not shell:
            removed = Option(True, at(core_l), f"{core_k} does not list the shell")
        elif all("(" in t for t in shell):
            removed = Option(tuple(shell), at(core_l), f"{core_k} limits the shell")
    allowed_v, allowed_l, allowed_k = _first(doc, ("tools", "allowed"), ("allowedTools",))
    preapproved = None
    if any(_is_shell(t) and "(" not in t for t in _tools(allowed_v)):
        preapproved = Option(_tools(allowed_v), at(allowed_l), f"{allowed_k}")
    off_v, off_l, off_k = _first(
        doc, ("security", "disableYoloMode"), ("admin", "secureModeEnabled")
    )
    yolo_off = Option(True, at(off_l), off_k) if off_v is True else None
    return EnginePolicy(
        engine=GEMINI,
        path=path,
        line=line,
        label=label,
        sandbox=sandbox,
        approval=approval,
        shell_removed=removed,
        shell_preapproved=preapproved,
        yolo_disabled=yolo_off,
    )


def gemini_servers_from_doc(
    path: str, doc: LinedDoc, declared_in: str, line: int = 1
) -> list[McpServer]:
    table, _ = _get(doc, "mcpServers")
    if table is None:
        return []
    if not isinstance(table, dict):
        raise DocumentError("`mcpServers` must be an object", line=doc.line("mcpServers"))
    out: list[McpServer] = []
    for name, spec in table.items():
        where = line + (doc.line("mcpServers", name) or 1) - 1
        if not isinstance(spec, dict):
            raise DocumentError(f"server {name!r} must be an object", line=where, code="schema")
        spec = dict(spec)
        if "httpUrl" in spec and "url" not in spec:
            spec["url"] = spec["httpUrl"]
        out.append(
            mcp_server_from_mapping(name, spec, path=path, line=where, declared_in=declared_in)
        )
    return out


def parse_gemini_settings(path: str, data: bytes) -> tuple[EnginePolicy, list[McpServer]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    doc = load_jsonc(text)
    policy = gemini_policy_from_doc(path, doc, "settings.json")
    return policy, gemini_servers_from_doc(path, doc, "settings.json mcpServers")

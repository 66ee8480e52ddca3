"""OpenHands' ``config.toml`` (the file its headless and CLI modes read from the folder they
start in; the repository documents every key in ``config.template.toml``).

What decides where the agent's commands run and whether anyone is asked:

- ``[core] runtime``: ``docker`` (the default: a sandbox container per session), the
  hosted sandboxes (``remote``, ``modal``, ``runloop``, ``e2b``, ``daytona``), ``kubernetes``,
  and ``local``/``cli``, which run every command on the machine OpenHands runs on;
- ``[security] confirmation_mode`` (default false): ask before each action;
- ``[sandbox] volumes`` (``"host:container[:ro|rw],..."``): host paths in the sandbox;
- ``[mcp] stdio_servers``: MCP servers OpenHands launches (``name``, ``command``, ``args``).

A ``config.toml`` without OpenHands' tables is some other tool's file: not read, no source.
One that names them and is not valid TOML raises :class:`~.lined.DocumentError`.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from agentguard.inspect.project.engine_model import OPENHANDS, EnginePolicy
from agentguard.inspect.project.engine_settings import toml_lines
from agentguard.inspect.project.lined import DocumentError
from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import McpServer, Option

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

LABEL = "OpenHands config.toml"
# keys only OpenHands' tables hold: a [core] or [sandbox] table of another tool is not it
_KEYS = {
    "core": {
        "runtime",
        "workspace_base",
        "default_agent",
        "max_iterations",
        "save_trajectory_path",
    },
    "sandbox": {"base_container_image", "runtime_container_image", "volumes", "user_id"},
    "security": {"confirmation_mode", "security_analyzer", "enable_security_analyzer"},
}
_TABLES = re.compile(rb"^\s*\[(?:core|sandbox|security)\]", re.M)


def might_be_openhands(data: bytes) -> bool:
    return _TABLES.search(data) is not None


def _is_openhands(doc: dict[str, Any]) -> bool:
    return any(isinstance(doc.get(t), dict) and keys & set(doc[t]) for t, keys in _KEYS.items())


def _volumes(value: object) -> tuple[tuple[str, str, bool | None], ...]:
    """``[sandbox] volumes``: "host:container[:ro|rw],..." (OpenHands' own format)."""
    if not isinstance(value, str):
        return ()
    out: list[tuple[str, str, bool | None]] = []
    for item in value.split(","):
        parts = item.strip().split(":")
        if len(parts) < 2 or not parts[0] or not parts[1]:
            continue
        mode = parts[2] if len(parts) > 2 else "rw"
        out.append((parts[0], parts[1], None if "$" in mode else "ro" not in mode.split("+")))
    return tuple(out)


def parse_openhands_config(
    path: str, data: bytes
) -> tuple[list[EnginePolicy], list[McpServer]] | None:
    """The policy and MCP servers of one OpenHands ``config.toml``; None when the file is
    not OpenHands' (no source is recorded for it)."""
    if not might_be_openhands(data):
        return None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DocumentError(f"not UTF-8 text (byte {exc.start})", code="decode") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        at = re.search(r"at line (\d+)", str(exc))
        raise DocumentError(
            f"not valid TOML: {exc}", line=int(at.group(1)) if at else None
        ) from None
    if not _is_openhands(doc):
        return None
    lines = toml_lines(text)

    def opt(table: str, key: str) -> Option | None:
        section = doc.get(table)
        value = section.get(key) if isinstance(section, dict) else None
        if value is None:
            return None
        line = lines.get((table, key)) or lines.get((table, "")) or 1
        shown = str(value).lower() if isinstance(value, bool) else str(value)
        written = shown if isinstance(value, bool) else json.dumps(value)
        return Option(shown, line, f"[{table}] {key} = {written}")

    sandbox = doc.get("sandbox")
    volumes = _volumes(sandbox.get("volumes") if isinstance(sandbox, dict) else None)
    policy = EnginePolicy(
        engine=OPENHANDS,
        path=path,
        line=1,
        label=LABEL,
        sandbox=opt("core", "runtime"),
        approval=opt("security", "confirmation_mode"),
        volumes=volumes,
        volumes_line=lines.get(("sandbox", "volumes")) if volumes else None,
    )
    servers: list[McpServer] = []
    mcp = doc.get("mcp")
    stdio = mcp.get("stdio_servers") if isinstance(mcp, dict) else None
    line = lines.get(("mcp", "stdio_servers")) or lines.get(("mcp", "")) or 1
    for i, spec in enumerate(stdio if isinstance(stdio, list) else ()):
        if not isinstance(spec, dict):
            raise DocumentError(f"mcp.stdio_servers[{i}] must be a table", line=line)
        name = spec.get("name")
        servers.append(
            mcp_server_from_mapping(
                name if isinstance(name, str) else f"stdio_servers[{i}]",
                dict(spec),
                path=path,
                line=line,
                declared_in="OpenHands config.toml [mcp] stdio_servers",
            )
        )
    return [policy], servers

"""What a file named on the command line is: by its name anywhere in its path, then by its
content where the name says nothing (``services:`` is compose, ``mcpServers`` an MCP
configuration, Claude settings keys a settings file...). Never a silent pass: a file that
is none of these is a usage error that lists the kinds (``--kind`` names one).
"""

from __future__ import annotations

import posixpath
import re

from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.kinds import file_kind
from agentguard.inspect.project.lined import DocumentError
from agentguard.inspect.project.walk import classify

# --kind value -> (the scan's kind, the container reader's kind or None)
FILE_KINDS: dict[str, tuple[str, str | None]] = {
    "dockerfile": ("container", "dockerfile"),
    "devcontainer": ("container", "devcontainer"),
    "requirements": ("container", "requirements"),
    "pyproject": ("container", "pyproject"),
    "dockerignore": ("container", "dockerignore"),
    "mcp": ("mcp", None),
    "settings": ("settings", None),
    "python": ("python", None),
    "typescript": ("ts", None),
    "script": ("script", None),
}

_SETTINGS_KEYS = frozenset(
    {
        "permissions",
        "hooks",
        "sandbox",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "apiKeyHelper",
        "defaultMode",
        "skipDangerousModePermissionPrompt",
        "includeCoAuthoredBy",
        "statusLine",
    }
)
_DEVCONTAINER_KEYS = frozenset(
    {
        "workspaceFolder",
        "workspaceMount",
        "dockerComposeFile",
        "runArgs",
        "remoteUser",
        "containerUser",
        "postCreateCommand",
        "features",
        "customizations",
        "forwardPorts",
    }
)
_SERVICES = re.compile(rb"^services:\s*(?:#.*)?$", re.MULTILINE)
_FROM = re.compile(rb"^\s*(?:#[^\n]*\n\s*|ARG[^\n]*\n\s*)*FROM\s+\S", re.IGNORECASE)


def known_kinds() -> str:
    return ", ".join(["compose", *FILE_KINDS])


def named_kind(path: str, data: bytes) -> tuple[str, str | None] | None:
    """(scan kind, container kind) of a file named on the command line, or None."""
    norm = path.replace("\\", "/")
    name = posixpath.basename(norm)
    if name.lower() == "devcontainer.json":  # anywhere, when named
        return "container", "devcontainer"
    kind = classify(norm)
    if kind == "container":
        return kind, file_kind(norm)
    if kind in ("python", "ts", "settings", "mcp"):
        return kind, None
    sniffed = _by_content(data)
    if sniffed is not None:
        return sniffed
    if kind is not None:
        return kind, None
    if name.lower().endswith(".json"):
        return _json_kind(name)
    return None


def _by_content(data: bytes) -> tuple[str, str | None] | None:
    head = data[: 256 * 1024]
    if _SERVICES.search(head):
        return "container", "compose"
    if _FROM.match(head):
        return "container", "dockerfile"
    try:
        doc = load_jsonc(head.decode("utf-8-sig")).value
    except (UnicodeDecodeError, DocumentError, ValueError, RecursionError):
        return None
    if not isinstance(doc, dict):
        return None
    if "mcpServers" in doc or ("servers" in doc and isinstance(doc.get("servers"), dict)):
        return "mcp", None
    if doc.keys() & _SETTINGS_KEYS:
        return "settings", None
    if doc.keys() & _DEVCONTAINER_KEYS or "image" in doc or "build" in doc:
        return "container", "devcontainer"
    return None


def _json_kind(name: str) -> tuple[str, str | None] | None:
    low = name.lower()
    if "mcp" in low:
        return "mcp", None
    if "settings" in low:
        return "settings", None
    return None

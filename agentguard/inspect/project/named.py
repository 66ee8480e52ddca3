"""What a file named on the command line is: by its name anywhere in its path, then by its
content where the name says nothing (``services:`` is compose, ``mcpServers`` an MCP
configuration, Claude settings keys a settings file...). Never a silent pass: a file that
is none of these is a usage error that lists the kinds (``--kind`` names one).
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.kinds import file_kind
from agentguard.inspect.project.lined import DocumentError

if TYPE_CHECKING:
    from agentguard.inspect.project.scan import Collected
from agentguard.inspect.project.walk import classify

# --kind value -> (the scan's kind, the container reader's kind or None)
FILE_KINDS: dict[str, tuple[str, str | None]] = {
    "compose": ("container", "compose"),
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
    return ", ".join(FILE_KINDS)


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


def read_named_file(path: Path, file_kind: str | None) -> Collected:
    """One file named on the command line, read as what its path or its content says it
    is (``file_kind``, from ``--kind``, decides when given). A file that is no kind
    agentguard reads is a usage error listing the kinds, never a skipped source in a run
    that exits 0."""
    from agentguard.errors import UsageError
    from agentguard.facts.project_file import ProjectFile
    from agentguard.findings import Source
    from agentguard.inspect.project.files import failed_source, process_file
    from agentguard.inspect.project.scan import Collected, folder_loader
    from agentguard.inspect.project.scan_oversize import oversize
    from agentguard.inspect.project.walk import NotRegular, TooLarge, read_candidate

    col = Collected(loader=folder_loader(path.parent))
    name = path.name
    col.files_seen = 1
    try:
        data = read_candidate(str(path))  # bounded: never the whole of a huge file
    except TooLarge as exc:
        col.sources.append(oversize(name, str(path), "container", exc.size))
        return col
    except NotRegular:
        raise UsageError(f"{path}: not a regular file") from None
    except OSError as exc:
        col.sources.append(
            failed_source(str(path), f"cannot read: {exc.strerror or exc}", "file-unreadable")
        )
        return col
    kinds = FILE_KINDS[file_kind] if file_kind else named_kind(path.as_posix(), data)
    if kinds is None:
        raise UsageError(
            f"{path}: not a kind of file agentguard reads (by its name or its content); "
            f"pass --kind to name one of: {known_kinds()}"
        )
    kind, container_kind = kinds
    col.files_read = 1
    if kind == "container":
        col.container_files.append(ProjectFile(name, data, kind=container_kind))
    out = process_file(name, kind, data)
    if kind != "container" and not out.sources:
        out.sources.append(Source.ok("file", name, f"read as {kind}"))
    col.outcomes.append(out)
    return col

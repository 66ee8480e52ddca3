"""The ``facts`` section of an inspect report: what was read, for JSON readers.

Never a secret: environment variables are listed by name only, build steps and command
lines go through the same redaction as AG402.
"""

from __future__ import annotations

import posixpath

from agentguard.facts.image import ContainerFacts, FileContent, ImageFacts
from agentguard.findings import JSONValue
from agentguard.secret_text import redact_argv as redact_argv
from agentguard.secret_text import redact_step

# Agent configuration collected from an image for the agent-config rules.
_AGENT_FILES = {
    ".mcp.json": "mcp-config",
    "CLAUDE.md": "agent-instructions",
    "CLAUDE.local.md": "agent-instructions",
    "AGENTS.md": "agent-instructions",
}
_CODE_SUFFIXES = (".py", ".ts", ".js", ".mjs", ".cjs")


def agent_file_kind(path: str, workdir: str) -> str | None:
    """What an image file is to the agent-config rules, or None when it is not one."""
    if workdir != "/" and not (path == workdir or path.startswith(workdir.rstrip("/") + "/")):
        return None
    parts = path.split("/")
    if {"site-packages", "dist-packages", "node_modules", "__pycache__"}.intersection(parts):
        return None
    name = parts[-1]
    if name in _AGENT_FILES:
        return _AGENT_FILES[name]
    if (
        len(parts) >= 2
        and parts[-2] == ".claude"
        and name.startswith("settings")
        and name.endswith(".json")
    ):
        return "claude-settings"
    if len(parts) >= 2 and parts[-2] == ".claude":
        return "claude-config"
    if name.endswith(_CODE_SUFFIXES):
        return "agent-code"
    return None


def agent_files(image: ImageFacts, workdir: str) -> list[tuple[FileContent, str]]:
    out: list[tuple[FileContent, str]] = []
    for content in image.contents:
        kind = agent_file_kind(content.path, workdir)
        if kind is not None:
            out.append((content, kind))
    return sorted(out, key=lambda ck: ck[0].path)


def image_facts_json(image: ImageFacts, workdir: str | None) -> dict[str, JSONValue]:
    cfg = image.config
    platform = "/".join(p for p in (cfg.os, cfg.architecture) if p) or None
    files = agent_files(image, workdir) if workdir is not None else []
    return {
        "target": image.target,
        "image_id": image.image_id,
        "repo_digests": list(image.repo_digests),
        "platform": platform,
        "user": cfg.user,
        "workdir": cfg.workdir,
        "effective_workdir": workdir,
        "env_names": [name for name, _ in cfg.env],
        "entrypoint": redact_argv(cfg.entrypoint),
        "cmd": redact_argv(cfg.cmd),
        "layers": [
            {
                "index": layer.index,
                "digest": layer.digest,
                "created_by": redact_step(layer.created_by) if layer.created_by else None,
                "media_type": layer.media_type,
                "compression": layer.compression,
                "entries": layer.entries,
            }
            for layer in image.layers
        ],
        "workdir_entries": len(image.workdir_entries),
        "workdir_entries_truncated": image.workdir_entries_truncated,
        "installed": [
            {"name": d.name, "version": d.version, "location": d.location, "layer": d.layer_digest}
            for d in sorted(image.installed, key=lambda d: (d.name, d.location))
        ],
        "agent_config_files": [
            {
                "path": c.path,
                "kind": kind,
                "layer": c.layer_digest,
                "bytes": len(c.data),
                "truncated": c.truncated,
                "relative_to_workdir": posixpath.relpath(c.path, workdir) if workdir else None,
            }
            for c, kind in files
        ],
        "docker_socket_paths": list(image.docker_socket_paths),
    }


def container_facts_json(container: ContainerFacts, workdir: str | None) -> dict[str, JSONValue]:
    return {
        "id": container.id,
        "name": container.name,
        "image_ref": container.image_ref,
        "state": container.state,
        "user": container.user,
        "workdir": container.workdir,
        "effective_workdir": workdir,
        "env_names": [name for name, _ in container.env],
        "mounts": [
            {
                "type": m.type,
                "source": m.source,
                "destination": m.destination,
                "read_write": m.read_write,
            }
            for m in container.mounts
        ],
        "privileged": container.privileged,
        "cap_add": list(container.cap_add) if container.cap_add is not None else None,
        "cap_drop": list(container.cap_drop) if container.cap_drop is not None else None,
        "network_mode": container.network_mode,
        "pid_mode": container.pid_mode,
        "ipc_mode": container.ipc_mode,
        "read_only_rootfs": container.read_only_rootfs,
        "security_opt": list(container.security_opt)
        if container.security_opt is not None
        else None,
    }

"""The MCP servers a project folder launches, as the project scan reads them (the same
readers as `inspect`: `.mcp.json`, the engines' settings, agent code, workflows, and the
servers only an import makes visible), with the sources read, and no rule run.

For `agentguard lock`, which resolves and pins them (:mod:`agentguard.lock.servers`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentguard.facts.agents import McpServer
    from agentguard.findings import Source


def project_servers(
    root: Path, exclude: Sequence[str] = ()
) -> tuple[tuple[McpServer, ...], tuple[Source, ...]]:
    from agentguard.inspect.project.scan import collect_folder

    col = collect_folder(root, exclude=exclude)
    servers = [m for o in col.outcomes for m in o.mcp_servers]
    configs = [c for o in col.outcomes for c in o.configs]
    if col.loader is not None and configs:  # (imported only where an agent was read)
        from agentguard.inspect.project.python_imports import resolve_configs

        servers += resolve_configs(configs, col.loader)[1]
    sources = [*col.sources, *(s for o in col.outcomes for s in o.sources)]
    if not servers:  # (what the registry settings are read for: a server's launcher)
        return (), tuple(sources)
    from agentguard.inspect.project.registry_files import project_registries

    servers, registry_read = project_registries(root, servers)
    return tuple(servers), (*sources, *registry_read)

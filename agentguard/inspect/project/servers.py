"""The MCP servers a project folder launches, as the project scan reads them (the same
readers as `inspect`: `.mcp.json`, the engines' settings, agent code, workflows, and the
servers only an import makes visible), with the sources read, and no rule run.

For `agentguard lock`, which resolves and pins them (:mod:`agentguard.lock.servers`). A
folder of build files alone that name no launch is told apart without the scan's readers."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentguard.facts.agents import McpServer
    from agentguard.findings import Source
    from agentguard.inspect.project.walk import WalkResult


def project_servers(
    root: Path, exclude: Sequence[str] = ()
) -> tuple[tuple[McpServer, ...], tuple[Source, ...]]:
    from agentguard.inspect.project.walk import walk

    got = walk(str(root), exclude=exclude)
    quiet = _launches_none(root, got)
    if quiet is not None:
        return (), quiet
    from agentguard.inspect.project.scan import collect_folder

    col = collect_folder(root, exclude=exclude, walked=got)
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


def _launches_none(root: Path, got: WalkResult) -> tuple[Source, ...] | None:
    """The sources of a scan of a folder that holds only build files (``pyproject.toml``,
    the locks, requirements files...) of which none names a command line the scan reads
    (``claude``, ``codex``, ``gemini``) or ``mcpServers``: such a file gives the scan
    nothing but its read (see the container branch of ``files._process``), so the folder
    launches no server. None: a file of another kind, a link out, a file that cannot be
    read whole, or a needle found -- the full scan reads the folder (whose modules are a
    sixth of a re-lock's imports: a scratch project holding a pyproject.toml and its locks
    imported them all, beside the resolver, to find nothing)."""
    if any(c.kind != "container" or c.outside is not None for c in got.candidates):
        return None
    from agentguard.inspect.project.needles import has_cli_use, has_engine_cli_use
    from agentguard.inspect.project.servers_needle import names_servers
    from agentguard.inspect.project.walk import project_source, read_candidate
    from agentguard.safeio import NotRegular, TooLarge

    for cand in got.candidates:
        try:
            data = read_candidate(cand.abspath, cand.regular)
        except (OSError, TooLarge, NotRegular):
            return None
        if has_cli_use(data) or has_engine_cli_use(data) or names_servers(data):
            return None
    return (*got.sources, project_source(str(root), got, len(got.candidates)))

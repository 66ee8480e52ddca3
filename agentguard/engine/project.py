"""A project's agent configuration and container files, read and then judged: the project
scan (:mod:`agentguard.inspect.project`) gathers facts and sources, and here the
build-file rules and the agent rules run over them (:func:`inspect_project` for a folder or
one named file, :func:`inspect_files` for files collected from an image).

Both return a :class:`ProjectResult`: findings, the sources read (ok / failed / skipped)
and facts for JSON readers.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.facts.project import BuildFileFacts
from agentguard.findings import Finding, JSONValue, Source

if TYPE_CHECKING:  # (annotations only: each record's module is imported where one is built)
    from agentguard.facts.agents import AgentConfig, ProjectFacts
    from agentguard.facts.capabilities import CapabilityMap
    from agentguard.facts.installs import RequirementsFile
    from agentguard.facts.mcp_pins import ServerLock
    from agentguard.facts.project import TreeFacts
    from agentguard.facts.project_file import ProjectFile
    from agentguard.inspect.project.scan import Collected, ContainerScan


MCP_LOCK_NAME = "mcp.lock.json"  # (agentguard.lock.servers.lockfile.MCP_LOCK: a test holds it)


@dataclass(frozen=True)
class ProjectResult:
    findings: tuple[Finding, ...]
    sources: tuple[Source, ...]
    facts: dict[str, JSONValue]
    capabilities: CapabilityMap | None = None  # the agent capability map (None: not built)


def inspect_project(
    path: Path,
    *,
    file_kind: str | None = None,
    exclude: Sequence[str] = (),
    beside: Callable[[], None] | None = None,
    use_cache: bool = False,
    cache_dir: Path | None = None,
    contexts: Mapping[str, tuple[str, ...]] | None = None,
) -> ProjectResult:
    """Walk a project folder (or read one file) and run the agent-configuration rules.

    ``file_kind``: what a named file is (``--kind``); ``exclude``: globs not read;
    ``beside``: other work of the run, done while forked children read a large folder
    (see :func:`scan_path`; not called for a file); ``use_cache``, ``cache_dir``: the
    content cache of a folder (:mod:`agentguard.inspect.project.cache`); ``contexts``:
    the configured context globs (which tests are the library's own, :mod:`.own_tests`)."""
    return scan_path(
        path,
        file_kind=file_kind,
        exclude=exclude,
        beside=beside,
        use_cache=use_cache,
        cache_dir=cache_dir,
        contexts=contexts,
    )


def inspect_files(
    files: Sequence[ProjectFile],
    *,
    workdir: str | None,
    configs: Sequence[AgentConfig] = (),
    target: str = "the image",
) -> ProjectResult:
    """Run the agent-configuration rules over files collected from an image (and agent
    configurations read from its config, such as a `claude` entrypoint); ``target``: the
    image as the user named it (the map's runner)."""
    return scan_files(files, workdir=workdir, configs=configs, target=target)


def scan_path(
    path: Path,
    *,
    file_kind: str | None = None,
    exclude: Sequence[str] = (),
    beside: Callable[[], None] | None = None,
    use_cache: bool = False,
    cache_dir: Path | None = None,
    contexts: Mapping[str, tuple[str, ...]] | None = None,
) -> ProjectResult:
    """A folder (walked, minus ``exclude``) or one file named on the command line.

    A named file is read as what its path or its content says it is (``file_kind``, from
    ``--kind``, decides when given); one that is no kind agentguard reads is a usage
    error listing the kinds, never a skipped source in a run that exits 0.

    ``use_cache``: take each unchanged file's facts from the content cache (in
    ``cache_dir`` or the default folder) and keep this run's for the next.
    """
    from agentguard.inspect.project.cache import open_cache
    from agentguard.inspect.project.scan import collect_folder

    if path.is_dir():
        server_lock, read = _server_lock(path)
        cache = open_cache(path, cache_dir) if use_cache else None
        return finish(
            collect_folder(
                path, exclude=exclude, beside=beside, containers=_scan_beside, cache=cache
            ),
            workdir=None,
            server_lock=server_lock,
            more_sources=read,
            target=str(path),
            root=path,
            contexts=contexts,
        )
    from agentguard.inspect.project.named import read_named_file

    return finish(read_named_file(path, file_kind), workdir=None, target=str(path))


def scan_files(
    files: Sequence[ProjectFile],
    *,
    workdir: str | None,
    configs: Sequence[AgentConfig] = (),
    target: str = "the image",
) -> ProjectResult:
    from agentguard.inspect.project.files import FileOutcome
    from agentguard.inspect.project.scan import collect_files

    col = collect_files(files, workdir=workdir)
    if configs:  # read from an image config, not from a file
        col.outcomes.append(FileOutcome(configs=list(configs), read=False))
    return finish(col, workdir=workdir, target=target)


def _scan_beside(files: list[ProjectFile], tree: TreeFacts | None) -> ContainerScan | None:
    """The container/build-file step the folder scan runs while its children read (None:
    there were none); then what :func:`finish` needs (the map, the agent rules, the
    policy) is imported, in the same time (on a large tree, 15-20 ms less after the last
    file is read, when the other CPU has nothing to do)."""
    scanned = scan_container_facts(files, tree=tree) if files else None
    import agentguard.engine.capability_map
    import agentguard.policy
    import agentguard.rules.agent_checks  # noqa: F401

    return scanned


def _server_lock(root: Path) -> tuple[ServerLock | None, tuple[Source, ...]]:
    """The project's MCP server lock (``mcp.lock.json``), read when there is one: AG310
    names the versions it holds, AG142 compares the launches with it."""
    if not os.path.lexists(root / MCP_LOCK_NAME):  # (none: its reader is not even imported)
        return None, ()
    from agentguard.lock.servers.lockfile import MCP_LOCK, LockReadError, read

    try:
        lock = read(root)
    except (LockReadError, OSError) as exc:
        return None, (
            Source.failed(
                "lockfile",
                MCP_LOCK,
                f"the MCP server lock could not be read: {exc}",
                error_code=getattr(exc, "code", "mcp-lock-unreadable"),
                retryable=False,
                remedy=f"Fix or remove {MCP_LOCK}, then run `agentguard lock` again.",
            ),
        )
    if lock is None:
        return None, ()
    return lock, (Source.ok("lockfile", MCP_LOCK, f"MCP server lock: {len(lock.pins)} launch(es)"),)


def finish(
    col: Collected,
    *,
    workdir: str | None,
    server_lock: ServerLock | None = None,
    more_sources: tuple[Source, ...] = (),
    target: str = "",
    root: Path | None = None,
    contexts: Mapping[str, tuple[str, ...]] | None = None,
) -> ProjectResult:
    from agentguard.engine import run_agent_rules
    from agentguard.engine.map_joins import with_imported_tools, with_k8s_agents, with_workflow_jobs
    from agentguard.facts.agents import ProjectFacts

    container_findings: list[Finding] = []
    container_sources: list[Source] = []
    container_facts: dict[str, JSONValue] = {}
    build: BuildFileFacts | None = None
    if col.container_scan is not None:
        container_findings, container_sources, container_facts, build = col.container_scan
    elif col.container_files:
        container_findings, container_sources, container_facts, build = scan_container_facts(
            col.container_files, tree=col.tree
        )
    ids = {f.rule_id for f in container_findings}
    configs = [c for o in col.outcomes for c in o.configs]
    agent_runs = [r for o in col.outcomes for r in o.agent_runs]
    composites = [c for o in col.outcomes for c in o.composites]
    definitions = [d for o in col.outcomes for d in o.definitions]
    if composites:
        from agentguard.inspect.project.composite import join

        joined, composite_runs = join(
            composites,
            [u for o in col.outcomes for u in o.local_uses],
            _requirements_reader(col.container_files),
        )
        configs += joined
        agent_runs += composite_runs
        from agentguard.inspect.project.composite import composite_definitions

        drawn = {c.path for c in configs} | {
            p.path for o in col.outcomes for p in o.engine_policies
        }
        definitions += composite_definitions(composites, drawn)
    crews = [c for o in col.outcomes for c in o.crew_classes]
    if crews and col.loader is not None:  # crewAI's agents.yaml (drawn by the map only)
        from agentguard.inspect.project.crew_yaml import crew_definitions

        definitions, crew_sources = crew_definitions(crews, definitions, col.loader)
        more_sources = (*more_sources, *crew_sources)
    configs, job_sources = with_workflow_jobs(configs, col.loader)  # (the map's joins)
    decorations = [t for o in col.outcomes for t in o.tool_decorations]
    definitions, import_sources = with_imported_tools(definitions, decorations, col.loader)
    read = {s.name for o in col.outcomes for s in o.sources} | {s.name for s in col.sources}
    join_sources = (*job_sources, *import_sources)  # (a file the walk said: not twice)
    more_sources = (*more_sources, *(s for s in join_sources if s.name not in read))
    servers = [m for o in col.outcomes for m in o.mcp_servers]
    if col.loader is not None and configs:  # (the import resolver: where there is a config)
        from agentguard.inspect.project.python_imports import resolve_configs

        configs, imported_servers = resolve_configs(configs, col.loader)
        servers += imported_servers
    if root is not None and servers:  # a folder: its own files may point the launchers elsewhere
        from agentguard.inspect.project.registry_files import project_registries

        servers, registry_read = project_registries(root, servers)
        more_sources = (*more_sources, *registry_read)
    fallbacks = tuple(s for o in col.outcomes for s in o.fallbacks)
    if root is not None and fallbacks:  # a library's tests of its own fallback class
        from agentguard.engine.own_tests import own_api_tests
        from agentguard.inspect.project.own_modules import project_modules

        fallbacks, own_tests = own_api_tests(fallbacks, project_modules(root), contexts or {})
        more_sources = (*more_sources, *own_tests)
    facts = ProjectFacts(
        configs=tuple(configs),
        grants=tuple(g for o in col.outcomes for g in o.grants),
        mcp_servers=tuple(servers),
        fallbacks=fallbacks,
        settings=tuple(s for o in col.outcomes for s in o.settings),
        engine_policies=tuple(p for o in col.outcomes for p in o.engine_policies),
        action_steps=tuple(s for o in col.outcomes for s in o.action_steps),
        agent_runs=tuple(agent_runs),
        k8s_containers=tuple(c for o in col.outcomes for c in o.k8s_containers),
        workdir=workdir,
        project_markers=tuple(col.markers),
        runs_as_root=True if "AG401" in ids else None,
        project_mounted=True if ids & {"AG201", "AG202", "AG212"} else None,
        server_lock=server_lock,
        harnesses=tuple(h for o in col.outcomes for h in o.harnesses),
        definitions=tuple(definitions),
        definitions_cut=tuple(
            (o.definitions[0].path, o.definitions_cut) for o in col.outcomes if o.definitions_cut
        ),
        package_roots=tuple(
            sorted(
                {
                    f.path.rpartition("/")[0]
                    for f in col.container_files
                    if f.path.rpartition("/")[2] == "pyproject.toml"
                }
            )
        ),
    )
    # the capability model is made from the facts alone, before the rules that read it
    from agentguard.engine.capability_map import build_map

    map_build = with_k8s_agents(
        build if build is not None else _no_build(col), facts.k8s_containers
    )
    capabilities = build_map(target, facts, map_build)
    findings = [*container_findings, *run_agent_rules(facts, capabilities)]
    sources = [
        *col.sources,
        *(s for o in col.outcomes for s in o.sources),
        *container_sources,
        *more_sources,
    ]
    json_facts: dict[str, JSONValue] = {
        "agent_configs": [c.to_json() for c in facts.configs],
        "mcp_servers": [m.to_json() for m in facts.mcp_servers],
        "tool_grants": [
            {
                "framework": g.framework,
                "tool": g.tool,
                "category": g.category,
                "path": g.path,
                "line": g.line,
            }
            for g in facts.grants
        ],
        "settings_files": [s.path for s in facts.settings],
        "project_markers": list(facts.project_markers),
        "files_seen": col.files_seen,
        "files_read": col.files_read,
        "files_parsed": sum(o.parsed for o in col.outcomes),
    }
    if container_facts:
        json_facts["containers"] = container_facts
    json_facts.update(_engine_facts(facts))
    return ProjectResult(tuple(findings), tuple(sources), json_facts, capabilities)


def _no_build(col: Collected) -> BuildFileFacts | None:
    """The walk's tree facts without container files (the map still says what the project
    folder holds)."""
    if col.tree is None:
        return None
    return BuildFileFacts((), (), (), (), (), (), col.tree)


def _requirements_reader(files: list[ProjectFile]) -> Callable[[str], RequirementsFile | None]:
    """A requirements file of the project by its path, parsed when asked for."""
    from agentguard.inspect.project.install_facts import parse_requirements_file

    by_path = {f.path.removeprefix("./"): f for f in files if f.readable}

    def read(path: str) -> RequirementsFile | None:
        f = by_path.get(path)
        if f is None:
            return None
        return parse_requirements_file(f.path, f.data.decode("utf-8", "replace"))

    return read


def _engine_facts(facts: ProjectFacts) -> dict[str, JSONValue]:
    """Codex/Gemini policies, agent actions and Kubernetes containers, when there are any."""
    out: dict[str, JSONValue] = {}
    if facts.engine_policies:
        out["engine_policies"] = [p.to_json() for p in facts.engine_policies]
    if facts.action_steps:
        out["agent_actions"] = [
            {"action": s.action, "ref": s.ref, "path": s.path, "line": s.line, "job": s.job}
            for s in facts.action_steps
        ]
    if facts.agent_runs:
        out["agent_runs"] = [
            {"engine": r.engine, "path": r.path, "line": r.line, "job": r.job}
            for r in facts.agent_runs
        ]
    if facts.k8s_containers:
        out["kubernetes_containers"] = [
            {"workload": c.workload, "container": c.name, "path": c.path, "line": c.line}
            for c in facts.k8s_containers
        ]
    return out


def scan_container_files(
    files: Sequence[ProjectFile],
    *,
    watched: frozenset[str] | None = None,
    tree: TreeFacts | None = None,
) -> tuple[list[Finding], list[Source], dict[str, JSONValue]]:
    """Findings, sources and facts for the container/build files among ``files`` (see
    :func:`scan_container_facts`, which also returns the joined build-file facts)."""
    findings, sources, facts, _build = scan_container_facts(files, watched=watched, tree=tree)
    return findings, sources, facts


def scan_container_facts(
    files: Sequence[ProjectFile],
    *,
    watched: frozenset[str] | None = None,
    tree: TreeFacts | None = None,
) -> tuple[list[Finding], list[Source], dict[str, JSONValue], BuildFileFacts]:
    """Findings, sources, facts and the joined build-file facts of the container/build
    files among ``files``.

    ``tree``: what the walk saw of the folder (AG212 then names the real files a COPY
    takes); None for files collected from an image (AG212 then probes typical names)."""
    from agentguard.config import deps_policy
    from agentguard.engine import lock_questions, run_build_file_rules
    from agentguard.inspect.project.containers import gather, join_build_files
    from agentguard.inspect.project.containers_json import build_files_json

    watched = watched if watched is not None else deps_policy().watched
    g = gather(files)
    if g.lock_files:
        from agentguard.inspect.project.locks import read_folder_locks

        placed, g.locked = read_folder_locks(g.lock_files, lock_questions(g.decls, watched))
        for at, source in reversed(placed):  # each where the lock comes in path order
            g.sources.insert(at, source)
    facts = join_build_files(g, tree)
    findings = run_build_file_rules(facts, watched)
    return findings, g.sources, build_files_json(g), facts

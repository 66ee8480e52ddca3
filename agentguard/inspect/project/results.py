"""From what the project scan gathered to its result: the facts are joined into
:class:`~agentguard.inspect.project.model.ProjectFacts`, the engine runs the agent rules
over them (beside the build-file findings of the container scan), and the sources and the
JSON facts are put together. The scan itself (:mod:`.scan`) only reads."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agentguard.findings import Finding, JSONValue, Source

if TYPE_CHECKING:
    from agentguard.inspect.facts import ProjectFile
    from agentguard.inspect.project import ProjectResult
    from agentguard.inspect.project.install_facts import RequirementsFile
    from agentguard.inspect.project.model import ProjectFacts
    from agentguard.inspect.project.scan import Collected


def finish(col: Collected, *, workdir: str | None) -> ProjectResult:
    from agentguard.engine import run_agent_rules
    from agentguard.inspect.project import ProjectResult
    from agentguard.inspect.project.model import ProjectFacts
    from agentguard.inspect.project.python_imports import resolve_configs

    container_findings: list[Finding] = []
    container_sources: list[Source] = []
    container_facts: dict[str, JSONValue] = {}
    if col.container_scan is not None:
        container_findings, container_sources, container_facts = col.container_scan
    elif col.container_files:
        from agentguard.inspect.project.containers import scan_container_files

        container_findings, container_sources, container_facts = scan_container_files(
            col.container_files, tree=col.tree
        )
    ids = {f.rule_id for f in container_findings}
    configs = [c for o in col.outcomes for c in o.configs]
    agent_runs = [r for o in col.outcomes for r in o.agent_runs]
    composites = [c for o in col.outcomes for c in o.composites]
    if composites:
        from agentguard.inspect.project.composite import join

        joined, composite_runs = join(
            composites,
            [u for o in col.outcomes for u in o.local_uses],
            _requirements_reader(col.container_files),
        )
        configs += joined
        agent_runs += composite_runs
    servers = [m for o in col.outcomes for m in o.mcp_servers]
    if col.loader is not None:
        configs, imported_servers = resolve_configs(configs, col.loader)
        servers += imported_servers
    facts = ProjectFacts(
        configs=tuple(configs),
        grants=tuple(g for o in col.outcomes for g in o.grants),
        mcp_servers=tuple(servers),
        fallbacks=tuple(s for o in col.outcomes for s in o.fallbacks),
        settings=tuple(s for o in col.outcomes for s in o.settings),
        engine_policies=tuple(p for o in col.outcomes for p in o.engine_policies),
        action_steps=tuple(s for o in col.outcomes for s in o.action_steps),
        agent_runs=tuple(agent_runs),
        k8s_containers=tuple(c for o in col.outcomes for c in o.k8s_containers),
        workdir=workdir,
        project_markers=tuple(col.markers),
        runs_as_root=True if "AG401" in ids else None,
        project_mounted=True if ids & {"AG201", "AG202", "AG212"} else None,
    )
    findings = [*container_findings, *run_agent_rules(facts)]
    sources = [*col.sources, *(s for o in col.outcomes for s in o.sources), *container_sources]
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
    return ProjectResult(tuple(findings), tuple(sources), json_facts)


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

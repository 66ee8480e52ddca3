"""The joins across files made for the capability map alone, after the walk and before the
model is built: each needs a reader (a file parsed again, or facts of two readers), so
the engine calls the readers here and writes what they find onto the facts. No rule reads
what they add (``AgentConfig.called_from``, the tools of ``AgentDefinition.tool_defs``
another module gives, the Kubernetes entries of ``BuildFileFacts.agent_services``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from agentguard.facts.agents import AgentConfig, AgentDefinition, ToolDecoration
from agentguard.facts.k8s import K8sContainer
from agentguard.facts.project import BuildFileFacts
from agentguard.findings import Source

Loader = Callable[[str], bytes | None]


def with_workflow_jobs(
    configs: list[AgentConfig], load: Loader | None
) -> tuple[list[AgentConfig], list[Source]]:
    """Each claude command line of a workflow with the jobs whose text holds it, and the
    workflows that do not parse (failed sources)."""
    if load is None or not any(c.engine == "claude CLI" and c.called_from is None for c in configs):
        return configs, []
    from agentguard.inspect.project.workflow_jobs import join_workflow_jobs

    return join_workflow_jobs(configs, load)


def with_imported_tools(
    definitions: list[AgentDefinition], decorations: Sequence[ToolDecoration], load: Loader | None
) -> tuple[list[AgentDefinition], list[Source]]:
    """The definitions with the tools other modules of the project give them, and the
    sources of what could not be told (a file that does not parse, a cap hit)."""
    if load is None or not (decorations or any(d.tool_imports for d in definitions)):
        return definitions, []
    from agentguard.inspect.project.python_tool_imports import join_imported_tools

    return join_imported_tools(definitions, decorations, load)


def with_k8s_agents(
    build: BuildFileFacts | None, containers: Sequence[K8sContainer]
) -> BuildFileFacts | None:
    """``build`` with the Kubernetes containers that start an agent app among its agent
    services (a project with no other container file: facts of their own)."""
    if not containers:
        return build
    from agentguard.inspect.project.k8s_agents import k8s_agent_services

    found = k8s_agent_services(containers, build)
    if not found:
        return build
    base = build or BuildFileFacts((), (), (), (), (), (), None)
    return dataclasses.replace(base, agent_services=(*base.agent_services, *found))

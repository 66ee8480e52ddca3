"""Runs the agent-configuration rules (AG210, AG211, AG301-AG305, AG310, AG320, and AG402
for literal secrets in MCP server environments) over facts.

Pure: takes :class:`~agentguard.facts.agents.ProjectFacts`, returns findings.
"""

from __future__ import annotations

from agentguard.facts.agents import ProjectFacts
from agentguard.facts.capabilities import CapabilityMap
from agentguard.findings import Finding, Location
from agentguard.rules.agent_bypass import check_bypass, check_settings_bypass
from agentguard.rules.agent_fallback_paths import check_fallback_paths
from agentguard.rules.agent_grants import check_grants
from agentguard.rules.agent_sandbox import (
    check_sandbox_hatches,
    check_settings_shell,
    check_skip_bypass_prompt,
)
from agentguard.rules.agent_tools_checks import (
    check_allow_list,
    check_builtin_tools,
    check_settings_allow,
)
from agentguard.rules.agent_tools_mcp import (
    check_fallback_option,
    check_fallback_site,
    check_mcp_server,
    check_server_lock,
)
from agentguard.rules.agent_workdir import check_settings_sources, check_workdir, cwd_verdict
from agentguard.rules.secret_values import check_env_secrets


def run_agent_rules(facts: ProjectFacts, model: CapabilityMap) -> list[Finding]:
    """``model``: the capability model built from the same ``facts``; its entry of each
    configuration says which built-in tools exist and whether its cwd is the project."""
    out: list[Finding] = []
    for i, cfg in enumerate(facts.configs):
        entry = model.of_config(i)
        tools = entry.tools if entry is not None else ()
        reading = entry.workdir.cwd if entry is not None else None
        mine: list[Finding] = []
        mine += check_builtin_tools(cfg, tools)
        mine += check_allow_list(cfg)
        workdir = check_workdir(cfg, facts, reading)
        mine += workdir
        is_project, confidence, _ = cwd_verdict(cfg, reading)
        explicit = cfg.option("cwd") is not None and is_project and confidence.value == "high"
        mine += check_bypass(cfg, facts, cwd_is_project=explicit)
        mine += check_settings_sources(cfg, facts, reading)
        mine += check_fallback_option(cfg)
        # one configuration, one entry in the text report (each rule keeps its finding)
        subject = f"{cfg.engine} {cfg.label} at {cfg.path}:{cfg.line}"
        out += [f.with_subject(subject) for f in mine]
    out += check_grants(facts.grants, facts)
    for settings in facts.settings:
        out += check_settings_shell(settings)
        out += check_settings_allow(settings)
        out += check_settings_bypass(settings, facts)
        out += check_skip_bypass_prompt(settings)
        out += check_sandbox_hatches(settings)
        out += check_env_secrets(
            settings.env,
            subject=f"{settings.scope} settings",
            location=Location(path=settings.path, line=settings.line_of("env")),
            set_where=f"`env` of {settings.path}",
        )
    for server in facts.mcp_servers:
        out += check_mcp_server(server, facts.server_lock, project=facts.workdir is None)
        out += check_env_secrets(
            server.env,
            subject=f"MCP server {server.name!r}",
            location=Location(path=server.path, line=server.line, note=server.declared_in),
            set_where=f"its `env` in {server.declared_in}",
        )
    out += check_server_lock(facts)
    for site in facts.fallbacks:
        out += check_fallback_site(site)
        out += check_fallback_paths(site)
    if facts.engine_policies or facts.action_steps:
        from agentguard.rules.agent_actions import check_action_step
        from agentguard.rules.agent_engines import check_engine_policy, with_project_defaults

        for policy in with_project_defaults(facts.engine_policies):
            out += check_engine_policy(policy)
        for step in facts.action_steps:
            out += check_action_step(step)
    if facts.agent_runs:
        from agentguard.rules.agent_runs import check_agent_run

        for run in facts.agent_runs:
            out += check_agent_run(run)
    if facts.k8s_containers:
        from agentguard.rules.kubernetes import check_k8s_container

        for container in facts.k8s_containers:
            out += check_k8s_container(container)
    return out

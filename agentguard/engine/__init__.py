"""Runs gathering and rules for a command, applies policy, and picks the exit code.

Exit codes (one table for every command):

====  =====================================================================
0     complete, and no active finding at or above ``--fail-on``
1     complete, and at least one active finding at or above ``--fail-on``
2     usage or configuration error (bad flag, malformed input file, unknown key)
3     incomplete: a source failed or could not be read (takes precedence over 1,
      because a partial look cannot vouch for anything; the findings are still reported)
====  =====================================================================
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from agentguard.findings import (
    Finding,
    Report,
    Severity,
)

if TYPE_CHECKING:
    from agentguard.facts.agents import ProjectFacts
    from agentguard.facts.capabilities import CapabilityMap
    from agentguard.facts.image import ContainerFacts, ImageFacts
    from agentguard.facts.installs import RequirementDecl
    from agentguard.facts.lock import LockInput
    from agentguard.facts.mcp_tools import ToolsCompared, ToolsDropped
    from agentguard.facts.project import BuildFileFacts
    from agentguard.facts.smoke import SmokeFacts
from agentguard.errors import UsageError as UsageError
from agentguard.exit_codes import EXIT_CODE_TABLE as EXIT_CODE_TABLE
from agentguard.exit_codes import ExitCode as ExitCode
from agentguard.provenance import make_report as make_report
from agentguard.provenance import now_utc as now_utc

REFUSED = "refused"


def exit_code(report: Report, fail_on: Severity, *, allow_incomplete: bool = False) -> ExitCode:
    if report.failed_sources and not allow_incomplete:
        return ExitCode.INCOMPLETE
    if report.status == REFUSED:  # nothing written: never a pass, whatever --fail-on says
        return ExitCode.FINDINGS
    worst = report.worst()
    if worst is not None and worst >= fail_on:
        return ExitCode.FINDINGS
    return ExitCode.OK


# -- running the rule families over gathered facts -----------------------------------
# (the rule modules are imported here, on demand: a command that reads no project files
# does not pay for them)


def run_agent_rules(facts: ProjectFacts, model: CapabilityMap) -> list[Finding]:
    """AG210/211, AG30x, AG310/320/330, AG402 over a project's agent configuration and
    its capability model (built from the same facts, before the rules run)."""
    from agentguard.rules.agent_checks import run_agent_rules as agent_rules

    return agent_rules(facts, model)


def run_smoke_rules(facts: SmokeFacts) -> list[Finding]:
    """AG601-AG605 over what a smoke run observed, and AG145 over the servers' tools
    against the snapshots ``mcp.lock.json`` records."""
    from agentguard.rules.mcp_tools import tools_drift_findings
    from agentguard.rules.smoke import check_smoke

    return [*check_smoke(facts), *tools_drift_findings(facts.tools)]


def run_snapshot_edit_rules(
    edits: Sequence[ToolsCompared], dropped: Sequence[ToolsDropped]
) -> list[Finding]:
    """AG146 over the tools/list snapshots a change (``check --base``) re-records or drops."""
    from agentguard.rules.mcp_tools_edit import snapshot_edit_findings

    return snapshot_edit_findings(edits, dropped)


def lock_questions(
    decls: Sequence[RequirementDecl], watched: frozenset[str]
) -> dict[str, set[str]]:
    """Folder -> the packages whose pin in the lock there can change a finding (AG121): the
    project scan reads only those folders' locks."""
    from agentguard.rules.sdk_bounds import lock_questions as questions

    return questions(decls, watched)


def run_build_file_rules(facts: BuildFileFacts, watched: frozenset[str]) -> list[Finding]:
    """The build-file rules over a project's joined container and build files (each
    family imported where there are facts of its kind: a project without a Dockerfile, a
    compose file or a devcontainer.json does not load the container rules)."""
    from agentguard.rules.buildfiles import check_unlocked_installs
    from agentguard.rules.sdk_bounds import check_sdk_bounds

    findings: list[Finding] = []
    if facts.dockerfiles or facts.composes or facts.devcontainers:
        from agentguard.rules.compose_rules import (
            check_compose_file,
            check_devcontainer,
            check_dockerfile_hardening,
        )
    if facts.dockerfiles:
        from agentguard.rules.context_copy import check_context_copy
    for df, contexts in facts.dockerfiles:
        findings += check_dockerfile_hardening(df)
        for ctx, ignore in contexts:
            findings += check_context_copy(df, ignore, context=ctx, tree=facts.tree)
    for cf, workdirs in facts.composes:
        findings += check_compose_file(cf, workdirs)
    for dc in facts.devcontainers:
        findings += check_devcontainer(dc)
    if facts.devcontainers:
        from agentguard.rules.devcontainer_features import merge_socket_findings

        findings = merge_socket_findings(findings, facts.devcontainers)
    for cmd, refs in facts.installs:
        findings += check_unlocked_installs([cmd], refs, watched)
    findings += check_sdk_bounds(list(facts.decls), watched, locked=facts.locked)
    if facts.tool_installs:
        from agentguard.rules.tool_installs import check_tool_installs

        findings += check_tool_installs(facts.tool_installs)
    return findings


def image_findings(
    image: ImageFacts,
    *,
    lock: LockInput | None,
    watched: Collection[str],
    workdir: str | None = None,
    runtime: bool = False,
    workdir_hidden: bool = False,
) -> list[Finding]:
    """The image rule families over one image's facts (gathering hands facts here)."""
    from agentguard.rules.inspected import check_image

    return check_image(
        image,
        lock=lock,
        watched=watched,
        workdir=workdir,
        runtime=runtime,
        workdir_hidden=workdir_hidden,
    )


def container_findings(container: ContainerFacts) -> list[Finding]:
    """The container rule families over one container's runtime facts."""
    from agentguard.rules.inspected import check_container

    return check_container(container)

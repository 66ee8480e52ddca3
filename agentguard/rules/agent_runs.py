"""AG120, AG130 and AG331 for an agent a workflow starts with its own ``run:`` step
(OpenHands' resolver: ``python -m openhands.resolver.resolve_issue``) or a composite action
runs. Pure: facts from
:mod:`agentguard.inspect.project.workflow_runs`."""

from __future__ import annotations

import dataclasses

from agentguard.facts.workflows import AgentRunStep
from agentguard.findings import Confidence, Finding, Fix, Location
from agentguard.rules.agent_actions import AgentTriggerableByAnyone
from agentguard.rules.buildfiles import _package_name, check_unlocked_installs


def check_agent_run(run: AgentRunStep) -> list[Finding]:
    """AG331 when anyone can start the job; AG120 for each unlocked install of the job (what
    the job installs is what the agent runs with, next to the model key and the token)."""
    out: list[Finding] = []
    where = Location(path=run.path, line=run.line, note=f"job {run.job}")
    if run.open_events:
        events = ", ".join(run.open_events)
        out.append(
            AgentTriggerableByAnyone.finding(
                f"{run.engine} runs in job {run.job} (`{run.command}`) on {events}, and "
                "neither the job's nor the step's `if:` checks who triggered it: anyone who "
                "can open an issue or write a comment starts the agent, and what they write "
                "is its task.",
                locations=[where],
                fix=Fix(
                    "Start the job only for people with write access: add "
                    '`contains(fromJSON(\'["OWNER","MEMBER","COLLABORATOR"]\'), '
                    "github.event.comment.author_association)` (or the review's / issue's) to "
                    "the job's `if:`, or trigger it by a label only maintainers can set."
                ),
                evidence={
                    "agent": run.engine,
                    "job": run.job,
                    "events": list(run.open_events),
                    "triggers": list(run.triggers),
                },
                confidence=Confidence.MEDIUM,  # read from the `if:` text, not evaluated
            )
        )
    if run.tool_installs:
        from agentguard.rules.tool_installs import check_tool_installs

        out += check_tool_installs(run.tool_installs)
    files = dict(run.written)
    for cmd in run.installs:
        refs = {ref: [files[ref]] if ref in files else [] for ref in cmd.requirement_files}
        # in the agent's job, every package installed is part of what the agent runs with
        stack = {n for n in (_package_name(p) for p in cmd.packages) if n}
        for rf in (r for cands in refs.values() for r in cands):
            stack.update(r.name for r in rf.requirements if r.name)
        for f in check_unlocked_installs([cmd], refs, frozenset(stack)):
            out.append(
                dataclasses.replace(f, evidence={**f.evidence, "agent": run.engine, "job": run.job})
            )
    return out

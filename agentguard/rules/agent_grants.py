"""AG301/AG302/AG303 for tools and executors other agent frameworks hand over (facts only,
no I/O): a local executor its own package's harness runs in a container says so."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.agents import ProjectFacts, ToolGrant
from agentguard.findings import Confidence, Finding, JSONValue, Location, Severity
from agentguard.rules.agent_harness import credited, harness_runs, harness_text
from agentguard.rules.agent_tools import CATEGORY_RULES

_GRANT_FIX = {
    "smolagents": 'Use a remote executor: `CodeAgent(..., executor_type="docker")` '
    "(or e2b, modal, wasm) instead of the local one.",
    "autogen": "Use `DockerCommandLineCodeExecutor` (a throwaway container without the "
    "project or credentials) instead of the local executor.",
    "crewai": 'Use `code_execution_mode="safe"` (Docker) instead of "unsafe".',
    "anthropic API": "Run the loop that executes the model's tool calls in a disposable "
    "container without the project or credentials (non-root, read-only, no network it does "
    "not need), or leave the tool out of `tools=`.",
    "openai API": "Run the loop that executes the model's tool calls in a disposable "
    "container without the project or credentials (non-root, read-only, no network it does "
    "not need), or leave the tool out of `tools=`.",
}
_CATEGORY_FIX = {
    "shell": "Remove the tool, or give it an executor that runs commands in a disposable "
    "container without the project or credentials.",
    "file": "Give the tool a dedicated scratch folder (`root_dir=`), not the project, or "
    "remove it.",
    "web": "Remove the tool, or restrict it to an allow-list of hosts.",
}


def check_grants(grants: Iterable[ToolGrant], facts: ProjectFacts | None = None) -> list[Finding]:
    """AG301/AG302/AG303 for tools handed over by other agent frameworks."""
    out: list[Finding] = []
    for g in grants:
        rule = CATEGORY_RULES[g.category][0]
        message = f"{g.framework} {g.tool}: {g.detail}."
        evidence: dict[str, JSONValue] = {
            "framework": g.framework,
            "tool": g.tool,
            "category": g.category,
        }
        severity = None
        confidence = Confidence.HIGH if g.certain else Confidence.LOW
        runs = harness_runs(g, facts) if facts is not None and g.category == "shell" else []
        fix = _GRANT_FIX.get(g.framework, _CATEGORY_FIX[g.category])
        if runs:
            # where the executor's "local processes" are: the container its harness starts
            name = g.path.rpartition("/")[2]
            message = (
                f"{g.framework} {g.tool}: {g.detail.removesuffix(', no container')}, in "
                f"whatever runs `{name}`.{harness_text(runs, name)}"
            )
            evidence["harness"] = [f"{r.harness.path}:{r.harness.line}" for r in runs]
            sockets = [
                f"{r.harness.path}:{r.harness.socket_line}" for r in runs if r.harness.socket_line
            ]
            if sockets:
                fix = f"Do not bind the host's Docker socket into the harness's container ({', '.join(sockets)}). {fix}"
            if credited(runs):
                severity = min(rule.default_severity, Severity.MEDIUM)
                if confidence is Confidence.HIGH:  # (joined by the file's name)
                    confidence = Confidence.MEDIUM
                message += " Mitigated: the code runs in that container."
                evidence["mitigated_by"] = (
                    f"the container {runs[0].harness.path}:{runs[0].harness.line} starts"
                )
        if g.mitigated:
            # an approval step or the provider's sandbox confines it: graded lower, said so
            severity = min(rule.default_severity, Severity.LOW if g.hosted else Severity.MEDIUM)
            message += f" Mitigated: {g.mitigated}."
            evidence["mitigated_by"] = g.mitigated
        out.append(
            rule.finding(
                message,
                locations=[Location(path=g.path, line=g.line, note=g.framework)],
                fix=fix,
                evidence=evidence,
                severity=severity,
                confidence=confidence,
            )
        )
    return out

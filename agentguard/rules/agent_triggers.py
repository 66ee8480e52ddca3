"""AG340: who can start the agent. Facts only (no I/O)."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.inspect.project.model import OpenTrigger
from agentguard.rules.base import Rule, register


@register
class AgentOpenToAnyUser(Rule):
    """Anyone can start the agent: a workflow runs it for users without write access.

    ## What it does
    Reports a claude-code-action step with `allowed_non_write_users: "*"`.

    ## Why is this bad?
    Whoever can open an issue or write a comment decides what the agent reads first: the
    text is a prompt, run with the workflow's token and tools. Without the check, only
    people who can already change the repository can start it.

    ## Example
    ```yaml
    - uses: anthropics/claude-code-action@v1
      with:
        allowed_non_write_users: "*"
    ```

    ## Use instead
    Remove the input (the default lets only users with write access start the agent), or
    name the accounts that may, and give the step the fewest tools and permissions it
    needs:
    ```yaml
    - uses: anthropics/claude-code-action@v1
      with:
        claude_args: '--tools "Read,Grep"'
    ```
    """

    id = "AG340"
    name = "agent-open-to-any-user"
    title = "Agent started by users without write access"
    default_severity = Severity.HIGH
    family = "agent_triggers"


def check_triggers(triggers: Iterable[OpenTrigger]) -> list[Finding]:
    return [
        AgentOpenToAnyUser.finding(
            f"claude-code-action step at line {t.step_line} sets allowed_non_write_users: "
            f'"{t.value}": anyone who can open an issue or comment starts the agent, and what '
            "they write is its prompt.",
            locations=[Location(path=t.path, line=t.line)],
            fix=Fix(
                "Remove `allowed_non_write_users` (only users with write access start the "
                "agent), or name the accounts that may; keep the step's tools and token "
                "permissions to what the task needs."
            ),
            evidence={"allowed_non_write_users": t.value, "step_line": t.step_line},
        )
        for t in triggers
    ]

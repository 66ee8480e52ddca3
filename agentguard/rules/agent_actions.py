"""Agent actions in CI (facts only, no I/O): AG330 (an agent action at a moving ref), AG331
(anyone may trigger the agent), and codex-action's ``safety-strategy``, which feeds AG401.
The engines' own configurations (Codex, Gemini, OpenHands) are :mod:`.agent_engines`.
"""

from __future__ import annotations

from agentguard import escape
from agentguard.facts.workflows import ActionStep
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register
from agentguard.rules.hardening_rules import RunsAsRoot

_SHA = frozenset("0123456789abcdef")


@register
class AgentActionUnpinned(Rule):
    """An agent action is referenced by a tag or branch, not by a commit.

    ## What it does
    Reports a workflow step that runs an agent action (`openai/codex-action`,
    `anthropics/claude-code-action`, `google-github-actions/run-gemini-cli`) with a ref
    that is not a full 40-character commit SHA (`@v1`, `@main`, `@beta`).

    ## Why is this bad?
    A tag or branch can be moved by whoever controls the action's repository. The agent
    action runs with the workflow's token and the model's API key, and decides how the
    agent is confined: the next push to that ref changes what runs in your CI, unreviewed.

    ## Example
    ```yaml
    - uses: openai/codex-action@v1
    ```

    ## Use instead
    ```yaml
    - uses: openai/codex-action@0b91f4c3d0a0c5e4a3f9a4b0d9e6c2a1f3b5d7e9  # v1.2.0
    ```
    Pin the commit and let Dependabot or Renovate propose updates.
    """

    id = "AG330"
    name = "agent-action-unpinned"
    title = "Agent action referenced by a moving ref"
    default_severity = Severity.MEDIUM
    family = "agent-engines"


@register
class AgentTriggerableByAnyone(Rule):
    """Anyone may trigger the agent in CI.

    ## What it does
    Reports `allow-users: "*"` on `openai/codex-action` and `allowed_non_write_users: "*"`
    on `anthropics/claude-code-action`: the action's own check that the person who
    triggered the run has write access to the repository is switched off. An agent a
    workflow starts with its own `run:` step (OpenHands' resolver, `python -m
    openhands.resolver.resolve_issue`) has no such check: it is reported when the workflow
    runs on an event anyone can cause (`issues` other than `labeled`, `issue_comment`,
    review comments, `pull_request_target`, discussions) and neither the job's nor the
    step's `if:` checks who triggered it (`author_association`, `github.actor`); medium
    confidence, since the condition is read, not evaluated.

    ## Why is this bad?
    On a public repository anyone can open an issue or a comment. With the check off,
    their text becomes the agent's prompt in a job that holds the model's key and a
    repository token: a prompt injection away from pushing code or leaking secrets.

    ## Example
    ```yaml
    - uses: anthropics/claude-code-action@<sha>
      with:
        allowed_non_write_users: "*"
    ```

    ## Use instead
    Leave the check on (remove the input), or list the few accounts that may trigger
    the agent by name.
    """

    id = "AG331"
    name = "agent-triggerable-by-anyone"
    title = "Anyone may trigger the agent"
    default_severity = Severity.HIGH
    family = "agent-engines"


def _is_sha(ref: str) -> bool:
    return len(ref) == 40 and set(ref.lower()) <= _SHA


def check_action_step(step: ActionStep) -> list[Finding]:
    """AG330, AG331 and (codex-action's safety strategy) AG401 for one workflow step."""
    out: list[Finding] = []
    where = Location(path=step.path, line=step.line, note=f"job {step.job}")
    if not _is_sha(step.ref):
        out.append(
            AgentActionUnpinned.finding(
                f"{step.action}@{step.ref or '(no ref)'} in job {step.job} runs whatever that "
                "ref points to when the job starts.",
                locations=[where],
                fix=Fix(
                    f"Pin {step.action} to a full commit SHA (keep the tag as a comment).",
                    snippet=escape.snippet(
                        f"uses: {step.action}@<40-character commit sha>  # {step.ref}"
                    ),
                ),
                evidence={"action": step.action, "ref": step.ref},
            )
        )
    for key in ("allow-users", "allowed_non_write_users"):
        got = step.input(key)
        if got is None or not isinstance(got[0], str):
            continue
        users = [u.strip() for u in got[0].replace("\n", ",").split(",")]
        if "*" in users:
            risky = sorted(
                set(step.triggers)
                & {"issues", "issue_comment", "pull_request_target", "pull_request_review_comment"}
            )
            out.append(
                AgentTriggerableByAnyone.finding(
                    f'{step.action} in job {step.job} sets `{key}: "*"`: the check that '
                    "whoever triggers the agent can write to the repository is off"
                    + (f" (triggered by {', '.join(risky)})" if risky else "")
                    + ": what they write is the agent's prompt.",
                    locations=[Location(path=step.path, line=got[1], note=f"job {step.job}")],
                    fix=Fix(
                        f"Remove `{key}` (only users with write access then start the agent), "
                        "or list the accounts that may; keep the step's tools and token "
                        "permissions to what the task needs."
                    ),
                    evidence={"action": step.action, "input": key, "triggers": list(step.triggers)},
                )
            )
    strategy = step.input("safety-strategy") if step.action == "openai/codex-action" else None
    if strategy is not None and strategy[0] in ("unsafe", "read-only"):
        unsafe = strategy[0] == "unsafe"
        out.append(
            RunsAsRoot.finding(
                f"openai/codex-action in job {step.job} runs Codex as the runner's default user "
                f"(`safety-strategy: {strategy[0]}`), which has sudo: the agent can read the "
                "API key from memory and everything else on the runner.",
                locations=[Location(path=step.path, line=strategy[1], note=f"job {step.job}")],
                fix=Fix(
                    "Use `safety-strategy: drop-sudo` (the default) or `unprivileged-user`.",
                    snippet="safety-strategy: drop-sudo",
                ),
                evidence={"action": step.action, "safety_strategy": strategy[0]},
                severity=Severity.HIGH if unsafe else Severity.MEDIUM,
            )
        )
    return out

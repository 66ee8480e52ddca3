"""The bot as it ran during the incident (kept as is: agentguard's example findings)."""

from __future__ import annotations

import logging

from claude_agent_sdk import ClaudeAgentOptions, create_sdk_mcp_server, query, tool

log = logging.getLogger("kontext-bot")

PRIMARY_MODEL = "claude-sonnet-4-5"
BACKUP_MODEL = "claude-haiku-4-5"


@tool("team_tasks", "List the open tasks of a team", {"team": str})
async def team_tasks(args: dict[str, str]) -> dict[str, object]:
    return {"content": [{"type": "text", "text": f"tasks of {args['team']}: (from the tracker)"}]}


def make_options(model: str) -> ClaudeAgentOptions:
    tasks = create_sdk_mcp_server(name="tasks", version="1.0.0", tools=[team_tasks])
    return ClaudeAgentOptions(
        model=model,
        # "Only these tools": but an allow-list pre-approves, it removes nothing.
        allowed_tools=["mcp__tasks__team_tasks", "Read", "Grep"],
        mcp_servers={"tasks": tasks},
        cwd=".",  # the project folder, docs/planning included
        system_prompt="You answer questions about the team's work.",
    )


async def answer(question: str) -> str:
    try:
        parts = [str(m) async for m in query(prompt=question, options=make_options(PRIMARY_MODEL))]
    except Exception:
        # The tool server failed to start: quietly try the cheaper model instead.
        parts = [str(m) async for m in query(prompt=question, options=make_options(BACKUP_MODEL))]
    return "\n".join(parts)

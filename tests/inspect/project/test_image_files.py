"""inspect_files: agent configuration collected from an image, judged against its workdir."""

from __future__ import annotations

from agentguard.engine.project import inspect_files
from agentguard.findings import Confidence, Fix, Location, Severity
from agentguard.inspect.facts import ProjectFile
from agentguard.rules.agent_workdir import AgentWorkdirIsProject

LAYER = "image:sha256:" + "ab" * 32


def test_cwd_equal_to_the_image_workdir_is_the_project() -> None:
    files = [
        ProjectFile(
            "/app/agent.py",
            b"from claude_agent_sdk import ClaudeAgentOptions\n"
            b'O = ClaudeAgentOptions(tools=["Read"], cwd="/app", setting_sources=[])\n',
            origin=LAYER,
        ),
        ProjectFile("/app/CLAUDE.md", b"# plan", origin=LAYER),
        ProjectFile("/srv/other/CLAUDE.md", b"# not under the workdir", origin=LAYER),
    ]
    result = inspect_files(files, workdir="/app")
    workdir = [f for f in result.findings if f.rule_id == "AG210"]
    assert workdir == [
        AgentWorkdirIsProject.finding(
            "claude-agent-sdk agent works in the project: `cwd` = '/app' (the image's working "
            "directory is /app). Read, Grep and Glob need no permission there. The project "
            "holds /app/CLAUDE.md.",
            locations=[Location(path="/app/agent.py", line=2, note="ClaudeAgentOptions(...)")],
            fix=Fix(
                "Give the agent a dedicated working directory that holds only the task's "
                "inputs (not the checkout, not the image's project folder).",
                snippet='cwd="/srv/agent/work"',
            ),
            evidence={
                "engine": "claude-agent-sdk",
                "cwd": "`cwd` = '/app' (the image's working directory is /app)",
                "project_markers": ["/app/CLAUDE.md"],
            },
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
        ).with_subject("claude-agent-sdk ClaudeAgentOptions(...) at /app/agent.py:2")
    ]
    assert result.facts["agent_configs"] == [
        {
            "engine": "claude-agent-sdk",
            "path": "/app/agent.py",
            "line": 2,
            "label": "ClaudeAgentOptions(...)",
            "options": {"cwd": "/app", "setting_sources": [], "tools": ["Read"]},
            "ambiguous": False,
            "ambiguity": None,
            "open_ended": None,
        }
    ]


def test_user_settings_in_the_image() -> None:
    files = [
        ProjectFile(
            "/root/.claude/settings.json",
            b'{"permissions": {"allow": ["Bash"], "defaultMode": "bypassPermissions"}}',
            origin=LAYER,
        )
    ]
    result = inspect_files(files, workdir="/app")
    assert [(f.rule_id, f.message) for f in result.findings] == [
        (
            "AG301",
            "user settings pre-approve the shell in `permissions.allow`: Bash: any command "
            "runs without asking.",
        ),
        (
            "AG304",
            "user settings allow Bash without asking and deny nothing: every other built-in "
            "tool (Bash, Write, WebFetch, ...) is still live (in a session they still ask "
            "first; a headless run with bypass does not).",
        ),
        ("AG305", 'user settings set "defaultMode": "bypassPermissions".'),
    ]

"""The changes a person applies: dependency caps from a real lock (uv against a local index
of real wheels), the install line, the hardened agent options and Claude settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentguard.harden.deps_changes import CONSTRAINTS_FILE, INSTALL_FILE
from agentguard.harden.sdk_changes import declared_tools, hardened_settings, plan_configs
from agentguard.inspect.project.claude_settings import parse_settings
from agentguard.inspect.targets import Kind
from tests.harden.support import harden_folder, inspect_report, rule_ids
from tests.lock.helpers import run_json, write_project


@pytest.mark.usefixtures("isolated_cache")
def test_each_spanning_edge_of_the_agent_stack_is_capped_at_the_locked_major(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    (project / "requirements.txt").write_text("claude-agent-sdk>=0.2\n")
    code, _report, _ = run_json("lock", str(project), "--index-url", agent_index["url"])
    assert code == 1  # the lock itself reports the mcp edge (AG101)

    result = harden_folder(project, tmp_path / "out")
    out = tmp_path / "out"
    assert (out / CONSTRAINTS_FILE).read_text() == (
        "# agentguard harden: each line caps a dependency at one major (the locked one,\n"
        "# unless later releases of its parent hold it lower: then as upstream does).\n"
        "# Add them to your requirements (pyproject dependencies or requirements.in), or\n"
        "# pass this file with pip's -c, then re-run `agentguard lock`.\n"
        "# required as claude-agent-sdk>=0.2; locked 0.2.95\n"
        "claude-agent-sdk>=0.2,<0.3\n"
        "# claude-agent-sdk declares mcp>=1.0 (admits 1, 2); locked 2.1.0. Later releases of "
        "claude-agent-sdk (0.2.100) declare mcp<2: capped below the locked major, as upstream "
        "does. Or mcp>=2.0,<3 once your code is tested against it\n"
        "mcp>=1.0,<2\n"
        "# 1 more edges of the long tail span majors (low severity, not capped here): "
        "`agentguard lock` lists them\n"
    )
    fixed = {(c.finding.rule_id, c.how) for c in result.plan.claims}
    assert fixed == {
        (
            "AG101",
            "capped as later releases of claude-agent-sdk declare: mcp>=1.0,<2 (or the locked "
            "major, mcp>=2.0,<3, once tested against it: a choice)",
        ),
        ("AG121", "capped: claude-agent-sdk>=0.2,<0.3"),
    }
    # the caps are requirements the inspector reads: no SDK left without an upper bound
    after = inspect_report(out, Kind.PROJECT)
    assert after.complete
    assert "AG121" not in rule_ids(after)
    assert (out / INSTALL_FILE).read_text().splitlines()[-2:] == [
        "COPY requirements.lock /tmp/agentguard/requirements.lock",
        "RUN python -m pip install --no-cache-dir --no-deps --require-hashes "
        "-r /tmp/agentguard/requirements.lock",
    ]


def test_without_a_lock_the_caps_are_skipped_and_the_report_says_why(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    result = harden_folder(project, tmp_path / "out")
    lock = [s for s in result.report.sources if s.kind == "lockfile"]
    assert [(s.status.value, s.reason) for s in lock] == [
        (
            "skipped",
            "no lock: the constraint lines come from the lock's graph; run `agentguard lock` "
            "first to get them",
        )
    ]
    assert not (tmp_path / "out" / CONSTRAINTS_FILE).exists()


PY_CONFIG = {
    "engine": "claude-agent-sdk",
    "path": "bot/reviewer.py",
    "line": 9,
    "label": "ClaudeAgentOptions(...)",
    "options": {"allowed_tools": ["Read", "mcp__tasks__list"], "cwd": {"path": "x"}},
}


def test_the_python_snippet_keeps_what_the_author_declared_and_removes_the_rest() -> None:
    changes = plan_configs([PY_CONFIG], workdir="/work", strict_mcp=True)
    assert list(changes.files) == ["agent/reviewer_hardened.py"]
    text = changes.files["agent/reviewer_hardened.py"]
    assert text.split('"""\n\n', 1)[1] == (
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        "\n"
        "HARDENED_OPTIONS = ClaudeAgentOptions(\n"
        '    tools=["Read"],\n'
        '    disallowed_tools=["Bash", "BashOutput", "KillShell", "KillBash", "Write", "Edit", '
        '"MultiEdit", "Glob", "Grep", "NotebookEdit", "LS", "WebFetch", "WebSearch", "Task", '
        '"TodoWrite"],\n'
        '    cwd="/work",\n'
        "    setting_sources=[],\n"
        '    permission_mode="default",\n'
        '    extra_args={"strict-mcp-config": None},  # MCP servers only from mcp_servers=\n'
        ")\n"
    )
    (change,) = changes.configs
    assert change.kept == ("Read",)
    assert sorted(change.fixes) == ["AG210", "AG211", "AG301", "AG303", "AG304", "AG305"]
    assert change.choices[0].startswith(
        "Tools kept: Read (`allowed_tools` declared Read, mcp__tasks__list). Which tools the "
        "agent needs depends on its task; the snippet does not guess:"
    )


@pytest.mark.parametrize(
    ("options", "kept"),
    [
        ({}, ((), "no tools were declared, so none is kept")),
        ({"tools": ["Read", "Edit"]}, (("Read", "Edit"), "`tools` declared Read, Edit")),
        ({"tools": "Read Edit"}, (("Read", "Edit"), "`tools` declared Read, Edit")),
        ({"tools": {"unknown": "a parameter"}}, ((), "`tools` could not be read, so none is kept")),
        ({"allowed_tools": ["mcp__x__y"]}, ((), "`allowed_tools` declared mcp__x__y")),
    ],
)
def test_which_built_in_tools_a_configuration_keeps(
    options: dict[str, Any], kept: tuple[tuple[str, ...], str]
) -> None:
    assert declared_tools(options) == kept


def test_claude_settings_deny_every_built_in_not_allowed() -> None:
    original = parse_settings(
        ".claude/settings.json",
        json.dumps(
            {
                "permissions": {
                    "allow": ["Bash(npm run test:*)", "Read(./src/**)"],
                    "defaultMode": "bypassPermissions",
                }
            }
        ).encode(),
    )
    text, kept = hardened_settings([original])
    assert kept == ("Bash", "Read")
    assert json.loads(text) == {
        "permissions": {
            "allow": ["Bash(npm run test:*)", "Read(./src/**)"],
            "deny": [
                "BashOutput", "KillShell", "KillBash", "Write", "Edit", "MultiEdit", "Glob",
                "Grep", "NotebookEdit", "LS", "WebFetch", "WebSearch", "Task", "TodoWrite",
            ],
            "defaultMode": "default",
            "disableBypassPermissionsMode": "disable",
        }
    }  # fmt: skip


def test_other_frameworks_get_the_choices_not_a_guess(tmp_path: Path) -> None:
    from tests.harden.support import FIXTURES

    result = harden_folder(FIXTURES / "AG301" / "fail" / "smolagents-local", tmp_path / "out")
    assert result.plan.claims == []
    (left,) = result.plan.opens
    assert (left.finding.rule_id, left.why, left.todo) == (
        "AG301",
        "what to do with this tool depends on what the agent must do",
        "Pick one of the choices.",
    )
    assert left.choices == (
        "ToolCallingAgent instead of CodeAgent when the task needs no model-written code",
        'a remote executor: CodeAgent(..., executor_type="e2b" or "modal") -- code leaves this '
        "machine for that service",
        'executor_type="docker" needs access to an engine: give it a separate rootless one, '
        "never this container's host socket",
    )
    summary = (tmp_path / "out" / "SUMMARY.md").read_text()
    assert "  - choice: ToolCallingAgent instead of CodeAgent" in summary

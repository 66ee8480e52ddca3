"""The agent plan read from an image config: what each command line starts, what is collected."""

from __future__ import annotations

from agentguard.inspect.image.agentlaunch import Launch, read_launch
from agentguard.inspect.image.agentplan import CONTENT, ENTRY, AgentPlan, always_kind, plan_for
from agentguard.inspect.image.agentshell import exec_lines

PATH = {"PATH": "/usr/local/bin:/usr/bin"}


def test_python_script_relative_to_the_workdir() -> None:
    assert read_launch(["python3", "-u", "bot.py", "--x"], PATH, "/app") == Launch(
        "script",
        ("python3", "-u", "bot.py", "--x"),
        target="/app/bot.py",
        interpreter="python",
        candidates=("/app/bot.py",),
    )


def test_launchers_before_the_program_are_passed_over() -> None:
    got = read_launch(["tini", "--", "env", "A=1", "gosu", "agent", "node", "srv/x.mjs"], PATH, "/")
    assert got == Launch(
        "script",
        ("node", "srv/x.mjs"),
        target="/srv/x.mjs",
        interpreter="node",
        candidates=("/srv/x.mjs",),
    )


def test_python_m_and_c() -> None:
    assert read_launch(["python", "-X", "dev", "-m", "pkg.cli"], PATH, "/") == Launch(
        "module", ("python", "-X", "dev", "-m", "pkg.cli"), target="pkg.cli", interpreter="python"
    )
    assert read_launch(["python3", "-c", "import x"], PATH, "/") == Launch(
        "inline", ("python3", "-c", "import x"), interpreter="python", inline="import x"
    )


def test_agent_clis_bare_and_through_npx() -> None:
    assert read_launch(["claude", "-p", "hi"], PATH, "/") == Launch(
        "cli",
        ("claude", "-p", "hi"),
        target="claude",
        interpreter="claude",
        candidates=("/usr/local/bin/claude", "/usr/bin/claude"),
    )
    assert read_launch(["npx", "-y", "@openai/codex@1.2.3", "exec"], PATH, "/") == Launch(
        "cli",
        ("npx", "-y", "@openai/codex@1.2.3", "exec"),
        target="@openai/codex",
        interpreter="codex",
    )


def test_shell_forms() -> None:
    assert read_launch(["/bin/sh", "-c", "exec claude -p x"], PATH, "/") == Launch(
        "inline",
        ("/bin/sh", "-c", "exec claude -p x"),
        interpreter="shell",
        inline="exec claude -p x",
    )
    assert read_launch(["bash", "start.sh"], PATH, "/opt") == Launch(
        "script",
        ("bash", "start.sh"),
        target="/opt/start.sh",
        interpreter="shell",
        candidates=("/opt/start.sh",),
    )


def test_a_bare_program_is_looked_up_in_path() -> None:
    assert read_launch(["start-agent"], PATH, "/") == Launch(
        "program",
        ("start-agent",),
        target="start-agent",
        candidates=("/usr/local/bin/start-agent", "/usr/bin/start-agent"),
    )


def test_plan_collects_the_script_tree_and_module_packages() -> None:
    plan = plan_for(
        None, ["python3", "/opt/agent/bot.py"], [("CLAUDE_CONFIG_DIR", "/cfg/")], "work"
    )
    assert plan.exact == frozenset({"opt/agent/bot.py", "cfg/settings.json", "cfg/.claude.json"})
    assert plan.trees == ("opt/agent/",)
    assert plan.speculative is False
    assert plan.wants("opt/agent/lib/util.py") == "code"
    assert plan.wants("opt/agent/node_modules/x/index.js") is None
    assert plan.wants("opt/agent/README.md") is None
    module = plan_for(["python", "-m", "triage.main"], None, [], "srv")
    assert module.modules == (
        "/dist-packages/triage.py",
        "/dist-packages/triage/",
        "/site-packages/triage.py",
        "/site-packages/triage/",
    )
    assert module.wants("usr/lib/python3/site-packages/triage/agent.py") == "code"
    assert module.wants("usr/lib/python3/site-packages/other/agent.py") is None
    assert module.wants("srv/triage/agent.py") == "code"


def test_a_wrapper_makes_the_plan_speculative_outside_system_folders() -> None:
    plan = plan_for(["/usr/local/bin/start"], None, [], "")
    assert plan.speculative is True
    assert plan.wants("srv/agent/main.mjs") == "speculative"
    assert plan.wants("usr/lib/node/x.js") is None
    assert plan.wants("srv/agent/node_modules/dep/index.js") is None
    assert AgentPlan().covers(plan) is False
    assert plan.covers(AgentPlan()) is True


def test_always_collected_names() -> None:
    assert always_kind("etc/claude-code/managed-settings.json") == CONTENT
    assert always_kind("etc/claude-code/managed-settings.d/10-team.json") == CONTENT
    assert always_kind("etc/claude-code/managed-settings.d/.hidden.json") is None
    assert always_kind("etc/claude-code/managed-mcp.json") == CONTENT
    assert always_kind("etc/passwd") == CONTENT
    assert always_kind("home/bot/.claude.json") == CONTENT
    assert always_kind("home/bot/.claude/settings.json") == CONTENT
    assert always_kind("app/node_modules/x/.claude/settings.json") is None
    assert (
        always_kind("usr/local/lib/node_modules/@anthropic-ai/claude-code/package.json") == CONTENT
    )
    assert always_kind("usr/local/lib/node_modules/left-pad/package.json") is None
    assert always_kind("usr/local/bin/claude") == ENTRY
    assert always_kind("app/node_modules/.bin/gemini") == ENTRY
    assert always_kind("opt/claude") is None
    assert always_kind("root/.codex/config.toml") == CONTENT
    assert always_kind("home/a/.gemini/settings.json") == CONTENT
    assert always_kind("app/pyproject/config.toml") is None


def test_exec_lines_of_a_wrapper() -> None:
    text = (
        '#!/bin/sh\nset -e\nexport A=1\nif [ -n "$X" ]; then\n  echo hi\nfi\n'
        'exec node /srv/main.mjs "$@"\n'
    )
    assert exec_lines(text) == [(7, ("node", "/srv/main.mjs", "$@"))]
    assert exec_lines("#!/bin/sh\ncd /app\npython3 run.py\n") == [(3, ("python3", "run.py"))]


def test_project_runners_are_passed_over() -> None:
    assert read_launch(["uv", "run", "--frozen", "--with", "x", "bot.py"], PATH, "/app") == Launch(
        "script",
        ("python", "bot.py"),
        target="/app/bot.py",
        interpreter="python",
        candidates=("/app/bot.py",),
    )
    assert read_launch(["poetry", "run", "python", "-m", "agent"], PATH, "/") == Launch(
        "module", ("python", "-m", "agent"), target="agent", interpreter="python"
    )

"""Mitigations lower the grade and say so: openai-agents' approval step and hosted tools,
the Claude SDK's `can_use_tool`, PreToolUse hooks and a sandbox passed in `settings=`.
Modelled on openai-agents-python's examples and claude-agent-sdk-python's hooks example."""

from __future__ import annotations

from agentguard.engine.project import scan_files
from agentguard.findings import Confidence, Fix, Location, Severity
from agentguard.inspect.facts import ProjectFile
from agentguard.rules.agent_tools import BuiltinShellTools
from tests.inspect.project.support import FIXTURES


def _findings(source: str, rule: str = "AG301") -> list[tuple[str, str, str]]:
    result = scan_files([ProjectFile("agent.py", source.encode())], workdir=None)
    return [(f.rule_id, f.severity.value, f.message) for f in result.findings if f.rule_id == rule]


def test_shell_tool_with_needs_approval_is_medium_and_says_why() -> None:
    source = (
        "from agents import Agent, ShellTool\n"
        "Agent(name='a', tools=[ShellTool(executor=run, needs_approval=True)])\n"
    )
    result = scan_files([ProjectFile("agent.py", source.encode())], workdir=None)
    assert [f for f in result.findings if f.rule_id == "AG301"] == [
        BuiltinShellTools.finding(
            "openai-agents ShellTool: runs shell commands the model writes. Mitigated: "
            "`needs_approval=True`: each call waits for a human's approval.",
            locations=[Location(path="agent.py", line=2, note="openai-agents")],
            fix=Fix(
                "Remove the tool, or give it an executor that runs commands in a disposable "
                "container without the project or credentials."
            ),
            evidence={
                "framework": "openai-agents",
                "tool": "ShellTool",
                "category": "shell",
                "mitigated_by": "`needs_approval=True`: each call waits for a human's approval",
            },
            severity=Severity.MEDIUM,
            confidence=Confidence.HIGH,
        )
    ]


def test_unguarded_shell_tool_stays_high() -> None:
    source = (
        "from agents import Agent, ShellTool\nAgent(name='a', tools=[ShellTool(executor=run)])\n"
    )
    assert _findings(source) == [
        ("AG301", "high", "openai-agents ShellTool: runs shell commands the model writes.")
    ]


def test_hosted_code_interpreter_is_low() -> None:
    source = (
        "from agents import Agent, CodeInterpreterTool\n"
        "Agent(name='a', tools=[CodeInterpreterTool(tool_config={'type': 'code_interpreter'})])\n"
    )
    assert _findings(source) == [
        (
            "AG301",
            "low",
            "openai-agents CodeInterpreterTool: runs code the model writes (hosted container). "
            "Mitigated: a hosted tool: it runs on the provider's side, not in this process or "
            "its container.",
        )
    ]


HOOKS = """
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher


async def check_bash_command(input_data, tool_use_id, context):
    command = input_data["tool_input"].get("command", "")
    for pattern in ["foo.sh"]:
        if pattern in command:
            return {
                "hookSpecificOutput": {
                    "hookEventName": "PreToolUse",
                    "permissionDecision": "deny",
                    "permissionDecisionReason": f"Command contains invalid pattern: {pattern}",
                }
            }
    return {}


opts = ClaudeAgentOptions(
    hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[check_bash_command])]},
)
"""


def test_pre_tool_use_hook_on_bash_lowers_the_shell_finding() -> None:
    (shell,) = _findings(HOOKS)
    assert shell[:2] == ("AG301", "medium")
    assert shell[2].endswith(
        "Mitigated: a PreToolUse hook (matcher Bash) sees each call (`check_bash_command` "
        "returns permissionDecision: 'deny' (line 9))."
    ), shell[2]
    # the hook matches Bash only: the web tools are not seen by it
    assert _findings(HOOKS, "AG303")[0][1] == "medium"
    assert "Mitigated" not in _findings(HOOKS, "AG303")[0][2]


def test_can_use_tool_lowers_tools_not_pre_approved_only() -> None:
    source = (
        "from claude_agent_sdk import ClaudeAgentOptions, PermissionResultDeny\n"
        "async def decide(name, args, ctx):\n"
        "    if name == 'Bash':\n"
        "        return PermissionResultDeny(message='no shell')\n"
        "a = ClaudeAgentOptions(can_use_tool=decide)\n"
        "b = ClaudeAgentOptions(can_use_tool=decide, allowed_tools=['Bash'])\n"
    )
    found = _findings(source)
    assert [(r, s) for r, s, _ in found] == [("AG301", "medium"), ("AG301", "high")]
    assert found[0][2].endswith(
        "Mitigated: `can_use_tool` decides each call (`decide` returns "
        "PermissionResultDeny(...) (line 4))."
    )


def test_sandbox_in_settings_json_is_the_sandbox() -> None:
    source = (
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        'ClaudeAgentOptions(settings=\'{"sandbox": {"enabled": true}}\')\n'
    )
    (shell,) = _findings(source)
    assert shell[1] == "medium"
    assert "Commands run in the engine's sandbox (`sandbox.enabled` in `settings=`)." in shell[2]


WORKFLOW = """\
jobs:
  review:
    runs-on: ubuntu-latest
    steps:
      - uses: anthropics/claude-code-action@v1
        with:
          claude_args: '--allowedTools "LS,Read"'
      - uses: anthropics/claude-code-action@v1
        with:
          claude_args: '--allowedTools "Bash"'
"""


def test_a_workflow_run_denies_what_is_not_pre_approved() -> None:
    # claude-code-action's test-base-action.yml / test-structured-output.yml
    result = scan_files(
        [ProjectFile(".github/workflows/review.yml", WORKFLOW.encode())], workdir=None
    )
    got = [
        (f.rule_id, f.locations[0].line, f.severity.value)
        for f in result.findings
        if f.rule_id in ("AG301", "AG304")
    ]
    assert got == [
        ("AG301", 7, "medium"),  # Bash is not pre-approved: a call is denied
        ("AG304", 7, "low"),
        ("AG301", 10, "high"),  # Bash is pre-approved: it runs
        ("AG304", 10, "low"),
    ]
    (gated,) = [f for f in result.findings if f.rule_id == "AG301" and f.severity.value == "medium"]
    assert gated.message.endswith(
        "Mitigated: a workflow run: nobody answers a permission prompt, so a call that is not "
        "pre-approved is denied."
    )


def test_a_workflow_that_pre_approves_only_some_commands_is_medium() -> None:
    # claude-agent-sdk-python's claude.yml pre-approves commands such as these (and
    # `Bash(python -m pytest:*)`, which runs any test file: next test)
    workflow = WORKFLOW.replace('"LS,Read"', '"Bash(git diff:*),Bash(git add:*)"')
    result = scan_files(
        [ProjectFile(".github/workflows/review.yml", workflow.encode())], workdir=None
    )
    (shell, _) = [f for f in result.findings if f.rule_id == "AG301"]
    assert (shell.locations[0].line, shell.severity.value) == (7, "medium")
    assert shell.message.endswith(
        "Mitigated: a workflow run: only calls matching Bash(git add:*), Bash(git diff:*) "
        "are pre-approved, and nobody answers a permission prompt for any other."
    )


def test_a_workflow_that_pre_approves_an_interpreter_is_not_mitigated() -> None:
    # browser-use's claude.yml: `Bash(python:*)` is no restricted shell; nor is pytest,
    # which runs the test files of the checkout it is given
    workflow = WORKFLOW.replace('"LS,Read"', '"Bash(python -m pytest:*),Bash(git add:*)"')
    result = scan_files(
        [ProjectFile(".github/workflows/review.yml", workflow.encode())], workdir=None
    )
    (shell, _) = [f for f in result.findings if f.rule_id == "AG301"]
    assert (shell.locations[0].line, shell.severity.value) == (7, "high")
    assert "Mitigated" not in shell.message
    assert shell.message.endswith(
        "Pre-approved without a prompt, these run any code: `Bash(python -m pytest:*)`: "
        "pytest runs every test file and `conftest.py` it is pointed at (a pull request's "
        "own, in its checkout), and `-p` loads any installed module."
    )


def test_an_expression_inside_a_pre_approval_keeps_it_as_written() -> None:
    # pydantic-ai's bots.yml: `Bash(gh api repos/${{ github.repository }}/...:*)` is still
    # one restricted command, not an unknown that opens the whole configuration
    workflow = WORKFLOW.replace(
        "'--allowedTools \"LS,Read\"'",
        "'--allowedTools \"Bash(gh api repos/${{ github.repository }}/pulls:*),Bash(git diff:*)\"'",
    )
    result = scan_files(
        [ProjectFile(".github/workflows/review.yml", workflow.encode())], workdir=None
    )
    (shell, _) = [f for f in result.findings if f.rule_id == "AG301"]
    assert (shell.locations[0].line, shell.severity.value) == (7, "medium")
    assert shell.message.endswith(
        "Mitigated: a workflow run: only calls matching Bash(gh api repos/${{ "
        "github.repository }}/pulls:*), Bash(git diff:*) are pre-approved, and nobody answers "
        "a permission prompt for any other."
    )


# Issue 23 item 11: a callback or a hook is a gate only if some path can deny.
STAMPS = """
from claude_agent_sdk import ClaudeAgentOptions, HookMatcher, PermissionResultAllow
from elsewhere import external_gate


async def approve(input_data, tool_use_id, context):
    return {}


lam = ClaudeAgentOptions(tools=["Bash"], can_use_tool=lambda *a: PermissionResultAllow())
hook = ClaudeAgentOptions(
    tools=["Bash"], hooks={"PreToolUse": [HookMatcher(matcher="Bash", hooks=[approve])]}
)
imported = ClaudeAgentOptions(tools=["Bash"], can_use_tool=external_gate)
"""


def test_rubber_stamps_are_no_mitigation_and_unknown_is_not_credited() -> None:
    base = "claude-agent-sdk configuration leaves the built-in shell tools live: Bash"
    assert _findings(STAMPS) == [
        (
            "AG301",
            "high",
            f"{base} (`tools` = ['Bash']). Not mitigated: `can_use_tool` never denies a call "
            "(`lambda *a: PermissionResultAllow()` always allows): a rubber stamp, not a gate.",
        ),
        (
            "AG301",
            "high",
            f"{base} (`tools` = ['Bash']). Not mitigated: a PreToolUse hook (matcher Bash) "
            "never denies a call (`approve` allows on every path): a rubber stamp, not a gate.",
        ),
        (
            "AG301",
            "high",
            f"{base} (`tools` = ['Bash']). Not mitigated: whether `can_use_tool` can deny a "
            "call is unknown (`external_gate` is imported from elsewhere.external_gate): not "
            "counted as a gate.",
        ),
    ]


BRANCHES = """
import dataclasses
from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow, PermissionResultDeny


def mixed(name, args, ctx):
    if name == "Read":
        return PermissionResultAllow()
    return PermissionResultDeny(message="ask first")


def raising(name, args, ctx):
    if name != "Read":
        raise PermissionError(name)
    return PermissionResultAllow()


def computed(name, args, ctx):
    return policy.decide(name, args)


def stamp(name, args, ctx):
    return PermissionResultAllow(updated_input=args)


a = ClaudeAgentOptions(tools=["Bash"], can_use_tool=mixed)
b = ClaudeAgentOptions(tools=["Bash"], can_use_tool=raising)
c = ClaudeAgentOptions(tools=["Bash"], can_use_tool=computed)
d = dataclasses.replace(a, can_use_tool=stamp)
e = ClaudeAgentOptions(tools=["Bash"], can_use_tool=mixed)
e.can_use_tool = stamp
f = ClaudeAgentOptions(tools=["Bash"], can_use_tool=mixed if FLAG else stamp)
"""


def test_a_path_that_denies_raises_or_computes_is_a_gate_and_one_branch_of_stamp_is_not() -> None:
    found = [(s, m.split("Bash (`tools` = ['Bash']). ", 1)[1]) for _, s, m in _findings(BRANCHES)]
    assert sorted(found) == sorted(
        [
            (
                "medium",
                "Mitigated: `can_use_tool` decides each call (`mixed` returns "
                "PermissionResultDeny(...) (line 9)).",
            ),
            ("medium", "Mitigated: `can_use_tool` decides each call (`raising` raises (line 14))."),
            (
                "medium",
                "Mitigated: `can_use_tool` decides each call (`computed` returns a decision "
                "computed at run time (`policy.decide(name, args)`) (line 19)).",
            ),
            (
                "high",
                "Not mitigated: `can_use_tool` never denies a call (`stamp` allows on every path): "
                "a rubber stamp, not a gate.",
            ),
            (
                "high",
                "Not mitigated: `can_use_tool` never denies a call (`stamp` allows on every path): "
                "a rubber stamp, not a gate.",
            ),
            (
                "high",
                "Not mitigated: `can_use_tool` never denies a call (`stamp` allows on every path "
                "(on one branch)): a rubber stamp, not a gate.",
            ),
        ]
    )


DECOYS = """
from claude_agent_sdk import ClaudeAgentOptions, PermissionResultAllow, PermissionResultDeny

Deny = PermissionResultAllow


def dead_branch(name, args, ctx):
    if False:
        return PermissionResultDeny(message="never")
    return PermissionResultAllow()


def after_return(name, args, ctx):
    return PermissionResultAllow()
    raise PermissionError(name)


def alias(name, args, ctx):
    return Deny()


def helper():
    return PermissionResultAllow()


def through_a_helper(name, args, ctx):
    return helper()


def constant_test(name, args, ctx):
    return PermissionResultDeny(message="x") if 0 else PermissionResultAllow()


def built(input_data, tool_use_id, context):
    return dict(decision="approve") or {}


a = ClaudeAgentOptions(tools=["Bash"], can_use_tool=dead_branch)
b = ClaudeAgentOptions(tools=["Bash"], can_use_tool=after_return)
c = ClaudeAgentOptions(tools=["Bash"], can_use_tool=alias)
d = ClaudeAgentOptions(tools=["Bash"], can_use_tool=through_a_helper)
e = ClaudeAgentOptions(tools=["Bash"], can_use_tool=constant_test)
f = ClaudeAgentOptions(tools=["Bash"], can_use_tool=built)
"""


def test_a_deny_in_dead_code_or_an_allow_under_another_name_is_still_a_stamp() -> None:
    found = _findings(DECOYS)
    assert [s for _, s, _ in found] == ["high"] * 6, found
    assert all("a rubber stamp, not a gate" in m for _, _, m in found), found


# claude-agent-sdk-python, examples/setting_sources.py (example_disable_all), with the
# allow-list a reviewer bot adds: the default permission mode, no callback, no settings
SDK_NO_SOURCES = """\
from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient

options = ClaudeAgentOptions(
    allowed_tools=["Read", "Grep"],
    setting_sources=[],
    cwd="/srv/agent/work",
)
client = ClaudeSDKClient(options=options)
"""
SDK_DENIED = (
    "an SDK run with no `can_use_tool` and `setting_sources` empty (no settings file can "
    "pre-approve): nobody answers a permission prompt, so a call that is not pre-approved "
    "is denied"
)


def test_sdk_options_that_no_one_can_approve_are_credited_as_the_workflow_run_is() -> None:
    shell = _findings(SDK_NO_SOURCES)
    assert [(r, s) for r, s, _ in shell] == [("AG301", "medium")]
    assert shell[0][2].endswith(f" Mitigated: {SDK_DENIED}.")
    assert [(r, s) for r, s, _ in _findings(SDK_NO_SOURCES, "AG303")] == [("AG303", "low")]
    allow = _findings(SDK_NO_SOURCES, "AG304")
    assert [(r, s) for r, s, _ in allow] == [("AG304", "low")]
    assert "so a call of the others is denied" in allow[0][2]


def test_what_can_approve_a_call_leaves_the_sdk_options_unmitigated() -> None:
    for change in (
        ("setting_sources=[],", ""),  # the SDK's own default: depends on its version
        ("setting_sources=[],", 'setting_sources=["project"],'),  # the repo's settings
        ("setting_sources=[],", "setting_sources=[], hooks=HOOKS,"),  # a hook may allow
        ("setting_sources=[],", 'setting_sources=[], permission_prompt_tool_name="mcp__a__b",'),
        ("setting_sources=[],", 'setting_sources=[], permission_mode="acceptEdits",'),
        ("setting_sources=[],", "setting_sources=[], **EXTRA,"),  # anything may be set
    ):
        source = SDK_NO_SOURCES.replace(*change)
        for rule in ("AG301", "AG303", "AG304"):
            for _, _, message in _findings(source, rule):
                assert "an SDK run" not in message and "nobody answers" not in message, (
                    change,
                    rule,
                )
        # (with options spread in, `tools` may be among them: AG304 is not said at all)
        assert [s for _, s, _ in _findings(source, "AG304")] in (["high"], []), change


def test_awf_container_whose_allow_list_is_not_read_keeps_the_shell_high() -> None:
    # a gh-aw step whose awf config is rewritten from a variable the file does not show
    step = (
        "jobs:\n  detection:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n"
        "          printf '%s\\n' \"$CONFIG\" > /tmp/awf.json\n"
        "          awf --config /tmp/awf.json --env-all -- /bin/bash -c "
        "'claude --print --allowed-tools '\\''Bash'\\'''\n"
    )
    result = scan_files([ProjectFile(".github/workflows/a.lock.yml", step.encode())], workdir=None)
    subject = "claude CLI claude command line at .github/workflows/a.lock.yml:7"
    assert [f for f in result.findings if f.rule_id == "AG301"] == [
        BuiltinShellTools.finding(
            "claude CLI configuration leaves the built-in shell tools live: Bash, BashOutput, "
            "KillShell, KillBash (`--tools` is not set, so the whole built-in set is live). "
            "`--allowedTools` only pre-approves; it removes nothing. Pre-approved without a "
            "prompt, these run any code: `Bash`: the whole shell. Commands run inside the awf "
            "container (line 7), but its network allow-list is not known (line 6 writes the "
            "config with content not read): not counted as a mitigation.",
            locations=[
                Location(path=".github/workflows/a.lock.yml", line=7, note="claude command line")
            ],
            fix=Fix(
                "Pre-approve only commands whose arguments cannot start other code "
                "(`Bash(git diff:*)`, `Bash(uv run ruff:*)`), not an interpreter, a runner or "
                "a wildcard, and give the agent no secret its task does not need. Remove "
                "them: list only the tools the agent needs in `--tools`, or add these to "
                "`--disallowedTools`.",
                snippet='--disallowedTools "Bash BashOutput KillShell KillBash"',
            ),
            evidence={
                "engine": "claude CLI",
                "category": "shell",
                "tools": ["Bash", "BashOutput", "KillShell", "KillBash"],
                "reason": "`--tools` is not set, so the whole built-in set is live",
                "ambiguity": None,
                "arbitrary_code": ["Bash"],
                "not_mitigated_by": [
                    "the awf container (line 7): its network allow-list is not known (line 6 "
                    "writes the config with content not read)"
                ],
            },
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
        ).with_subject(subject)
    ]


def test_a_harness_of_another_package_or_another_script_is_not_joined() -> None:
    base = FIXTURES / "AG301" / "fail" / "harness-container-credited" / "python/packages/agbench"
    harness = (base / "src/agbench/run_cmd.py").read_bytes()
    scenario = (base / "benchmarks/HumanEval/Templates/AgentChat/scenario.py").read_bytes()
    alone = "autogen LocalCommandLineCodeExecutor: runs model-written code as local processes, no container."
    for files in (
        # the harness in its own package, the scenario in another
        [
            ("a/pyproject.toml", b"[project]\nname='a'\n"),
            ("a/run_cmd.py", harness),
            ("b/pyproject.toml", b"[project]\nname='b'\n"),
            ("b/scenario.py", scenario),
        ],
        # one package, but the harness runs another script
        [
            ("pyproject.toml", b"[project]\nname='a'\n"),
            ("run_cmd.py", harness.replace(b"scenario.py", b"main.py")),
            ("t/scenario.py", scenario),
        ],
    ):
        result = scan_files([ProjectFile(p, d) for p, d in files], workdir=None)
        assert [(f.severity, f.message) for f in result.findings if f.rule_id == "AG301"] == [
            (Severity.HIGH, alone)
        ]

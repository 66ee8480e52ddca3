"""Codex and Gemini CLI policies, agent actions in CI: the readers and the rules over their
facts (pure functions; the fixture folders under tests/fixtures cover the whole scan)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.findings import Confidence, Severity
from agentguard.inspect.project.engine_cli import engine_cli_policies
from agentguard.inspect.project.engine_model import CODEX, GEMINI, EnginePolicy
from agentguard.inspect.project.engine_settings import parse_codex_config, parse_gemini_settings
from agentguard.inspect.project.lined import DocumentError
from agentguard.inspect.project.model import Option, Unknown
from agentguard.inspect.project.workflows import action_policies, read_workflow
from agentguard.rules.agent_actions import check_action_step
from agentguard.rules.agent_engines import check_engine_policy, with_project_defaults


def _one(text: str, path: str = "run.sh") -> EnginePolicy:
    got = engine_cli_policies(path, text.encode())
    assert len(got) == 1, got
    return got[0]


@pytest.mark.parametrize(
    ("line", "sandbox", "approval"),
    [
        ("codex --yolo 'fix it'", "danger-full-access", "never"),
        ("codex --full-auto 'fix it'", "workspace-write", "on-request"),
        ("codex -s danger-full-access -a never", "danger-full-access", "never"),
        ("codex --sandbox=read-only", "read-only", None),
        ('codex -c sandbox_mode="danger-full-access" exec x', "danger-full-access", None),
        ("npx -y @openai/codex@0.64.0 --ask-for-approval untrusted", None, "untrusted"),
        ("/usr/local/bin/gemini --yolo -p hi", None, "yolo"),
        ("gemini --approval-mode=auto_edit --sandbox=false", "false", "auto_edit"),
        ("npx @google/gemini-cli --no-sandbox --approval-mode yolo", "false", "yolo"),
    ],
)
def test_command_line_flags_are_read_as_the_engines_define_them(
    line: str, sandbox: str | None, approval: str | None
) -> None:
    p = _one(f"#!/bin/sh\n{line}\n")
    assert (p.sandbox.value if p.sandbox else None) == sandbox
    assert (p.approval.value if p.approval else None) == approval
    assert p.line == 2


@pytest.mark.parametrize(
    ("text", "engine", "sandbox", "approval"),
    [
        # a Dockerfile CMD / compose command in exec form whose one argument is a script
        (
            'CMD ["sh", "-c", "codex exec --dangerously-bypass-approvals-and-sandbox $TASK"]',
            CODEX,
            "danger-full-access",
            "never",
        ),
        # JSON escapes inside the script are undone before it is split
        (
            'command: ["/bin/sh", "-lc", "cd /w && codex -s danger-full-access -a never '
            'exec \\"fix it\\""]',
            CODEX,
            "danger-full-access",
            "never",
        ),
        ("  run: bash -c 'gemini --yolo -p \"triage\"'", GEMINI, None, "yolo"),
        (
            'command: sh -c "npx -y @google/gemini-cli@0.9.0 --approval-mode yolo"',
            GEMINI,
            None,
            "yolo",
        ),
        ('run: "codex --full-auto exec task"', CODEX, "workspace-write", "on-request"),
        # the script's flags end with it: `--yolo` after it belongs to no engine
        ('RUN sh -c "codex --sandbox read-only exec x" && echo --yolo', CODEX, "read-only", None),
    ],
)
def test_an_engine_inside_a_shell_c_script_is_read(
    text: str, engine: str, sandbox: str | None, approval: str | None
) -> None:
    p = _one(text + "\n", "Dockerfile")
    assert (p.engine, p.line) == (engine, 1)
    assert (p.sandbox.value if p.sandbox else None) == sandbox
    assert (p.approval.value if p.approval else None) == approval


def test_a_quoted_prompt_that_names_an_engine_is_not_a_command() -> None:
    text = b'echo "codex --yolo is off here"\ngemini -p "ask codex --yolo"\nsh -c "echo codex"\n'
    assert engine_cli_policies("run.sh", text) == []


def test_a_command_line_without_policy_flags_says_nothing() -> None:
    assert engine_cli_policies("x.sh", b"codex --version\ngemini --help\n# codex --yolo\n") == []


def test_a_sandbox_filled_in_at_run_time_is_unknown_and_never_high() -> None:
    p = _one('codex --sandbox "$MODE" exec task\n')
    assert isinstance(p.sandbox and p.sandbox.value, Unknown)
    [finding] = check_engine_policy(p)
    assert (finding.rule_id, finding.severity, finding.confidence) == (
        "AG301",
        Severity.MEDIUM,
        Confidence.LOW,
    )


def test_codex_exec_never_asks_so_full_access_alone_bypasses() -> None:
    [finding] = check_engine_policy(_one("codex exec --sandbox danger-full-access task\n"))
    assert finding.rule_id == "AG305"
    assert "`codex exec` never asks" in finding.message


def test_codex_profiles_inherit_the_top_level_and_override_it() -> None:
    data = b"""profile = "ci"
approval_policy = "never"
[profiles.ci]
sandbox_mode = "danger-full-access"
[profiles.safe]
sandbox_mode = "workspace-write"
[mcp_servers.docs]
command = "npx"
args = ["-y", "docs-mcp"]
"""
    policies, servers = parse_codex_config(".codex/config.toml", data)
    by_label = {p.label: p for p in policies}
    assert set(by_label) == {
        "config.toml",
        "config.toml profile ci (the default)",
        "config.toml profile safe",
    }
    ci = by_label["config.toml profile ci (the default)"]
    assert (ci.sandbox and ci.sandbox.value, ci.approval and ci.approval.value, ci.line) == (
        "danger-full-access",
        "never",
        3,
    )
    assert [f.rule_id for f in check_engine_policy(ci)] == ["AG305"]
    assert check_engine_policy(by_label["config.toml profile safe"]) == []
    assert [(s.name, s.command, s.args, s.line) for s in servers] == [
        ("docs", "npx", ("-y", "docs-mcp"), 7)
    ]


def test_a_broken_config_is_an_error_with_its_line() -> None:
    with pytest.raises(DocumentError) as exc:
        parse_codex_config("c.toml", b'sandbox_mode = "x"\napproval_policy = \n')
    assert exc.value.line == 2
    with pytest.raises(DocumentError):
        parse_gemini_settings(".gemini/settings.json", b'{"tools": ')


def test_gemini_settings_read_both_layouts() -> None:
    new, _ = parse_gemini_settings("s.json", b'{"tools": {"exclude": ["run_shell_command"]}}')
    old, _ = parse_gemini_settings(
        "s.json", b'{"excludeTools": ["ShellTool"], "sandbox": "docker"}'
    )
    assert new.shell_removed is not None and new.shell_removed.value is True
    assert old.shell_removed is not None and old.sandbox is not None
    assert old.sandbox.value == "docker"


def test_gemini_http_servers_are_not_launches() -> None:
    _, servers = parse_gemini_settings(
        "s.json",
        b'{"mcpServers": {"a": {"httpUrl": "https://x"}, "b": {"command": "uvx", "args": ["srv"]}}}',
    )
    assert [(s.name, s.transport) for s in servers] == [("a", "http"), ("b", "stdio")]


def test_yolo_severity_follows_the_sandbox_and_the_tools() -> None:
    def sev(**kw: Option) -> Severity:
        p = EnginePolicy(GEMINI, "w.yml", 1, "x", approval=Option("yolo", 1, "--yolo"), **kw)
        [f] = check_engine_policy(p)
        return f.severity

    assert sev() is Severity.MEDIUM  # YOLO turns the sandbox on by default
    assert sev(sandbox=Option("false", 1, "sandbox")) is Severity.HIGH
    assert sev(sandbox=Option("docker", 1, "sandbox")) is Severity.LOW
    assert sev(shell_removed=Option(("run_shell_command(echo)",), 1, "core")) is Severity.LOW
    disabled = EnginePolicy(
        GEMINI,
        "w.yml",
        1,
        "x",
        approval=Option("yolo", 1, "--yolo"),
        yolo_disabled=Option(True, 1, "security.disableYoloMode"),
    )
    assert check_engine_policy(disabled) == []


def test_project_files_that_disagree_leave_the_sandbox_unknown() -> None:
    def settings(value: str) -> EnginePolicy:
        return EnginePolicy(
            GEMINI,
            f"{value}/.gemini/settings.json",
            1,
            "settings.json",
            sandbox=Option(value, 2, f"tools.sandbox: {value}"),
        )

    cli = EnginePolicy(
        GEMINI, "run.sh", 3, "gemini command line", approval=Option("yolo", 3, "--yolo")
    )
    one = with_project_defaults([settings("false"), cli])
    assert one[1].sandbox is not None and one[1].sandbox.value == "false"
    two = with_project_defaults([settings("false"), settings("docker"), cli])
    assert two[2].sandbox is not None and isinstance(two[2].sandbox.value, Unknown)


WORKFLOW = b"""name: codex
on: [pull_request_target]
jobs:
  run:
    runs-on: ubuntu-latest
    steps:
      - uses: openai/codex-action@v1
        with:
          codex-args: '["--sandbox", "danger-full-access"]'
          safety-strategy: unsafe
"""


def test_codex_action_inputs_feed_the_same_rules() -> None:
    [step] = read_workflow(".github/workflows/codex.yml", WORKFLOW)
    assert (step.action, step.ref, step.line, step.triggers) == (
        "openai/codex-action",
        "v1",
        7,
        ("pull_request_target",),
    )
    [policy], servers = action_policies(step)
    assert servers == []
    assert policy.engine == CODEX and policy.sandbox is not None
    assert policy.sandbox.value == "danger-full-access"
    assert [f.rule_id for f in check_engine_policy(policy)] == ["AG305"]
    found = {f.rule_id: f for f in check_action_step(step)}
    assert set(found) == {"AG330", "AG401"}
    assert found["AG401"].severity is Severity.HIGH
    assert found["AG401"].locations[0].line == 10


def test_a_workflow_that_is_not_yaml_is_an_error() -> None:
    with pytest.raises(DocumentError):
        read_workflow(".github/workflows/x.yml", b"jobs: [\n")


def test_a_workflow_secret_expression_in_an_mcp_env_is_not_a_literal() -> None:
    """Found in google-gemini/gemini-cli's issue-dedup workflow: `${{ secrets.KEY }}` in the
    `settings` input's MCP server env is filled in by the runner, not a leaked key."""
    from agentguard.findings import Location
    from agentguard.rules.secret_values import check_env_secrets

    env = [("GEMINI_API_KEY", "${{ secrets.GEMINI_API_KEY }}"), ("API_TOKEN", "abc123abc123")]
    found = check_env_secrets(env, subject="s", location=Location(path="w.yml"), set_where="env")
    assert [f.evidence["variable"] for f in found] == ["API_TOKEN"]


def test_an_openhands_config_is_read_only_when_it_holds_openhands_tables() -> None:
    from agentguard.inspect.project.openhands_config import parse_openhands_config
    from agentguard.inspect.project.walk import classify

    assert classify("config.toml") == "openhands-config"
    assert classify(".cargo/config.toml") != "openhands-config"
    assert classify(".codex/config.toml") == "codex-config"
    # a site generator's config.toml with a [params] runtime key: not OpenHands'
    assert (
        parse_openhands_config("config.toml", b'title = "x"\n[params]\nruntime = "local"\n') is None
    )
    # a [core] table of another tool, without OpenHands' keys: not OpenHands' either
    assert parse_openhands_config("config.toml", b"[core]\nname = 'x'\n") is None
    with pytest.raises(DocumentError) as err:
        parse_openhands_config("config.toml", b'[core]\nruntime = "local\n')
    assert err.value.line == 2
    got = parse_openhands_config("config.toml", b'[core]\nruntime = "local"\n')
    assert got is not None
    [policy], servers = got
    assert (policy.sandbox, policy.approval, servers) == (
        Option("local", 2, '[core] runtime = "local"'),
        None,
        [],
    )
    [finding] = check_engine_policy(policy)
    assert (finding.rule_id, finding.severity) == ("AG305", Severity.HIGH)


def test_an_openhands_runtime_set_at_run_time_is_unknown_and_never_high() -> None:
    policy = EnginePolicy(
        engine="OpenHands",
        path="config.toml",
        line=1,
        label="OpenHands config.toml",
        sandbox=Option(Unknown("${RUNTIME}", "set at run time"), 2, "runtime"),
    )
    [finding] = check_engine_policy(policy)
    assert (finding.rule_id, finding.severity, finding.confidence) == (
        "AG301",
        Severity.MEDIUM,
        Confidence.LOW,
    )


def test_openhands_sandbox_volumes_are_the_sandbox_s_mounts(tmp_path: Path) -> None:
    from tests.inspect.project.support import finding_json, scan

    # config.template.toml's `volumes` format; the project at /workspace is what it is for
    (tmp_path / "config.toml").write_text(
        '[core]\nruntime = "docker"\n\n[sandbox]\nvolumes = "/var/run/docker.sock:'
        '/var/run/docker.sock,~/.aws:/home/openhands/.aws:ro,/srv/project:/workspace:rw"\n'
    )
    findings, _ = scan(tmp_path)
    subject = "the OpenHands sandbox ([sandbox] volumes in config.toml)"
    where = [{"path": "config.toml", "line": 5, "note": "OpenHands config.toml"}]
    assert [finding_json(f) for f in findings] == [
        {
            "rule_id": "AG203",
            "title": "Docker socket mounted or present",
            "severity": "critical",
            "confidence": "high",
            "message": f"{subject} mounts the Docker socket (/var/run/docker.sock -> "
            "/var/run/docker.sock): whoever reaches it is root on the host.",
            "locations": where,
            "evidence": {
                "subject": subject,
                "source": "/var/run/docker.sock",
                "destination": "/var/run/docker.sock",
                "read_write": True,
                "via_folder": False,
            },
            "fix": {
                "description": "Remove the mount of /var/run/docker.sock; if the agent must run "
                "containers, give it a separate rootless engine or an API proxy that allows only "
                "the calls it needs.",
                "safe": False,
            },
            "ambiguous": False,
            "suppressed": None,
        },
        {
            "rule_id": "AG204",
            "title": "Sensitive host path mounted",
            "severity": "high",
            "confidence": "high",
            "message": f"{subject} mounts ~/.aws (credentials folder .aws) at "
            "/home/openhands/.aws (read-only).",
            "locations": where,
            "evidence": {
                "subject": subject,
                "source": "~/.aws",
                "destination": "/home/openhands/.aws",
                "reason": "credentials folder .aws",
                "read_write": False,
            },
            "fix": {
                "description": "Remove the mount of ~/.aws; mount only the folder the agent "
                "needs, read-only, and pass credentials at run time as narrowly scoped secrets.",
                "safe": False,
            },
            "ambiguous": False,
            "suppressed": None,
        },
    ]


def test_a_quote_inside_bash_c_splits_as_the_shell_does() -> None:
    """The `'\\''` idiom (a quote inside `bash -c '...'`): the words the shell reads, one
    reader for claude, codex and gemini command lines (the codex/gemini reader split it into
    `it` and `s` and lost the flags after it)."""
    p = _one("bash -c 'codex exec \"it'\\''s done\" --sandbox danger-full-access -a never'\n")
    assert (p.sandbox and p.sandbox.value, p.approval and p.approval.value) == (
        "danger-full-access",
        "never",
    )
    g = _one("sh -c 'gemini -p \"don'\\''t ask\" --yolo'\n")
    assert (g.engine, g.approval and g.approval.value) == (GEMINI, "yolo")

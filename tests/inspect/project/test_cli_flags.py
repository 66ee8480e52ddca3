"""`claude` command lines in Dockerfiles, scripts, package.json and code."""

from __future__ import annotations

import textwrap

from agentguard.inspect.project.cli_flags import cli_configs


def _read(path: str, text: str) -> list[tuple[int, dict[str, object]]]:
    data = textwrap.dedent(text).encode()
    return [(c.line, {k: o.value for k, o in c.options.items()}) for c in cli_configs(path, data)]


def test_dockerfile_json_cmd_and_shell_continuations() -> None:
    dockerfile = """
        FROM node:22-slim
        # claude --dangerously-skip-permissions  (a comment: ignored)
        RUN npm install -g @anthropic-ai/claude-code@2.0.14 && claude --version
        CMD ["claude", "-p", "triage", "--allowedTools", "Read,Grep",
             "--permission-mode", "bypassPermissions"]
        ENTRYPOINT claude -p go \\
            --tools "Read Edit" --add-dir /data --fallback-model claude-haiku-4-5
    """
    assert _read("Dockerfile", dockerfile) == [
        (5, {"allowed_tools": ("Read", "Grep"), "permission_mode": "bypassPermissions"}),
        (
            7,
            {
                "tools": ("Read", "Edit"),
                "add_dirs": ("/data",),
                "fallback_model": "claude-haiku-4-5",
            },
        ),
    ]


def test_npx_package_python_argv_and_yaml() -> None:
    assert _read(
        "ci.yml",
        """
        steps:
          - run: npx -y @anthropic-ai/claude-code -p "review" --dangerously-skip-permissions
        """,
    ) == [(3, {"permission_mode": "bypassPermissions"})]
    assert _read(
        "run.py",
        """
        import subprocess
        subprocess.run([
            "claude", "-p", prompt,
            "--disallowedTools", "Bash",
        ])
        """,
    ) == [(4, {"disallowed_tools": ("Bash",)})]


def test_mentions_that_are_not_invocations() -> None:
    assert _read("notes.sh", "echo 'use claude-code'\nclaude --version\nclaude mcp list\n") == []


def test_claude_code_action_claude_args_block() -> None:
    workflow = """
        jobs:
          review:
            steps:
              - uses: anthropics/claude-code-action@v1
                with:
                  anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}
                  claude_args: |
                    --allowedTools "Bash(npm test),Read"
                    --model claude-sonnet-4-5
              - run: echo done
    """
    assert _read(".github/workflows/review.yml", workflow) == [
        (8, {"allowed_tools": ("Bash(npm test)", "Read"), "model": "claude-sonnet-4-5"})
    ]


def test_quoted_one_line_claude_args_are_read() -> None:
    # claude-code-action's examples/ci-failure-auto-fix.yml and test-base-action.yml
    workflow = """
        - uses: anthropics/claude-code-action@v1
          with:
            claude_args: "--allowedTools 'Edit,Read,Bash(git:*),Bash(npx:*)'"
        - uses: anthropics/claude-code-action@v1
          with:
            claude_args: '--allowedTools "LS,Read"'
    """
    assert _read(".github/workflows/fix.yml", workflow) == [
        (4, {"allowed_tools": ("Edit", "Read", "Bash(git:*)", "Bash(npx:*)")}),
        (7, {"allowed_tools": ("LS", "Read")}),
    ]


def test_a_step_without_claude_args_is_an_agent_with_the_defaults() -> None:
    from agentguard.inspect.project.action_steps import action_steps

    workflow = textwrap.dedent(
        """
        steps:
          - uses: actions/checkout@v6
          - name: Run Claude Code
            id: claude
            uses: anthropics/claude-code-action@v1
            with:
              anthropic_api_key: ${{ secrets.ANTHROPIC_API_KEY }}
              # claude_args: |
              #   --allowedTools "Bash(npm install)"
          - uses: anthropics/claude-code-action@v1
            with:
              claude_args: '--tools "Read"'
        """
    ).encode()
    configs = action_steps(".github/workflows/claude.yml", workflow)
    assert [(c.line, c.label, dict(c.options)) for c in configs] == [
        (6, "claude-code-action step (no claude_args: the action's defaults)", {})
    ]

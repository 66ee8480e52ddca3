"""The replacement lines for `codex`/`gemini` command lines and agent-action inputs: each
one exactly, and each one read back by the inspector yields no finding."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentguard.findings import Severity
from agentguard.harden.engine_lines import rewrite_action_line, rewrite_lines
from agentguard.harden.engines import replaced
from agentguard.inspect.project.engine_cli import engine_cli_policies
from agentguard.inspect.targets import Kind
from agentguard.rules.agent_engines import check_engine_policy
from tests.harden.support import harden_folder, inspect_report

LINES = [
    # (engine, headless, line, replacement)
    (
        "codex",
        False,
        "codex --dangerously-bypass-approvals-and-sandbox",
        "codex --sandbox workspace-write --ask-for-approval on-request",
    ),
    ("codex", True, "codex exec --yolo 'fix it'", "codex exec --sandbox workspace-write 'fix it'"),
    (
        "codex",
        False,
        "npx -y @openai/codex@0.64.0 -s danger-full-access -a never",
        "npx -y @openai/codex@0.64.0 -s workspace-write -a on-request",
    ),
    (
        "codex",
        False,
        'codex -c sandbox_mode="danger-full-access" -c approval_policy=never',
        'codex -c sandbox_mode="workspace-write" -c approval_policy=on-request',
    ),
    ("codex", True, "codex exec --sandbox=$MODE task", "codex exec --sandbox=workspace-write task"),
    (
        "codex",
        False,
        'ENTRYPOINT ["codex", "--dangerously-bypass-approvals-and-sandbox"]',
        'ENTRYPOINT ["codex", "--sandbox", "workspace-write", "--ask-for-approval", "on-request"]',
    ),
    ("codex", False, "codex -s read-only -a never", "codex -s read-only -a on-request"),
    ("gemini", False, 'exec gemini --yolo --prompt "$TASK"', 'exec gemini --prompt "$TASK"'),
    (
        "gemini",
        False,
        "npx -y @google/gemini-cli -y --sandbox=false -p hi",
        "npx -y @google/gemini-cli --sandbox -p hi",
    ),
    ("gemini", False, "gemini --approval-mode=yolo -p x", "gemini --approval-mode=default -p x"),
    ("gemini", False, 'command: ["gemini", "--yolo", "-p", "x"]', 'command: ["gemini", "-p", "x"]'),
    (
        "gemini",
        False,
        "gemini --allowed-tools run_shell_command,read_file --no-sandbox -p x",
        "gemini --allowed-tools read_file --sandbox -p x",
    ),
]


@pytest.mark.parametrize(("engine", "headless", "line", "expected"), LINES)
def test_the_replacement_line(engine: str, headless: bool, line: str, expected: str) -> None:
    assert rewrite_lines([line], engine, headless=headless) == [expected]
    before = engine_cli_policies("run.sh", line.encode())
    after = engine_cli_policies("run.sh", expected.encode())
    assert [f for p in after for f in check_engine_policy(p)] == []
    if "read-only" not in line:  # (that one is only an approval change)
        assert [f for p in before for f in check_engine_policy(p)] != []


def test_a_continued_line_is_changed_line_by_line() -> None:
    lines = ["codex exec \\", "  --dangerously-bypass-approvals-and-sandbox \\", '  "task"']
    assert rewrite_lines(lines, "codex", headless=True) == [
        "codex exec \\",
        "  --sandbox workspace-write \\",
        '  "task"',
    ]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("          sandbox: danger-full-access", "          sandbox: workspace-write"),
        ("          sandbox: 'danger-full-access'  # x", "          sandbox: workspace-write  # x"),
        ("          safety-strategy: unsafe", "          safety-strategy: drop-sudo"),
        (
            "          codex-args: --dangerously-bypass-approvals-and-sandbox --json",
            "          codex-args: --sandbox workspace-write --json",
        ),
        (
            '          codex-args: \'["--sandbox", "danger-full-access"]\'',
            '          codex-args: \'["--sandbox", "workspace-write"]\'',
        ),
        ("          prompt: hi", "          prompt: hi"),
    ],
)
def test_codex_action_inputs(line: str, expected: str) -> None:
    assert rewrite_action_line(line) == expected


WORKFLOW = """\
name: Agents
on:
  issues:
jobs:
  triage:
    runs-on: ubuntu-latest
    steps:
      - uses: google-github-actions/run-gemini-cli@0123456789abcdef0123456789abcdef01234567
        with:
          prompt: Triage this issue.
          settings: |-
            {
              "tools": {
                "core": ["run_shell_command", "read_file", "run_shell_command(gh issue view)"]
              }
            }
  summary:
    runs-on: ubuntu-latest
    steps:
      - uses: google-github-actions/run-gemini-cli@0123456789abcdef0123456789abcdef01234567
        with:
          prompt: Summarise.
  codex:
    runs-on: ubuntu-latest
    steps:
      - uses: openai/codex-action@0123456789abcdef0123456789abcdef01234567
        with:
          safety-strategy: unsafe
          codex-args: --dangerously-bypass-approvals-and-sandbox --json
"""

SECTION = """\
## Codex and Gemini CLI changes

- `.gemini/settings.json`: use it instead of `.gemini/settings.json` (tools.sandbox on, \
tools.allowed without the bare run_shell_command; other keys kept)
  - .gemini/settings.json: security.disableYoloMode is not set, since a run-gemini-cli step \
without a `settings` input reads this file and always runs `gemini --yolo`
- `.github/workflows/agents.yml:11` (google-github-actions/run-gemini-cli inputs): replace
  ```
  settings: |-
    {
      "tools": {
        "core": ["run_shell_command", "read_file", "run_shell_command(gh issue view)"]
      }
    }
  ```
  with
  ```
  settings: |-
    {
      "tools": {
        "core": [
          "read_file",
          "run_shell_command(gh issue view)"
        ],
        "sandbox": true
      }
    }
  ```
- `.github/workflows/agents.yml:21` (google-github-actions/run-gemini-cli inputs): add after that line
  ```
  settings: |-
    {
      "tools": {
        "sandbox": true,
        "core": [
          "read_file",
          "read_many_files",
          "list_directory",
          "glob",
          "grep_search"
        ]
      }
    }
  ```
- `.github/workflows/agents.yml:28` (job codex): replace
  ```
  safety-strategy: unsafe
  ```
  with
  ```
  safety-strategy: drop-sudo
  ```
- `.github/workflows/agents.yml:29` (openai/codex-action inputs): replace
  ```
  codex-args: --dangerously-bypass-approvals-and-sandbox --json
  ```
  with
  ```
  codex-args: --sandbox workspace-write --json
  ```
"""


def test_agent_actions_in_a_workflow(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".github" / "workflows").mkdir(parents=True)
    (project / ".github" / "workflows" / "agents.yml").write_text(WORKFLOW)
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text(
        '{"tools": {"allowed": ["run_shell_command"]}}'
    )
    out = tmp_path / "out"
    result = harden_folder(project, out)

    # a run-gemini-cli step without `settings` reads the project's file with `--yolo`
    assert (out / ".gemini" / "settings.json").read_text().split("\n", 3)[3] == (
        '{\n  "tools": {\n    "allowed": [],\n    "sandbox": true\n  }\n}\n'
    )
    summary = (out / "SUMMARY.md").read_text()
    assert summary[summary.index("## Codex") : summary.index("\n## Dependencies")] == SECTION
    assert sorted((c.finding.rule_id, c.finding.locations[0].line) for c in result.plan.claims) == [
        ("AG301", 1),
        ("AG305", 29),
        ("AG401", 28),
    ]
    assert sorted(
        (o.finding.rule_id, o.finding.locations[0].line, o.why) for o in result.plan.opens
    ) == [
        (
            "AG305",
            line,
            "the action always runs `gemini --yolo`: YOLO mode cannot be switched off there",
        )
        for line in (8, 20)
    ]

    # the replacements applied: the claimed findings are gone, the run-gemini-cli ones are low
    applied = tmp_path / "applied"
    shutil.copytree(project, applied)
    workflow = applied / ".github" / "workflows" / "agents.yml"
    for change in sorted(result.plan.engines.lines.values(), key=lambda c: -c.first):
        workflow.write_text(replaced(workflow.read_text(), change))
    shutil.copyfile(out / ".gemini" / "settings.json", applied / ".gemini" / "settings.json")
    after = inspect_report(applied, Kind.PROJECT)
    assert after.complete
    assert sorted((f.rule_id, f.severity) for f in after.findings) == [
        ("AG305", Severity.LOW),
        ("AG305", Severity.LOW),
    ]


def test_a_step_without_inputs_gets_its_with(tmp_path: Path) -> None:
    project = tmp_path / "p"
    (project / ".github" / "workflows").mkdir(parents=True)
    workflow = (
        "on: issues\n"
        "jobs:\n"
        "  triage:\n"
        "    runs-on: ubuntu-latest\n"
        "    steps:\n"
        "      - name: Gemini\n"
        "        uses: google-github-actions/run-gemini-cli@0123456789abcdef0123456789abcdef01234567\n"
        "      - run: echo done\n"
    )
    (project / ".github" / "workflows" / "g.yml").write_text(workflow)
    result = harden_folder(project, tmp_path / "out")

    [change] = result.plan.engines.lines.values()
    assert replaced(workflow, change) == workflow.replace(
        "01234567\n",
        "01234567\n"
        "        with:\n"
        "          settings: |-\n"
        "            {\n"
        '              "tools": {\n'
        '                "sandbox": true,\n'
        '                "core": [\n'
        '                  "read_file",\n'
        '                  "read_many_files",\n'
        '                  "list_directory",\n'
        '                  "glob",\n'
        '                  "grep_search"\n'
        "                ]\n"
        "              }\n"
        "            }\n",
    )

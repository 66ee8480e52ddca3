"""Local composite actions (modelled on PrefectHQ/fastmcp's .github/actions/): their steps
are read like a workflow job's, and the agent inside is configured by each caller's
``with:`` (GitHub expressions over ``inputs`` evaluated)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.engine.project import scan_files
from agentguard.findings import SourceStatus
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.gha_expr import UNKNOWN, evaluate
from tests.inspect.project.support import FIXTURES, scan

INSTALLS = FIXTURES / "AG331/fail/composite-action-installs"
CALLERS = FIXTURES / "AG301/fail/composite-action-callers"
ACTION = ".github/actions/setup-agent/action.yml"


def _summary(case: Path, rules: tuple[str, ...]) -> list[tuple[str, str, str, int | None, str]]:
    findings, sources = scan(case)
    assert all(s.status is SourceStatus.OK for s in sources), sources
    return sorted(
        (f.rule_id, f.severity.value, f.locations[0].path, f.locations[0].line, f.message)
        for f in findings
        if f.rule_id in rules
    )


def test_a_composite_actions_run_steps_are_read_like_a_jobs() -> None:
    assert _summary(INSTALLS, ("AG120", "AG130", "AG330")) == [
        (
            "AG120",
            "high",
            ACTION,
            17,
            "`pip install -r requirements.txt` runs in a CI job that runs the agent without a "
            "lock, constraints or --require-hashes (requirements not locked (requirements.txt)): "
            "the dependency tree is resolved anew on every run. It installs the agent stack "
            "(anthropic, httpx); pinning the SDK alone does not pin its dependencies.",
        ),
        (
            "AG130",
            "medium",
            ACTION,
            12,
            f"`{ACTION}` installs the agent CLI @anthropic-ai/claude-code globally on every CI "
            "run (no version): what runs is whatever is current then.",
        ),
        (
            "AG330",
            "medium",
            ACTION,
            18,
            "anthropics/claude-code-action@v1 in job composite action Set up and run the agent "
            "runs whatever that ref points to when the job starts.",
        ),
    ]


def test_each_caller_configures_the_agent_inside() -> None:
    findings, _ = scan(CALLERS)
    shell = {f.locations[0].note: (f.severity.value, f.evidence.get("arbitrary_code"))
             for f in findings if f.rule_id == "AG301"}  # fmt: skip
    assert shell == {
        "anthropics/claude-code-action step of composite action Run Claude, called from "
        ".github/workflows/marvin-comment-on-pr.yml:16 (job comment)": ("high", ["Bash(*)"]),
        "anthropics/claude-code-action step of composite action Run Claude, called from "
        ".github/workflows/marvin-review.yml:12 (job review)": ("medium", None),
    }


def test_a_composite_nobody_calls_is_read_with_its_defaults() -> None:
    data = (CALLERS / ".github/actions/run-claude/action.yml").read_bytes()
    result = scan_files([ProjectFile(".github/actions/run-claude/action.yml", data)], workdir=None)
    (shell,) = [f for f in result.findings if f.rule_id == "AG301"]
    assert shell.locations[0].note == (
        "anthropics/claude-code-action step of composite action Run Claude (its inputs' "
        "defaults: no caller in this project)"
    )
    assert shell.severity.value == "medium"  # allowed-tools defaults to "": nothing pre-approved


@pytest.mark.parametrize(
    ("expr", "inputs", "value"),
    [
        ("inputs.model", {"model": "opus"}, "opus"),
        ("inputs['model']", {"model": "opus"}, "opus"),
        ("inputs.model", {}, UNKNOWN),
        ("secrets.TOKEN", {}, UNKNOWN),
        ("github.event.comment.body", {}, UNKNOWN),
        ("inputs.a != '' && format('--allowedTools ''{0}''', inputs.a) || ''", {"a": "Bash(*)"},
         "--allowedTools 'Bash(*)'"),
        ("inputs.a != '' && format('--allowedTools ''{0}''', inputs.a) || ''", {"a": ""}, ""),
        ("inputs.a != '' && secrets.X || 'none'", {"a": ""}, "none"),
        ("inputs.a != '' && secrets.X || 'none'", {"a": "x"}, UNKNOWN),
        ("contains(inputs.a, 'bash')", {"a": "Bash(*)"}, True),
        ("format('{{0}} {0}', 'x')", {}, "{0} x"),
        ("((((", {}, UNKNOWN),
    ],
)  # fmt: skip
def test_expressions_over_known_inputs(expr: str, inputs: dict[str, str], value: object) -> None:
    assert evaluate(expr, inputs) == value


def test_an_agent_cli_version_from_a_variable_is_said_so_once_per_command() -> None:
    # google-github-actions/run-gemini-cli's action.yml: pnpm, else npm, of the input version
    action = (
        b"name: run\nruns:\n  using: composite\n  steps:\n    - shell: bash\n      run: |\n"
        b'        if [[ "${USE_PNPM}" == "true" ]]; then\n'
        b'          pnpm add --global @google/gemini-cli@"${VERSION_INPUT}"\n'
        b"        else\n"
        b'          npm install --global @google/gemini-cli@"${VERSION_INPUT}"\n'
        b"        fi\n"
    )
    result = scan_files([ProjectFile("action.yml", action)], workdir=None)
    assert [(f.locations[0].line, f.message) for f in result.findings if f.rule_id == "AG130"] == [
        (
            line,
            '`action.yml` installs the agent CLI @google/gemini-cli@"${VERSION_INPUT}" globally '
            'on every CI run (a version set at run time ("${VERSION_INPUT}")): what runs is '
            "whatever is current then.",
        )
        for line in (8, 10)
    ]

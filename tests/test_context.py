"""Findings carry the context of their path (production, example, test, docs); test code is
graded at most low by default, the configuration changes the ceiling and the paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.config import load_config
from agentguard.context import path_context
from agentguard.findings import Confidence, Finding, Location, Severity
from agentguard.policy import apply_policy
from agentguard.rules.agent_tools import PermissionChecksBypassed
from agentguard.rules.hardening import RunsAsRoot


@pytest.mark.parametrize(
    ("path", "context"),
    [
        ("src/agent.py", "production"),
        (".github/workflows/claude.yml", "production"),
        ("tests/test_transport.py", "test"),
        ("e2e-tests/test_error_results.py", "test"),
        ("pkg/agent_test.py", "test"),
        ("web/src/agent.spec.ts", "test"),
        ("Dockerfile.test", "test"),
        ("examples/mcp_calculator.py", "example"),
        ("docs/guide/agent.py", "docs"),
        ("docs/guide/setup.md", "docs"),
        ("README.md", "production"),  # a document found where it matters is not "docs"
        ("/app/tests/conftest.py", "test"),
    ],
)
def test_context_from_the_names_in_the_path(path: str, context: str) -> None:
    assert path_context(path) == context


def bypass(path: str) -> Finding:
    return PermissionChecksBypassed.finding(
        "claude-agent-sdk configuration bypasses permission checks.",
        locations=[Location(path=path, line=3)],
        fix="Keep the default permission mode.",
    )


def test_a_test_finding_is_graded_low_and_says_why(tmp_path: Path) -> None:
    applied = apply_policy([bypass("tests/test_a.py")], load_config(tmp_path), root=tmp_path)
    (f,) = applied.findings
    assert (f.context, f.severity) == ("test", Severity.LOW)
    assert f.message == (
        "claude-agent-sdk configuration bypasses permission checks. (In test code: reported at "
        "low, not high; `context-severity.test` in the configuration changes that.)"
    )
    assert f.to_json()["context"] == "test"
    assert applied.notes == (
        "context: 1 finding(s) in test code reported at most low (`context-severity.test` "
        "changes that)",
    )


def test_production_keeps_its_grade_and_an_example_is_at_most_medium(tmp_path: Path) -> None:
    applied = apply_policy(
        [bypass("agent.py"), bypass("examples/a.py")], load_config(tmp_path), root=tmp_path
    )
    assert [(f.context, f.severity) for f in applied.findings] == [
        ("production", Severity.HIGH),
        ("example", Severity.MEDIUM),
    ]


def test_the_configuration_sets_the_ceiling_and_the_paths(tmp_path: Path) -> None:
    (tmp_path / "agentguard.toml").write_text(
        'context = {test = ["qa/**"], production = ["tests/smoke/**"]}\n'
        'context-severity = {test = "medium"}\n'
    )
    config = load_config(tmp_path)
    applied = apply_policy(
        [bypass("qa/run.py"), bypass("tests/smoke/a.py"), bypass("tests/b.py")],
        config,
        root=tmp_path,
    )
    assert [(f.context, f.severity) for f in applied.findings] == [
        ("test", Severity.MEDIUM),
        ("production", Severity.HIGH),
        ("test", Severity.MEDIUM),
    ]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ('context = {tests = ["t/**"]}\n', "unknown context `context.tests`"),
        ("context = {test = 1}\n", "context.test must be a list of paths"),
        ('context-severity = {test = "worst"}\n', "context-severity.test: unknown severity"),
        ("exclude = 3\n", "exclude must be a list of paths"),
    ],
)
def test_bad_context_configuration_is_a_usage_error(
    tmp_path: Path, config: str, message: str
) -> None:
    from agentguard.config import ConfigError

    (tmp_path / "agentguard.toml").write_text(config)
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace(".", r"\.")):
        load_config(tmp_path)


def test_a_low_confidence_finding_is_never_high_or_critical() -> None:
    f = RunsAsRoot.finding(
        "may run as root",
        locations=[Location(path="Dockerfile")],
        fix="Set USER.",
        severity=Severity.CRITICAL,
        confidence=Confidence.LOW,
    )
    assert f.severity is Severity.MEDIUM

"""Agents a workflow starts with its own `run:` step (OpenHands' resolver): the job's
installs are AG120 (what the agent runs with, next to the model key and the repository
token), and AG331 when anyone can start the job. Fixtures under tests/fixtures/AG120/*/
workflow-* (the AG331 ones run with the other agent-rule fixtures)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.findings import SourceStatus
from agentguard.inspect.project.workflow_runs import read_agent_runs
from agentguard.inspect.project.yaml_lined import load_yaml
from tests.inspect.project.support import FIXTURES, assert_expected, scan

FAIL = sorted((FIXTURES / "AG120" / "fail").glob("workflow-*"))
PASS = sorted((FIXTURES / "AG120" / "pass").glob("workflow-*"))
RESOLVER = FIXTURES / "AG120/fail/workflow-openhands-resolver/.github/workflows"


@pytest.mark.parametrize("case", FAIL, ids=[c.name for c in FAIL])
def test_a_workflow_install_for_the_agent_reports_exactly_the_reviewed_findings(
    case: Path,
) -> None:
    found = assert_expected(case, "AG120")
    assert found
    _, sources = scan(case)
    assert all(s.status is SourceStatus.OK for s in sources), sources


@pytest.mark.parametrize("case", PASS, ids=[c.name for c in PASS])
def test_a_workflow_install_from_a_hashed_lock_is_not_reported(case: Path) -> None:
    findings, sources = scan(case)
    assert sources and all(s.status is SourceStatus.OK for s in sources)
    assert [f.to_json() for f in findings if f.rule_id == "AG120"] == []
    assert [f.to_json() for f in findings if f.rule_id == "AG331"] == []


def test_the_resolver_job_is_one_agent_started_by_maintainers_only() -> None:
    text = (RESOLVER / "openhands-resolver.yml").read_text()
    (run,) = read_agent_runs("w.yml", load_yaml(text))
    assert (run.engine, run.job, run.line, run.command) == (
        "OpenHands",
        "auto-fix",
        52,
        "cd /tmp && python -m openhands.resolver.resolve_issue",
    )
    assert run.triggers == ("issues", "issue_comment")
    assert run.open_events == ()  # labels need triage access; comments check author_association
    assert [(c.line, c.text) for c in run.installs] == [
        (27, "python -m pip install --upgrade pip"),
        (42, "pip install git+https://github.com/openhands/openhands.git"),
        (44, "pip install -r /tmp/requirements.txt"),
    ]
    ((name, written),) = run.written
    assert name == "/tmp/requirements.txt"
    assert [(r.name, r.specifier, r.raw) for r in written.requirements] == [
        ("openhands-ai", "", "openhands-ai==${OPENHANDS_VERSION}")
    ]


def test_a_workflow_that_only_names_the_agent_is_not_an_agent() -> None:
    text = (
        "on: push\njobs:\n  docs:\n    runs-on: x\n    steps:\n      - run: echo openhands docs\n"
    )
    assert read_agent_runs("w.yml", load_yaml(text)) == []


# Modelled on OpenHands' e2e-tests.yml (a cleanup step kills the server it started with
# `make run`) and ghcr-build.yml (a step builds the sandbox image with the runtime module):
# neither line starts the agent.
NOT_A_START = """\
on: [pull_request]
jobs:
  e2e-tests:
    runs-on: ubuntu-latest
    steps:
      - name: Cleanup
        if: always()
        run: |
          echo "Stopping OpenHands processes..."
          pkill -f "python -m openhands.server" || true
          pkill -f "make run" || true
  ghcr_build_runtime:
    runs-on: ubuntu-latest
    steps:
      - name: Create source distribution and Dockerfile
        run: poetry run python3 -m openhands.runtime.utils.runtime_build --build_folder containers/runtime
  resolve:
    runs-on: ubuntu-latest
    steps:
      - run: |
          cd /tmp && LOG_LEVEL=debug python -m openhands.resolver.resolve_issue --issue-number 7
"""


def test_a_process_kill_or_the_runtime_image_build_is_not_an_agent_start() -> None:
    runs = read_agent_runs("w.yml", load_yaml(NOT_A_START))
    assert [(r.job, r.line, r.command) for r in runs] == [
        (
            "resolve",
            21,
            "cd /tmp && LOG_LEVEL=debug python -m openhands.resolver.resolve_issue --issue-number 7",
        )
    ]

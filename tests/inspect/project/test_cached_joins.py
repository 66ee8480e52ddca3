"""What a re-run of ``inspect DIR`` takes from the content cache beyond each file's readers:
a workflow's ``claude`` command lines already joined to their jobs (the map's join parsed
every such workflow again on each run: 13 workflows, a sixth of a re-run of pydantic-ai),
and what a project's own lock holds (a 2 MB ``uv.lock`` was parsed again on each run, on
the path every re-run waits for). A cached run reports what a run without the cache does,
a workflow the join cannot parse is one failed source on every run, and a lock that
changes, or does not parse, is read (and failed) as its bytes say.

Modelled on the field: pydantic-ai (13 workflows, ``uv.lock`` of 2 MB) and
claude-code-action's test-base-action.yml.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project import workflow_jobs
from agentguard.inspect.project.files import process_file
from agentguard.lock import readers
from tests.inspect.containers.test_lock_reads import UV_LOCK
from tests.test_map_joins import BASE_ACTION_TEST

WORKFLOW = BASE_ACTION_TEST  # (claude-code-action's test-base-action.yml)
# an alias bomb (9^9 values) above a job that starts claude: the line readers find the
# command line, the job join's parse stops at its alias budget
BOMB = (
    "name: x\non: [pull_request_target]\nx0: &a0 [lol]\n"
    + "".join(f"x{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10))
    + "jobs:\n  r:\n    runs-on: ubuntu-latest\n    steps:\n"
    "      - run: claude -p hi --dangerously-skip-permissions\n"
)
PYPROJECT = '[project]\nname = "bot"\nversion = "0.1.0"\ndependencies = ["mcp>=1.10"]\n'


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _inspect(repo: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(
        app, ["inspect", str(repo), "--format", "json", "--no-project-config", *extra]
    )
    report = json.loads(result.stdout)
    return result.exit_code, {k: v for k, v in report.items() if k != "provenance"}


@pytest.fixture()
def workflow_parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each parse of a workflow by the job join (its text's length)."""
    seen: list[int] = []
    real = workflow_jobs.load_yaml

    def counting(text: str) -> Any:
        seen.append(len(text))
        return real(text)

    monkeypatch.setattr(workflow_jobs, "load_yaml", counting)
    return seen


@pytest.fixture()
def lock_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Each lock parsed by the project scan (its path)."""
    seen: list[str] = []
    real = readers.read_lock

    def counting(reader: Any, text: str, path: str) -> Any:
        seen.append(path)
        return real(reader, text, path)

    from agentguard.inspect.project import locks

    monkeypatch.setattr(locks, "read_lock", counting)
    return seen


def _runners(report: dict[str, Any]) -> list[tuple[int, list[tuple[str, str]]]]:
    return [
        (a["site"]["evidence"][0]["line"], [(r["kind"], r["name"]) for r in a["runners"]])
        for a in report["map"]["agents"]
    ]


def test_a_workflow_command_line_is_joined_to_its_job_with_the_files_facts() -> None:
    """The reader of the workflow joins the command line to its job itself: the outcome
    the cache keeps already says which job runs it."""
    out = process_file(".github/workflows/test-base-action.yml", "script", WORKFLOW.encode())
    got = [(c.line, c.called_from.job if c.called_from else None) for c in out.configs]
    assert got == [(16, "test-inline-prompt"), (20, "test-prompt-file")]
    assert all(c.called_from and c.called_from.triggers for c in out.configs)


def test_a_rerun_joins_from_the_cache_and_reports_the_same(
    cache_home: Path, workflow_parses: list[int]
) -> None:
    repo = _write(cache_home / "repo", {".github/workflows/test-base-action.yml": WORKFLOW})
    code, plain = _inspect(repo, "--no-cache")
    assert code == 1
    assert _runners(plain) == [
        (16, [("workflow-job", "test-inline-prompt")]),
        (20, [("workflow-job", "test-prompt-file")]),
    ]
    assert _inspect(repo) == (1, plain)  # cold: the reader joins, the pack keeps it
    workflow_parses.clear()
    assert _inspect(repo) == (1, plain)  # warm
    assert workflow_parses == []  # the workflow is not parsed again for the map's join


def test_a_workflow_the_join_cannot_parse_is_one_failed_source_on_every_run(
    cache_home: Path, workflow_parses: list[int]
) -> None:
    repo = _write(cache_home / "repo", {".github/workflows/r.yml": BOMB})
    runs = [_inspect(repo, "--no-cache"), _inspect(repo), _inspect(repo)]
    for code, report in runs:
        assert code == 3
        failed = [
            (s["name"], s["error_code"]) for s in report["sources"] if s["status"] == "failed"
        ]
        assert failed == [(".github/workflows/r.yml", "workflow-too-large")]
        (agent,) = report["map"]["agents"]
        assert agent["runners"] == []
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert workflow_parses  # (the warm run parsed it again: a failure is never cached away)


def _lock_source(report: dict[str, Any]) -> dict[str, Any]:
    (source,) = [s for s in report["sources"] if s["name"] == "uv.lock"]
    return source


def test_a_lock_is_parsed_once_per_content(cache_home: Path, lock_reads: list[str]) -> None:
    repo = _write(cache_home / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK})
    _, plain = _inspect(repo, "--no-cache")
    assert _lock_source(plain)["status"] == "ok"
    assert [f["evidence"].get("locked") for f in plain["findings"] if f["rule_id"] == "AG121"] == [
        ["1.28.1"]
    ]
    lock_reads.clear()
    assert _inspect(repo)[1] == plain  # cold: read, kept
    assert lock_reads == ["uv.lock"]
    lock_reads.clear()
    assert _inspect(repo)[1] == plain  # warm: not parsed again
    assert lock_reads == []
    (repo / "uv.lock").write_text(UV_LOCK.replace("1.28.1", "1.29.0"))  # the lock moves
    _, moved = _inspect(repo)
    assert lock_reads == ["uv.lock"]
    assert [f["evidence"].get("locked") for f in moved["findings"] if f["rule_id"] == "AG121"] == [
        ["1.29.0"]
    ]
    assert moved == _inspect(repo, "--no-cache")[1]


def test_a_lock_that_does_not_parse_fails_on_every_run(
    cache_home: Path, lock_reads: list[str]
) -> None:
    broken = UV_LOCK.replace('version = "1.28.1"', 'version = "1.28.1')
    repo = _write(cache_home / "repo", {"pyproject.toml": PYPROJECT, "uv.lock": broken})
    runs = [_inspect(repo, "--no-cache"), _inspect(repo), _inspect(repo)]
    for code, report in runs:
        assert code == 3
        assert _lock_source(report)["status"] == "failed"
        assert not [f for f in report["findings"] if f["evidence"].get("locked")]
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert lock_reads == ["uv.lock", "uv.lock"]  # the warm run: the same bytes, the same failure

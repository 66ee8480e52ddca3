"""A workflow built to make the job join multiply: many ``claude`` command lines in one
scalar that every job of a one-line flow mapping holds (no alias, so no alias budget
stops it). The join gives each line one step per job that holds it; a file's facts are
cut at :data:`~agentguard.inspect.project.files.MAX_FACTS_PER_FILE` command lines, and the
join made by the file's reader (kept in the content cache) joins only the lines that cap
keeps, as the map's join after the walk did. Joining every line first cost lines x jobs
steps: a 190 KB workflow (3,000 lines, 3,000 jobs) took 34 s to read instead of 1 s, and
the cost grows with the square of the file.

A cached run still reports what a run without the cache does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project import workflow_jobs
from agentguard.inspect.project.files import MAX_FACTS_PER_FILE, process_file
from agentguard.inspect.project.workflow_jobs import MAX_JOBS_PER_LINE

JOBS = 20
LINES = 3 * MAX_FACTS_PER_FILE
PATH = ".github/workflows/review.yml"


def _workflow(jobs: int = JOBS, lines: int = LINES) -> str:
    held = ", ".join(f"j{i}: {{runs-on: x}}" for i in range(jobs))
    body = "".join(f"  claude -p a{i} --dangerously-skip-permissions\n" for i in range(lines))
    return f'on: [pull_request_target]\njobs: {{{held}, last: {{steps: [{{run: "\n{body}"}}]}}}}\n'


@pytest.fixture()
def holding_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The line of each command line the job join looked up."""
    seen: list[int] = []
    real = workflow_jobs._Jobs.holding

    def counting(self: Any, line: int) -> Any:
        seen.append(line)
        return real(self, line)

    monkeypatch.setattr(workflow_jobs._Jobs, "holding", counting)
    return seen


def test_the_readers_join_looks_up_only_the_command_lines_the_cap_keeps(
    holding_calls: list[int],
) -> None:
    out = process_file(PATH, "script", _workflow().encode())
    assert len(out.configs) == MAX_FACTS_PER_FILE
    assert "cap-file-facts" in {s.error_code for s in out.sources}
    assert len(holding_calls) <= MAX_FACTS_PER_FILE
    # what is kept is still joined: every job of the file holds each line
    for cfg in out.configs:
        assert cfg.called_from is not None
        assert len(cfg.also_from) == JOBS  # (j0..j19 and `last`: one is called_from)


def _inspect(repo: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(
        app, ["inspect", str(repo), "--format", "json", "--no-project-config", *extra]
    )
    assert result.exit_code == 3, result.stdout[-2000:]  # (the cap: a failed source)
    report = json.loads(result.stdout)
    return {k: v for k, v in report.items() if k != "provenance"}


def test_a_cached_run_of_the_multiplying_workflow_reports_what_an_uncached_one_does(
    cache_home: Path,
) -> None:
    repo = cache_home / "repo"
    (repo / PATH).parent.mkdir(parents=True)
    (repo / PATH).write_text(_workflow(jobs=5, lines=MAX_FACTS_PER_FILE + 50))
    uncached = _inspect(repo, "--no-cache")
    assert _inspect(repo) == uncached  # (cold: the pack is written)
    assert _inspect(repo) == uncached  # (warm: the joined facts from the pack)
    agents = uncached["map"]["agents"]
    assert len(agents) == MAX_FACTS_PER_FILE
    assert all(len(a["runners"]) == 6 for a in agents)


def test_a_line_thousands_of_jobs_hold_draws_a_bounded_map_and_says_so(cache_home: Path) -> None:
    """Modelled on the attack: 250 lines x 3,000 jobs made a 184 MB report in 20 s (every
    job drawn as a runner of every line). Each line now draws the first
    :data:`MAX_JOBS_PER_LINE` jobs, the workflow is one failed source that says how many
    held it, cold and warm alike, and the reader leaves such a file to the map's join (its
    cache entry holds its lines, not lines x jobs steps)."""
    repo = cache_home / "repo"
    (repo / PATH).parent.mkdir(parents=True)
    jobs = 3 * MAX_JOBS_PER_LINE
    (repo / PATH).write_text(_workflow(jobs=jobs, lines=5))
    out = process_file(PATH, "script", _workflow(jobs=jobs, lines=5).encode())
    assert [c.called_from for c in out.configs] == [None] * 5
    uncached = _inspect(repo, "--no-cache")
    assert _inspect(repo) == uncached
    assert _inspect(repo) == uncached
    failed = [s for s in uncached["sources"] if s["status"] == "failed"]
    assert [(s["name"], s["error_code"]) for s in failed] == [(PATH, "cap-jobs-per-line")]
    assert f"up to {jobs + 1} jobs" in failed[0]["reason"]
    agents = uncached["map"]["agents"]
    assert len(agents) == 5
    assert all(len(a["runners"]) == MAX_JOBS_PER_LINE for a in agents)
    assert len(json.dumps(uncached)) < 2_000_000

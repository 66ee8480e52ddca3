"""The job a ``claude`` command line written in a workflow runs in (facts for the map).

A command line read from a workflow file by the line readers (a ``run:`` step's
``claude -p``, the ``claude_args`` a step hands the repository's own action) carries no
job: here the workflow is parsed (once, through the project's loader and the hostile-YAML
loader) and the job whose text holds the line is set as its caller, with the workflow's
triggers; a job that repeats that text through a YAML alias (``steps: *steps``) runs it
too, never left out for the first. A line outside every job's text is left unjoined (the
map then says it runs where its process is started: not read), and so is each line of a
workflow that does not parse, which is then a failed source.
"""

from __future__ import annotations

import bisect
import dataclasses
from collections.abc import Callable, Sequence

from agentguard.facts.agents import AgentConfig
from agentguard.facts.workflows import ActionStep
from agentguard.findings import Source
from agentguard.inspect.project.lined import PARSE_FAILURES, LinedDoc, document_error
from agentguard.inspect.project.outcome import failed_source
from agentguard.inspect.project.workflows import is_workflow, workflow_triggers
from agentguard.inspect.project.yaml_lined import load_yaml

Loader = Callable[[str], bytes | None]
# Jobs drawn for one command line: real workflows share a line's text among a few jobs (an
# alias, ``steps: *steps``); a file built so that thousands of jobs hold each of its lines
# made a report of lines x jobs runners (184 MB for 56 KB). Past this the rest are not
# drawn, and the workflow is a failed source that says so.
MAX_JOBS_PER_LINE = 64


def _parsed(path: str, load: Loader) -> LinedDoc | Source | None:
    """The workflow parsed, or why it could not be (None: not read, as the walk says)."""
    data = load(path)
    if data is None:
        return None
    try:
        return load_yaml(data.decode("utf-8-sig"))
    except PARSE_FAILURES as exc:
        err = document_error(exc)
        where = f" (line {err.line})" if err.line else ""
        why = f"{err}{where} (read for the job that runs its claude command line)"
        return failed_source(path, why, f"workflow-{err.code}")


class _Jobs:
    """The jobs of a parsed workflow by the lines of their text. A job's values hold the
    lines recorded under it; a value an alias repeats (``steps: *steps``) is recorded
    under each job that holds it, at the anchor's lines, so the line's text belongs to
    every one of them."""

    def __init__(self, doc: LinedDoc, path: str) -> None:
        value = doc.value if isinstance(doc.value, dict) else {}
        jobs = value.get("jobs")
        self.triggers = workflow_triggers(value)
        self.path = path
        self.starts = sorted(set(doc.lines.values()))
        self.by_line: dict[int, dict[str, int]] = {}
        if isinstance(jobs, dict):
            for p, line in doc.lines.items():
                if len(p) >= 3 and p[0] == "jobs" and isinstance(p[1], str) and p[1] in jobs:
                    self.by_line.setdefault(line, {})[p[1]] = doc.line("jobs", p[1]) or 1

    def holding(self, line: int) -> list[ActionStep]:
        """The jobs whose text holds ``line``: those holding the value that starts last at
        or before it (a block scalar's lines are its value's), each once, in file order."""
        i = bisect.bisect_right(self.starts, line) - 1
        if i < 0:
            return []
        found = self.by_line.get(self.starts[i], {})
        return [
            ActionStep("", "", self.path, at, name, triggers=self.triggers)
            for name, at in sorted(found.items(), key=lambda kv: (kv[1], kv[0]))
        ]


def join_workflow_jobs(
    configs: Sequence[AgentConfig], load: Loader
) -> tuple[list[AgentConfig], list[Source]]:
    """``configs`` with each workflow command line's job set as ``called_from`` (and the
    other jobs that hold the same text as ``also_from``); a workflow that does not parse
    is a failed source (its command lines' runners stay not read)."""
    docs: dict[str, _Jobs | None] = {}
    sources: list[Source] = []
    out: list[AgentConfig] = []
    crowded: dict[str, tuple[int, int]] = {}  # path -> (its first such line, most jobs)
    for cfg in configs:
        if cfg.called_from is not None or cfg.engine != "claude CLI" or not is_workflow(cfg.path):
            out.append(cfg)
            continue
        if cfg.path not in docs:
            doc = _parsed(cfg.path, load)
            if isinstance(doc, Source):
                sources.append(doc)
            docs[cfg.path] = _Jobs(doc, cfg.path) if isinstance(doc, LinedDoc) else None
        jobs = docs[cfg.path]
        held = jobs.holding(cfg.line) if jobs is not None else []
        if len(held) > MAX_JOBS_PER_LINE:
            first, most = crowded.get(cfg.path, (cfg.line, 0))
            crowded[cfg.path] = (first, max(most, len(held)))
            del held[MAX_JOBS_PER_LINE:]
        if held:
            cfg = dataclasses.replace(cfg, called_from=held[0], also_from=tuple(held[1:]))
        out.append(cfg)
    for path, (line, most) in crowded.items():
        why = (
            f"up to {most} jobs hold the text of a claude command line (first at line {line}): "
            f"the first {MAX_JOBS_PER_LINE} of each are drawn as its runners, the rest not"
        )
        sources.append(failed_source(path, why, "cap-jobs-per-line"))
    return out, sources


def join_own_jobs(path: str, data: bytes, configs: list[AgentConfig]) -> list[AgentConfig]:
    """The command lines one file's readers found, joined to the jobs of that file when it is
    a workflow that parses: what :func:`join_workflow_jobs` would make of them later from the
    same bytes, done while the file is in hand (and cached with its facts). A workflow that
    does not parse, or whose lines too many jobs hold, is left to that later join, which
    reports it once (and its cache entry stays the size of its lines)."""
    if not is_workflow(path):
        return configs
    joined, failed = join_workflow_jobs(configs, lambda rel: data if rel == path else None)
    return configs if failed else joined

"""The job a ``claude`` command line written in a workflow runs in (facts for the map).

A command line read from a workflow file by the line readers (a ``run:`` step's
``claude -p``, the ``claude_args`` a step hands the repository's own action) carries no
job: here the workflow is parsed (once, through the project's loader and the hostile-YAML
loader) and the job whose text holds the line is set as its caller, with the workflow's
triggers. A workflow that does not parse, or a line outside every job, leaves it unjoined
(the map then says it runs where its process is started: not read).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from agentguard.facts.agents import AgentConfig
from agentguard.facts.workflows import ActionStep
from agentguard.inspect.project.lined import PARSE_FAILURES, LinedDoc
from agentguard.inspect.project.workflows import is_workflow, workflow_triggers
from agentguard.inspect.project.yaml_lined import load_yaml

Loader = Callable[[str], bytes | None]


def _parsed(path: str, load: Loader) -> LinedDoc | None:
    data = load(path)
    if data is None:
        return None
    try:
        return load_yaml(data.decode("utf-8-sig"))
    except PARSE_FAILURES:
        return None


def _job_at(doc: LinedDoc, path: str, line: int) -> ActionStep | None:
    value = doc.value if isinstance(doc.value, dict) else {}
    jobs = value.get("jobs")
    if not isinstance(jobs, dict):
        return None
    starts = sorted(
        (at, str(name))
        for name in jobs
        if (at := doc.line("jobs", name)) is not None and at <= line
    )
    if not starts:
        return None
    at, name = starts[-1]
    return ActionStep("", "", path, at, name, triggers=workflow_triggers(value))


def join_workflow_jobs(configs: Sequence[AgentConfig], load: Loader) -> list[AgentConfig]:
    """``configs`` with each workflow command line's job set as ``called_from``."""
    docs: dict[str, LinedDoc | None] = {}
    out: list[AgentConfig] = []
    for cfg in configs:
        if cfg.called_from is not None or cfg.engine != "claude CLI" or not is_workflow(cfg.path):
            out.append(cfg)
            continue
        if cfg.path not in docs:
            docs[cfg.path] = _parsed(cfg.path, load)
        doc = docs[cfg.path]
        job = _job_at(doc, cfg.path, cfg.line) if doc is not None else None
        out.append(dataclasses.replace(cfg, called_from=job) if job is not None else cfg)
    return out

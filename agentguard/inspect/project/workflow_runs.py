"""Agents started by a workflow's own steps (``run:``), not by an agent action: which job,
who can start it, and what the job installs for it. Facts only.

Modelled on OpenHands' resolver workflow: a job started by issue labels and comments
installs ``openhands-ai`` (the newest version on the index, written into a requirements
file by an earlier step) or the default branch of its git repository (in an
``actions/github-script`` step: ``exec.exec("pip install git+...")``), then runs
``python -m openhands.resolver.resolve_issue`` with the model's key and a repository token.
"""

from __future__ import annotations

import re
from typing import Any

from agentguard import redact
from agentguard.facts.workflows import AgentRunStep as AgentRunStep
from agentguard.inspect.project.install_facts import (
    InstallCommand,
    RequirementDecl,
    RequirementsFile,
    find_installs,
)
from agentguard.inspect.project.lined import LinedDoc

# a command that starts an agent, by its words (the engine's name for the report)
_AGENT_START = (
    # `python -m openhands...` in command position (not an argument of `pkill -f "..."`), and
    # not the module that builds the sandbox image (`openhands.runtime.utils.runtime_build`)
    (
        re.compile(
            r"(?:^|[;&|(]|\bexec|\bpoetry\s+run|\buv\s+run|\btime)\s*(?:[A-Za-z_]\w*=\S*\s+)*"
            r"python[\d.]*\s+-m\s+openhands(?!\.runtime\b)(?:\.[\w.]+)?"
        ),
        "OpenHands",
    ),
    # the CLI in command position (a line's start, after `;`, `&&`, `|`, `(`, `exec`, `uvx`)
    (re.compile(r"(?:^|[;&|(]|\bexec|\buvx|\bpipx\s+run)\s*openhands(?:\s|$)"), "OpenHands"),
)
# events anyone can cause on a public repository (an issue, a comment, a review, a fork's
# pull request against the base's secrets); `labeled` needs triage access, so it is not
ANYONE_EVENTS = frozenset(
    {
        "issues",
        "issue_comment",
        "pull_request_review_comment",
        "pull_request_review",
        "pull_request_target",
        "discussion",
        "discussion_comment",
    }
)
_MAINTAINER_ONLY_TYPES = frozenset({"labeled", "unlabeled", "assigned", "unassigned", "milestoned"})
# a job or step condition that checks who the person is
_WHO_CHECK = re.compile(r"author_association|github\.(?:triggering_)?actor\b|sender\.login")
_EXEC = re.compile(r"""\bexec\.exec\(\s*(["'`])((?:(?!\1).)*)\1""")
_ECHO_TO = re.compile(
    r"""^\s*echo\s+(?:-e\s+)?(["'])(?P<text>(?:(?!\1).)*)\1\s*(?P<op>>>?)\s*(?P<file>\S+)\s*$"""
)


def _events(doc: dict[str, Any]) -> dict[str, tuple[str, ...]]:
    """Each `on:` event with its `types:` (empty: every type)."""
    on = doc.get("on", doc.get("true", doc.get("True")))
    if isinstance(on, str):
        return {on: ()}
    if isinstance(on, list):
        return {str(e): () for e in on}
    out: dict[str, tuple[str, ...]] = {}
    for name, spec in on.items() if isinstance(on, dict) else ():
        types = spec.get("types") if isinstance(spec, dict) else None
        if isinstance(types, str):
            types = [types]
        out[str(name)] = tuple(str(t) for t in types) if isinstance(types, list) else ()
    return out


def _open_events(events: dict[str, tuple[str, ...]], conditions: str) -> tuple[str, ...]:
    if _WHO_CHECK.search(conditions):
        return ()
    return tuple(
        sorted(
            name
            for name, types in events.items()
            if name in ANYONE_EVENTS and not (types and set(types) <= _MAINTAINER_ONLY_TYPES)
        )
    )


def _agent(script: str) -> tuple[str, str, int] | None:
    for offset, raw in enumerate(script.split("\n")):
        for pattern, engine in _AGENT_START:
            if pattern.search(raw) and not raw.lstrip().startswith("#"):
                return engine, redact.text(raw.strip().rstrip("\\").strip())[:160], offset
    return None


def _body_start(doc: LinedDoc, key_path: tuple[str | int, ...], text: str) -> int:
    line = doc.line(*key_path) or 1
    return line + 1 if "\n" in text.rstrip("\n") or text.endswith("\n") else line


def _written(script: str, line: int) -> list[tuple[str, str, int]]:
    """(file, one requirement line, line) for `echo "..." > file` in a step."""
    out: list[tuple[str, str, int]] = []
    for offset, raw in enumerate(script.split("\n")):
        m = _ECHO_TO.match(raw)
        if m is not None:
            out.append((m.group("file"), m.group("text"), line + offset))
    return out


def _requirements(file: str, lines: list[tuple[str, int]], path: str, job: str) -> RequirementsFile:
    """A requirements file the job writes: a line whose version is filled in at run time
    (``openhands-ai==${VERSION}``) is that package with an unknown version, not a pin."""
    from packaging.utils import canonicalize_name  # (only where a job writes requirements)

    decls: list[RequirementDecl] = []
    for text, line in lines:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
        name = canonicalize_name(m.group(1)) if m else None
        spec = text[m.end() :].strip() if m else ""
        known = "$" not in spec
        decls.append(RequirementDecl(text, name, spec if known else "", path, line, "command"))
    pinned = bool(decls) and all(d.specifier.startswith("==") for d in decls)
    return RequirementsFile(
        path=f"{file} (written by job {job} in {path})",
        requirements=tuple(decls),
        includes=(),
        constraints=(),
        all_hashed=False,
        all_pinned=pinned,
        generated_lock=False,
    )


def read_agent_runs(path: str, doc: LinedDoc) -> list[AgentRunStep]:
    """The agent-starting ``run:`` steps of one parsed workflow."""
    if not isinstance(doc.value, dict):
        return []
    events = _events(doc.value)
    jobs = doc.value.get("jobs")
    out: list[AgentRunStep] = []
    for job, spec in jobs.items() if isinstance(jobs, dict) else ():
        steps = spec.get("steps") if isinstance(spec, dict) else None
        if not isinstance(steps, list):
            continue
        job_if = str(spec.get("if", "")) if isinstance(spec, dict) else ""
        installs: list[InstallCommand] = []
        writes: dict[str, list[tuple[str, int]]] = {}
        starts: list[tuple[str, str, int, str]] = []
        for n, step in enumerate(steps):
            if not isinstance(step, dict):
                continue
            script, key = _script_of(step)
            if script is None:
                continue
            start = _body_start(doc, ("jobs", job, "steps", n, *key), script)
            if key == ("run",):
                installs += find_installs(script, path=path, line=start, phase="ci")
                for file, text, line in _written(script, start):
                    writes.setdefault(file, []).append((text, line))
                found = _agent(script)
                if found is not None:
                    engine, command, offset = found
                    starts.append((engine, command, start + offset, str(step.get("if", ""))))
            else:  # actions/github-script: the commands it runs with exec.exec("...")
                for m in _EXEC.finditer(script):
                    at = start + script.count("\n", 0, m.start())
                    installs += find_installs(m.group(2), path=path, line=at, phase="ci")
        if not starts:
            continue
        engine, command, line, step_if = starts[0]  # one job, one agent: its first start
        wanted = {f for cmd in installs for f in cmd.requirement_files}
        out.append(
            AgentRunStep(
                engine=engine,
                command=command,
                path=path,
                line=line,
                job=str(job),
                triggers=tuple(events),
                open_events=_open_events(events, f"{job_if}\n{step_if}"),
                installs=tuple(installs),
                written=tuple(
                    (f, _requirements(f, ls, path, str(job)))
                    for f, ls in writes.items()
                    if f in wanted
                ),
            )
        )
    return out


def _script_of(step: dict[str, Any]) -> tuple[str | None, tuple[str, ...]]:
    run = step.get("run")
    if isinstance(run, str):
        return run, ("run",)
    uses = step.get("uses")
    inputs = step.get("with")
    if isinstance(uses, str) and uses.lower().startswith("actions/github-script@"):
        script = inputs.get("script") if isinstance(inputs, dict) else None
        if isinstance(script, str):
            return script, ("with", "script")
    return None, ()

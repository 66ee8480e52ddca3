"""The smoke step of ``lock`` and ``check``: whether it runs (the flag, or ``smoke = true``
in a configuration given with ``--config``), the run, and its findings and sources added
to the command's report (before the policy is applied, so ignores and severities hold)."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import Finding, JSONValue, Report, Source

if TYPE_CHECKING:  # (a run without the smoke step, most of them, builds none of its records)
    from agentguard.config import Config
    from agentguard.facts.smoke import Crossing
    from agentguard.smoke.run import SmokeOptions

UNTRUSTED_NOTE = (
    "smoke: `smoke = true` in the project's own configuration is not honoured (a pull "
    "request could turn on a run of its code); pass --smoke, or put it in a file given "
    "with --config."
)


def wanted(flag: bool | None, config: Config) -> tuple[bool, str | None]:
    """Whether the smoke run runs, and a note when the project's file asked for it."""
    if flag is not None:
        return flag, None
    if config.smoke and not config.smoke_trusted:
        return False, UNTRUSTED_NOTE
    return bool(config.smoke), None


def crossings(findings: tuple[Finding, ...] | list[Finding]) -> tuple[Crossing, ...]:
    """AG101's ranges across majors, to explain a crash with."""
    from agentguard.facts.smoke import Crossing

    out = []
    for f in findings:
        if f.rule_id != "AG101":
            continue
        ev = f.evidence
        child, parent = ev.get("child"), ev.get("parent")
        if not isinstance(child, str) or not isinstance(parent, str):
            continue
        out.append(
            Crossing(
                package=child,
                locked=tuple(str(v) for v in ev.get("locked") or ()),
                parent=parent,
                parent_version=str(ev["parent_version"]) if ev.get("parent_version") else None,
                majors=tuple(str(m) for m in ev.get("majors_admitted") or ()),
                fix=f.fix.description,
                snippet=f.fix.snippet,
            )
        )
    return tuple(out)


def requires_python(root: Path) -> str | None:
    from agentguard import safeio

    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib

    try:
        data = tomllib.loads(safeio.read_text(root / "pyproject.toml", root=root))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    project = data.get("project")
    value = project.get("requires-python") if isinstance(project, dict) else None
    return value if isinstance(value, str) else None


@dataclasses.dataclass(frozen=True)
class SmokeStep:
    findings: tuple[Finding, ...]
    sources: tuple[Source, ...]
    facts: dict[str, JSONValue]
    notes: tuple[str, ...]


def smoke_step(
    root: Path, opts: SmokeOptions, prior: tuple[Finding, ...] | list[Finding]
) -> SmokeStep:
    """The smoke run on ``root`` and its findings; ``prior``: the lock's findings (AG101)."""
    from agentguard.engine import run_smoke_rules
    from agentguard.smoke.run import smoke_run
    from agentguard.smoke.tools_step import compare_tools

    facts, sources = smoke_run(root, requires_python(root), opts, crossings(prior))
    tools = compare_tools(root, facts, record=opts.record_tools, accept=opts.accept_tools)
    facts = tools.facts
    notes = []
    if facts.install is not None and facts.install.interpreter_note:
        notes.append(f"smoke: {facts.install.interpreter_note}")
    return SmokeStep(
        tuple(run_smoke_rules(facts)),
        (*sources, *tools.sources),
        facts.to_json(),
        (*notes, *tools.notes),
    )


def add_smoke(report: Report, root: Path, opts: SmokeOptions) -> Report:
    """``report`` with the smoke run's findings, sources and facts."""
    step = smoke_step(root, opts, report.findings)
    return dataclasses.replace(
        report,
        findings=(*report.findings, *step.findings),
        sources=(*report.sources, *step.sources),
        facts={**report.facts, "smoke": step.facts},
        notes=(*report.notes, *step.notes),
    )

"""Helpers for the harden tests: run harden on a folder or on fixture facts, inspect what it
wrote, and read every written file (for the never-a-secret checks)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from agentguard.cli import app
from agentguard.config import load_config
from agentguard.engine import make_report
from agentguard.engine.inspect_run import InspectOptions, run_inspect
from agentguard.findings import Finding, Report
from agentguard.harden.gather import Gathered
from agentguard.harden.model import HardenOptions, ServiceSpec, validate_options
from agentguard.harden.output import write_files
from agentguard.harden.plan import Plan, make_plan
from agentguard.harden.run import HardenResult, run_harden
from agentguard.inspect.targets import Kind

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
EXAMPLE = Path(__file__).resolve().parent.parent.parent / "examples" / "kontext-bot"


def harden_folder(case: Path, out: Path, **options: Any) -> HardenResult:
    return run_harden(HardenOptions(target=str(case), kind="project", out=out, **options))


def plan_from_facts(
    findings: Sequence[Finding],
    services: Sequence[ServiceSpec],
    *,
    out: Path,
    kind: str,
    target: str,
    **options: Any,
) -> Plan:
    """Harden hand-built facts (a fixture's image or container record): plan and write."""
    opts = validate_options(HardenOptions(target=target, kind=kind, out=out, **options))
    report = make_report(
        "inspect", findings, (), target=target, facts={"target": {"text": target, "kind": kind}}
    )
    gathered = Gathered(
        report=report,
        kind=kind,
        services=tuple(services),
        agent={},
        settings=(),
        graph=None,
        config=load_config(out.parent),
        sources=(),
    )
    plan = make_plan(gathered, opts)
    write_files(out, plan.files)
    return plan


def inspect_report(target: str | Path, kind: Kind) -> Report:
    report, _config = run_inspect(InspectOptions(target=str(target), kind=kind))
    return report


def rule_ids(report: Report) -> set[str]:
    return {f.rule_id for f in report.findings}


def claimed_ids(plan: Plan) -> set[str]:
    return {c.finding.rule_id for c in plan.claims}


def written_text(out: Path) -> str:
    return "\n".join(p.read_text() for p in sorted(out.rglob("*")) if p.is_file())


def harden_cli(*args: str | Path, env: dict[str, str] | None = None) -> Result:
    merged = {"NO_COLOR": "1", **(env or {})}
    return CliRunner().invoke(app, ["harden", *(str(a) for a in args)], env=merged)


def json_report(result: Result) -> dict[str, Any]:
    assert result.stdout.startswith("{"), (result.exit_code, result.stdout, result.stderr)
    return dict(json.loads(result.stdout))


def sources_named(report: dict[str, Any], kind: str) -> dict[str, tuple[str, str | None]]:
    return {s["name"]: (s["status"], s["reason"]) for s in report["sources"] if s["kind"] == kind}

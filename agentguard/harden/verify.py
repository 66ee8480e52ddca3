"""``--verify``: run the image with the hardened ``docker-run.sh`` on the real engine and probe.

What is verified is the script text this run generated (or the one file the user names
with ``--verify-script``), never a file found in the output folder: that folder is often in
the checkout, and a pull request can commit one. The text is read back
(:func:`~agentguard.harden.run_script.parse_run_script`: nothing expanded from this
process's environment) and compared with the plan as data
(:mod:`~agentguard.harden.verify_plan`): a mount, network, capability, privilege or other
setting the plan did not make means nothing runs. The container is created with the script's
settings; its main process is a probe (:mod:`~agentguard.harden.probe`, which runs and
observes; the verdicts on what it saw are made here with the AG5xx rules): a static
busybox from this machine, mounted read-only at
:data:`~agentguard.harden.probe_facts.HELPER_PATH` (outside the working directory),
running shell built-ins only. The engine's record of the same container is read from
outside. Without a static helper the container is only created and inspected:
what only the inside can show is then *not verified* (a failed source), never passed.
The agent itself starts only after every probe held. Every container this creates is
removed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentguard.findings import Finding, JSONValue, Source, SourceStatus
from agentguard.harden.probe import (
    HELPER_ENV,
    create_kwargs,
    find_helper,
    probe_failed,
    run_probe,
)
from agentguard.harden.probe_facts import (
    AgentRun,
    Expected,
    Observation,
    probe_script,
)
from agentguard.harden.run_script import RunParseError, parse_build_line, parse_run_script
from agentguard.harden.verify_plan import PlannedRun, build_deviations, deviations
from agentguard.harden.verify_start import AgentCheck, build_image, listening, start_agent
from agentguard.inspect import engine as eng
from agentguard.rules.runtime import Verdict, check_observation
from agentguard.rules.runtime_start import check_agent_run, check_egress, check_plan


@dataclass
class VerifyResult:
    findings: list[Finding] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    facts: list[dict[str, JSONValue]] = field(default_factory=list)


@dataclass(frozen=True)
class ToVerify:
    """One run script to verify, as this run planned it."""

    label: str  # the script's name in the report
    text: str  # the script: the text this run generated (or the --verify-script file's)
    plan: PlannedRun  # what the plan made, as data: the text must ask for nothing else
    expected: Expected
    base: Path  # the folder its relative paths start from (the output folder)
    root: Path | None  # builds only from a context inside this folder (its real path)
    dockerfile: str | None = None  # the hardened Dockerfile this run generated


def _not_run(result: VerifyResult, label: str, why: str) -> None:
    result.sources.append(Source.skipped("probe", f"agent-start ({label})", f"not started: {why}"))
    result.facts.append(
        {"probe": "agent-start", "script": label, "status": "not-run", "detail": why}
    )


def verify_script(
    item: ToVerify,
    *,
    connect: Callable[[], eng.Engine] = eng.connect,
    helper: tuple[Path | None, str] | None = None,
    start: AgentCheck | None = None,
    passed: Mapping[str, str] | None = None,
) -> VerifyResult:
    """Verify one run script: nothing runs unless its lines ask for exactly what the plan
    made; the agent starts only after every probe held. ``passed``: the variables the user
    opted in (``--pass-env``); every other by-name variable gets a placeholder."""
    result = VerifyResult()
    label = item.label
    if item.plan.error is not None:
        result.sources.append(
            probe_failed(
                label,
                f"not verified: the planned run line cannot be vouched for: {item.plan.error}",
                "verify-plan-unreadable",
            )
        )
        _not_run(result, label, "the planned run line cannot be vouched for")
        return result
    try:
        args = parse_run_script(item.text)
        build = parse_build_line(item.text)
    except RunParseError as exc:
        result.sources.append(
            probe_failed(label, f"cannot read the run script: {exc}", "verify-script-unreadable")
        )
        return result
    asks = deviations(item.plan.run, args) + build_deviations(item.plan.build, build)
    plan_verdict = check_plan(label, args.image, asks)
    _record(result, label, plan_verdict)
    if plan_verdict.status != "held":
        _not_run(result, label, "the run line asks for what the plan did not make")
        return result
    if not args.image or "$" in args.image:
        result.sources.append(
            probe_failed(
                label,
                f"not verified: no image to run ({args.image or 'none'}); the service builds "
                "its image",
                "verify-no-image",
                remedy="build the image, then run `agentguard harden IMAGE --verify`",
            )
        )
        return result
    if build is not None and any("$" in v for v in build.build_args.values()):
        result.sources.append(
            probe_failed(
                label,
                "not verified: the hardened image is built from the original image, which the "
                "project builds itself (the build argument needs it)",
                "verify-no-image",
                remedy="build the original image, then run `agentguard harden IMAGE --verify`",
            )
        )
        return result
    engine = connect()
    result.sources.append(engine.source)
    if engine.client is None:
        return result
    if build is not None:
        error, source = build_image(
            engine.client, build, item.dockerfile, base=item.base, root=item.root, label=label
        )
        result.sources.append(source)
        if source.status is SourceStatus.FAILED:
            return result
        if error is not None:
            _record(
                result,
                label,
                check_agent_run(AgentRun(label, args.image, "not-built", error=error)),
            )
            return result
    look = eng.lookup_image(engine.client, args.image)
    result.sources.append(look.source)
    if look.obj is None:
        return result
    helper_path, helper_why = helper if helper is not None else find_helper()
    if helper_path is None:
        result.sources.append(
            probe_failed(
                f"helper ({label})",
                f"no probe inside: {helper_why}",
                "probe-helper-missing",
                remedy=f"install busybox-static or set {HELPER_ENV}",
            )
        )
    else:
        result.sources.append(Source.ok("probe", f"helper ({label})", helper_why))
    with listening() as targets:
        expected = dataclasses.replace(
            item.expected, egress=targets if item.expected.network == "none" else ()
        )
        obs, run_sources = run_probe(
            engine.client,
            args,
            helper_path,
            label,
            probe_script([(a, p) for a, p, _w in expected.egress]),
        )
    result.sources += run_sources
    if obs is None:
        _not_run(result, label, "the probe container did not run")
        return result
    if helper_path is None:
        obs = Observation(
            obs.container,
            obs.image,
            obs.script,
            None,
            obs.outside,
            f"no probe inside: {helper_why}",
        )
    egress = check_egress(obs, expected)
    verdicts = [*check_observation(obs, expected), *([egress] if egress else [])]
    for v in verdicts:
        _record(result, label, v)
    broken = [v.probe for v in verdicts if v.status != "held"]
    if broken:
        # the agent runs only where the isolation is shown to hold
        _not_run(result, label, "isolation not shown to hold (probe " + ", ".join(broken) + ")")
        return result
    run = start_agent(
        engine.client, args, create_kwargs(args, None), start or AgentCheck(), label, passed or {}
    )
    _record(result, label, check_agent_run(run), run)
    return result


def _record(result: VerifyResult, label: str, v: Verdict, run: AgentRun | None = None) -> None:
    name = f"{v.probe} ({label})"
    if v.status == "unknown":
        result.sources.append(probe_failed(name, v.detail, "probe-not-verified"))
    else:
        result.sources.append(
            Source.ok("probe", name, ("held: " if v.status == "held" else "VIOLATED: ") + v.detail)
        )
    if v.finding is not None:
        result.findings.append(v.finding)
    fact: dict[str, JSONValue] = {
        "probe": v.probe,
        "script": label,
        "status": v.status,
        "detail": v.detail,
    }
    if run is not None:
        fact["output"] = list(run.lines)
    result.facts.append(fact)


def verify_scripts(
    items: Sequence[ToVerify],
    *,
    connect: Callable[[], eng.Engine] = eng.connect,
    start: AgentCheck | None = None,
    passed: Mapping[str, str] | None = None,
) -> VerifyResult:
    total = VerifyResult()
    helper = find_helper()
    for item in items:
        one = verify_script(item, connect=connect, helper=helper, start=start, passed=passed)
        total.findings += one.findings
        total.sources += one.sources
        total.facts += one.facts
    return total

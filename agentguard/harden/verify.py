"""``--verify``: run the image with the hardened ``docker-run.sh`` on the real engine and probe.

What is verified is the script text this run generated (or the one file the user names
with ``--verify-script``), never a file found in the output folder: that folder is often in
the checkout, and a pull request can commit one. The text is read back
(:func:`~agentguard.harden.docker_run.parse_run_script`: nothing expanded from this
process's environment) and compared with the plan as data
(:mod:`~agentguard.harden.verify_plan`): a mount, network, capability, privilege or other
setting the plan did not make means nothing runs. The container is created with the script's
settings; its main process is a probe: a static busybox from this machine, mounted
read-only at :data:`~agentguard.harden.probe_facts.HELPER_PATH` (outside the working
directory), running shell built-ins only. The engine's record of the same container is
read from outside. Without a static helper the container is only created and inspected:
what only the inside can show is then *not verified* (a failed source), never passed.
The agent itself starts only after every probe held. Every container this creates is
removed.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import struct
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.findings import Finding, JSONValue, Source, SourceStatus
from agentguard.harden.docker_run import (
    RunArgs,
    RunParseError,
    parse_build_line,
    parse_run_script,
)
from agentguard.harden.probe_facts import (
    HELPER_PATH,
    PROBE_SCRIPT,
    AgentRun,
    Expected,
    Observation,
    Outside,
    parse_probe_output,
    probe_script,
)
from agentguard.harden.verify_plan import PlannedRun, build_deviations, deviations
from agentguard.harden.verify_start import AgentCheck, build_image, listening, start_agent
from agentguard.inspect import engine as eng
from agentguard.inspect.container import container_facts
from agentguard.rules.runtime import Verdict, check_observation
from agentguard.rules.runtime_start import check_agent_run, check_egress, check_plan

RUN_TIMEOUT = 60
HELPER_ENV = "AGENTGUARD_PROBE_HELPER"  # a static busybox to use instead of the one on PATH


@dataclass
class VerifyResult:
    findings: list[Finding] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    facts: list[dict[str, JSONValue]] = field(default_factory=list)


def is_static_elf(path: Path) -> bool:
    """True for an ELF executable without a program interpreter (runs in any image)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            if head[:4] != b"\x7fELF" or head[4] not in (1, 2):
                return False
            is64, endian = head[4] == 2, "<" if head[5] == 1 else ">"
            if is64:
                phoff, phentsize, phnum = (
                    struct.unpack_from(endian + "Q", head, 32)[0],
                    *struct.unpack_from(endian + "HH", head, 54),
                )
            else:
                phoff, phentsize, phnum = (
                    struct.unpack_from(endian + "I", head, 28)[0],
                    *struct.unpack_from(endian + "HH", head, 42),
                )
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except (OSError, struct.error):
        return False
    for i in range(phnum):
        (p_type,) = struct.unpack_from(endian + "I", table, i * phentsize)
        if p_type == 3:  # PT_INTERP: dynamically linked
            return False
    return True


def find_helper() -> tuple[Path | None, str]:
    """(the static busybox to mount, or None, and why)."""
    named = os.environ.get(HELPER_ENV)
    candidate = Path(named) if named else (Path(p) if (p := shutil.which("busybox")) else None)
    if candidate is None:
        return None, "no busybox on PATH (install a static one, e.g. Debian's busybox-static)"
    if not is_static_elf(candidate):
        return None, f"{candidate} is not a static executable, so it cannot run inside any image"
    return candidate, f"static helper {candidate}"


def _mounts(args: RunArgs, helper: Path | None) -> list[Any]:
    from docker.types import Mount

    out = [
        Mount(target=m.target, source=m.source, type=m.type, read_only=m.read_only)
        for m in args.mounts
    ]
    if helper is not None:
        out.append(Mount(target=HELPER_PATH, source=str(helper), type="bind", read_only=True))
    return out


def create_kwargs(args: RunArgs, helper: Path | None, probe: str = PROBE_SCRIPT) -> dict[str, Any]:
    """docker-py ``containers.create`` arguments with the script's settings."""
    kwargs: dict[str, Any] = {
        "user": args.user,
        "working_dir": args.workdir,
        "read_only": args.read_only,
        "tmpfs": dict(args.tmpfs),
        "cap_drop": list(args.cap_drop) or None,
        "cap_add": list(args.cap_add) or None,
        "security_opt": list(args.security_opt) or None,
        "network_mode": args.network,
        "mem_limit": args.memory,
        "pids_limit": args.pids_limit,
        "privileged": args.privileged,
        "pid_mode": args.pid,
        "ipc_mode": args.ipc,
        # only literal values: a pass-through's value is not needed to probe the container
        "environment": [e for e in args.env if "=" in e],
        "mounts": _mounts(args, helper),
    }
    if helper is not None:
        kwargs["entrypoint"] = [HELPER_PATH, "sh", "-c", probe]
        kwargs["command"] = []
    else:
        if args.entrypoint:
            kwargs["entrypoint"] = [args.entrypoint]
        kwargs["command"] = args.command or None
    return {k: v for k, v in kwargs.items() if v is not None}


def outside_facts(attrs: Mapping[str, Any]) -> Outside:
    facts = container_facts(attrs, None)
    networks = (attrs.get("NetworkSettings") or {}).get("Networks")
    return Outside(
        user=facts.user,
        read_only_rootfs=facts.read_only_rootfs,
        network_mode=facts.network_mode,
        networks=tuple(networks) if isinstance(networks, Mapping) else None,
        mounts=facts.mounts,
        cap_add=facts.cap_add,
        cap_drop=facts.cap_drop,
        privileged=facts.privileged,
        security_opt=facts.security_opt,
        workdir=facts.workdir,
    )


def _failed(name: str, reason: str, code: str, remedy: str | None = None) -> Source:
    return Source.failed("probe", name, reason, error_code=code, retryable=False, remedy=remedy)


def run_probe(
    client: Any, args: RunArgs, helper: Path | None, script: str, probe: str = PROBE_SCRIPT
) -> tuple[Observation | None, list[Source]]:
    """Create, run and inspect one container; always removed afterwards."""
    sources: list[Source] = []
    try:
        container = client.containers.create(args.image, **create_kwargs(args, helper, probe))
    except Exception as exc:
        return None, [
            eng.failed_source(
                "engine", script, "cannot create the container with the hardened config", exc
            )
        ]
    inside = None
    why: str | None = None
    try:
        if helper is not None:
            container.start()
            status = container.wait(timeout=RUN_TIMEOUT)
            text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            inside = parse_probe_output(text.splitlines())
            if not inside.complete:
                why = f"the probe did not finish (exit {status.get('StatusCode')}): {text.strip()[-300:]}"
                sources.append(_failed(f"inside ({script})", why, "probe-incomplete"))
            else:
                sources.append(
                    Source.ok(
                        "probe", f"inside ({script})", f"probe ran in container {container.id[:12]}"
                    )
                )
        container.reload()
        outside = outside_facts(container.attrs)
        sources.append(
            Source.ok("engine", f"inspect ({script})", f"container {container.id[:12]} read")
        )
    except Exception as exc:
        return None, [
            *sources,
            eng.failed_source("engine", script, "the probe container failed", exc),
        ]
    finally:
        try:
            container.remove(force=True, v=True)
        except Exception as exc:
            sources.append(
                eng.failed_source("engine", script, "cannot remove the probe container", exc)
            )
    obs = Observation(
        container=container.id,
        image=args.image,
        script=script,
        inside=inside,
        outside=outside,
        why_not_inside=why,
    )
    return obs, sources


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
            _failed(
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
            _failed(label, f"cannot read the run script: {exc}", "verify-script-unreadable")
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
            _failed(
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
            _failed(
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
            _failed(
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
        result.sources.append(_failed(name, v.detail, "probe-not-verified"))
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

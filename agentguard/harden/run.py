"""One `agentguard harden` run: gather, plan, write the files, verify on the engine, report.

The report's findings are the inspect findings of TARGET: the ones the hardened
configuration fixes are marked suppressed ("fixed by agentguard harden: <files>"), the
ones it does not fix stay active (so exit 1 says something still needs a person), and
each probe that found the configuration broken at run time adds an AG501 finding.
Sources: inspect's, harden's own reads, every file written, every probe.
The files are written by :mod:`agentguard.harden.output`.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentguard import safeio
from agentguard.config import Config
from agentguard.errors import UsageError
from agentguard.findings import Finding, JSONValue, Report, Source, SourceStatus
from agentguard.harden.gather import Gathered, gather
from agentguard.harden.model import HardenOptions, OptionError, validate_options
from agentguard.harden.output import refuse_links, rewrite_one, write_files
from agentguard.harden.plan import Plan, make_plan
from agentguard.harden.probe_facts import HELPER_PATH, Expected
from agentguard.harden.summary import FILE_NAME as SUMMARY_FILE
from agentguard.harden.summary import image_deps_lines, render_summary
from agentguard.harden.verify import ToVerify, VerifyResult, verify_scripts
from agentguard.harden.verify_plan import planned
from agentguard.harden.verify_start import AgentCheck
from agentguard.inspect import engine as eng
from agentguard.provenance import make_report

Progress = Callable[[str], None]


@dataclass(frozen=True)
class HardenResult:
    report: Report
    config: Config
    plan: Plan
    gathered: Gathered


def expected_for(plan: Plan, opts: HardenOptions, service: str) -> Expected:
    svc = next(s for s in plan.spec.services if s.name == service)
    return Expected(
        workdir=opts.workdir,
        network=opts.network,
        tmpfs=tuple(t.path for t in plan.spec.tmpfs),
        allowed=(
            *((m.host, m.container) for m in opts.allow_mounts),
            *(run.mounts if (run := plan.code.get(service)) is not None else ()),
        ),
        volumes=tuple(v.target for v in svc.volumes),
        helper=HELPER_PATH,
    )


def _to_verify(plan: Plan, opts: HardenOptions, g: Gathered) -> list[ToVerify]:
    """The scripts to verify: the text this run generated for each service, never a file
    found in the output folder (a checkout can commit one); with ``--verify-script FILE``,
    that one file for its service. UsageError: FILE names no service of the plan."""
    items: list[ToVerify] = []
    named = opts.verify_script
    chosen: str | None = None
    if named is not None:
        base = named.name
        matches = [s for s, f in plan.scripts.items() if f == base or f + ".new" == base]
        if not matches and len(plan.scripts) == 1:
            matches = list(plan.scripts)
        if len(matches) != 1:
            raise UsageError(
                f"--verify-script {named}: name one of "
                + ", ".join(sorted(plan.scripts.values()))
                + " (the script of the service to verify)"
            )
        chosen = matches[0]
    for name, script in sorted(plan.scripts.items()):
        run = plan.code.get(name)
        text, where, label = plan.files[script], opts.out, script
        if name == chosen and named is not None:
            try:
                text = safeio.read_text(named)
            except (OSError, UnicodeDecodeError) as exc:
                raise UsageError(f"--verify-script {named}: cannot read it: {exc}") from None
            where, label = named.parent, str(named)
        svc = next(s for s in plan.spec.services if s.name == name)
        root = g.root if g.root is not None else (Path(svc.code.host_dir) if svc.code else None)
        items.append(
            ToVerify(
                label=label,
                text=text,
                plan=planned(plan.argv[name], run.build if run is not None else None),
                expected=expected_for(plan, opts, name),
                base=where,
                root=root,
                dockerfile=plan.files.get(run.dockerfile) if run is not None else None,
            )
        )
    return items


def _findings(plan: Plan) -> list[Finding]:
    out = [
        c.finding.with_suppression("fixed by agentguard harden: " + ", ".join(c.files))
        for c in plan.claims
    ]
    return out + [o.finding for o in plan.opens]


def _facts(
    g: Gathered,
    plan: Plan,
    opts: HardenOptions,
    verified: VerifyResult | None,
    files: Mapping[str, str],
) -> dict[str, JSONValue]:
    harden: dict[str, JSONValue] = {
        "out": str(opts.out),
        "files": sorted(files),
        "user": plan.spec.user,
        "workdir": plan.spec.workdir,
        "network": plan.spec.network,
        "services": [
            {
                "name": s.name,
                "origin": s.origin,
                "image": s.image,
                "script": plan.scripts.get(s.name),
                "notes": list(s.notes),
            }
            for s in plan.spec.services
        ],
        "fixed": [
            {
                "rule_id": c.finding.rule_id,
                "fingerprint": c.finding.fingerprint(),
                "files": list(c.files),
                "how": c.how,
            }
            for c in plan.claims
        ],
        "not_fixed": [
            {
                "rule_id": o.finding.rule_id,
                "fingerprint": o.finding.fingerprint(),
                "why": o.why,
                "todo": o.todo,
                "choices": list(o.choices),
            }
            for o in plan.opens
        ],
        "verification": list(verified.facts) if verified is not None else None,
    }
    return {"target": g.report.facts.get("target"), "harden": harden}


def run_harden(
    opts: HardenOptions,
    *,
    progress: Progress = lambda _m: None,
    connect: Callable[[], eng.Engine] = eng.connect,
) -> HardenResult:
    """The whole command. UsageError (bad option, ambiguous target) means exit 2."""
    from agentguard.policy import apply_policy

    try:
        opts = validate_options(opts)
    except OptionError as exc:
        raise UsageError(str(exc)) from None
    g = gather(opts, progress=progress, connect=connect)
    progress("planning the hardened configuration")
    plan = make_plan(g, opts)
    files = dict(plan.files)
    files[SUMMARY_FILE] = render_summary(
        plan, opts, target=opts.target, kind=g.kind, configuration=g.report.configuration
    )
    unread = [s for s in (*g.report.sources, *g.sources) if s.status is SourceStatus.FAILED]
    written: list[Source] = []
    verified = VerifyResult()
    refuse_links(opts.out, files)
    if unread:
        # a configuration made from an input that was not read would be a guess: write nothing
        written.append(
            Source.skipped(
                "output",
                str(opts.out),
                f"nothing written: {len(unread)} input(s) failed ("
                + "; ".join(f"{s.name}: {s.reason}" for s in unread[:3])
                + ")",
            )
        )
        files = {}
    else:
        progress(f"writing {len(files)} files to {opts.out}")
        written = write_files(opts.out, files, force=opts.force)
    if opts.verify and files:
        progress("verifying on the engine")
        verified = verify_scripts(
            _to_verify(plan, opts, g),
            connect=connect,
            start=AgentCheck(settle=opts.settle, command=opts.verify_command),
            # only the variables the user opted in, never the rest of this environment
            passed={n: os.environ[n] for n in opts.pass_env if n in os.environ},
        )
        summary = render_summary(
            plan,
            opts,
            target=opts.target,
            kind=g.kind,
            verification=verified.facts,
            configuration=g.report.configuration,
            show_output=opts.summary_output,
        )
        written.append(rewrite_one(opts.out, SUMMARY_FILE, summary, force=opts.force))
    # the inspect findings had the policy applied already; AG501 findings get it here
    applied = apply_policy(verified.findings, g.config, root=Path.cwd())
    report = make_report(
        "harden",
        # nothing written fixes nothing: the findings stay as inspect reported them
        [*(_findings(plan) if files else g.report.findings), *applied.findings],
        (
            *g.report.sources,
            *g.sources,
            *plan.sources,
            *written,
            *verified.sources,
            *applied.sources,
        ),
        target=opts.target,
        inputs={**g.report.provenance.inputs, "out": str(opts.out)},
        facts=_facts(g, plan, opts, verified if opts.verify else None, files),
        notes=(
            *g.report.notes,
            (
                f"hardened configuration written to {opts.out} ({len(files)} files); "
                f"read {opts.out / SUMMARY_FILE}"
                if files
                else f"nothing written to {opts.out}: an input failed (see the sources)"
            ),
            *applied.notes,
            *(image_deps_lines(plan) if files else ()),
            *_started_notes(verified),
        ),
        configuration=g.report.configuration,
    )
    return HardenResult(report, g.config, plan, g)


def _started_notes(verified: VerifyResult) -> list[str]:
    """The agent's first lines of output, per script, for the text report."""
    out: list[str] = []
    for fact in verified.facts:
        lines = fact.get("output")
        if fact.get("probe") == "agent-start" and isinstance(lines, list):
            shown = " | ".join(str(line) for line in lines[:5]) or "(no output)"
            out.append(f"the agent under {fact.get('script')} ({fact.get('status')}): {shown}")
    return out

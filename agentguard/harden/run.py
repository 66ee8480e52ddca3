"""One `agentguard harden` run: gather, plan, write the files, verify on the engine, report.

The report's findings are the inspect findings of TARGET: the ones the hardened
configuration fixes are marked suppressed ("fixed by agentguard harden: <files>"), the
ones it does not fix stay active (so exit 1 says something still needs a person), and
each probe that found the configuration broken at run time adds an AG501 finding.
Sources: inspect's, harden's own reads, every file written, every probe.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from agentguard import redact, safeio
from agentguard.config import Config
from agentguard.engine import UsageError, make_report
from agentguard.findings import Finding, JSONValue, Report, Source
from agentguard.harden.gather import Gathered, gather
from agentguard.harden.model import HardenOptions, OptionError, validate_options
from agentguard.harden.plan import Plan, make_plan
from agentguard.harden.probe_facts import HELPER_PATH, Expected
from agentguard.harden.summary import FILE_NAME as SUMMARY_FILE
from agentguard.harden.summary import render_summary
from agentguard.harden.verify import VerifyResult, verify_scripts
from agentguard.inspect import engine as eng

Progress = Callable[[str], None]
MANIFEST = ".agentguard-harden.json"  # the files the last run wrote (stale ones are removed)


@dataclass(frozen=True)
class HardenResult:
    report: Report
    config: Config
    plan: Plan
    gathered: Gathered


def write_files(out: Path, files: Mapping[str, str]) -> list[Source]:
    """Write every file under ``out``; remove files an earlier run wrote and this one did not.

    ``out`` is often inside the checkout, so nothing in it is trusted: a link at ``out``
    or at any file or folder this run writes is refused before anything is written
    (:class:`UsageError`, exit 2); each file is written atomically through
    :mod:`agentguard.safeio`; the previous run's manifest is read safely, and a listed
    name that is absolute or leaves ``out`` is refused (never removed).
    """
    try:
        for rel in [*files, MANIFEST]:
            target = safeio.confined(out, rel)
            if target.is_symlink():
                raise safeio.UnsafeWrite(f"{target}: is a symbolic link; refusing to write")
    except safeio.UnsafeWrite as exc:
        raise UsageError(f"harden output: {exc}") from None
    sources: list[Source] = []
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        return [
            Source.failed(
                "output", str(out), f"cannot create: {exc}", error_code="output-unwritable"
            )
        ]
    for rel in sorted(set(_previous(out, sources)) - set(files)):
        if not safeio.remove_in(out, rel):
            sources.append(
                Source.skipped(
                    "output",
                    rel,
                    f"listed in {MANIFEST} but not a name inside {out}: not removed",
                )
            )
    for rel, text in sorted(files.items()):
        sources.append(write_one(out, rel, text))
    manifest = json.dumps({"files": sorted(files)}, indent=1) + "\n"
    try:
        safeio.write_in(out, MANIFEST, manifest)
    except OSError as exc:
        sources.append(
            Source.failed(
                "output",
                str(out / MANIFEST),
                f"cannot write: {exc}",
                error_code="output-unwritable",
            )
        )
    return sources


MAX_MANIFEST_BYTES = 1024 * 1024


def _previous(out: Path, sources: list[Source]) -> list[str]:
    """The names the last run's manifest lists (nothing when it is absent or unreadable)."""
    path = out / MANIFEST
    if not path.exists() and not path.is_symlink():
        return []
    try:
        listed = json.loads(safeio.read_text(path, root=out, cap=MAX_MANIFEST_BYTES)).get("files")
    except (OSError, ValueError, AttributeError, RecursionError) as exc:
        sources.append(
            Source.skipped("output", str(path), f"not read ({exc}): no stale file removed")
        )
        return []
    return [r for r in listed if isinstance(r, str)] if isinstance(listed, list) else []


def write_one(out: Path, rel: str, text: str) -> Source:
    """One file under ``out``, redacted, written atomically, never through a link."""
    path = out / rel
    try:
        text = redact.text(text)
        safeio.write_in(out, rel, text, 0o755 if rel.endswith(".sh") else 0)
    except OSError as exc:
        return Source.failed(
            "output",
            str(path),
            f"cannot write: {exc}",
            error_code="output-unwritable",
            retryable=False,
        )
    return Source.ok("output", str(path), f"{len(text.encode())} bytes written")


def expected_for(plan: Plan, opts: HardenOptions, service: str) -> Expected:
    svc = next(s for s in plan.spec.services if s.name == service)
    return Expected(
        workdir=opts.workdir,
        network=opts.network,
        tmpfs=tuple(t.path for t in plan.spec.tmpfs),
        allowed=tuple((m.host, m.container) for m in opts.allow_mounts),
        volumes=tuple(v.target for v in svc.volumes),
        helper=HELPER_PATH,
    )


def _findings(plan: Plan) -> list[Finding]:
    out = [
        c.finding.with_suppression("fixed by agentguard harden: " + ", ".join(c.files))
        for c in plan.claims
    ]
    return out + [o.finding for o in plan.opens]


def _facts(
    g: Gathered, plan: Plan, opts: HardenOptions, verified: VerifyResult | None
) -> dict[str, JSONValue]:
    harden: dict[str, JSONValue] = {
        "out": str(opts.out),
        "files": sorted([*plan.files, SUMMARY_FILE]),
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
    progress(f"writing {len(plan.files) + 1} files to {opts.out}")
    files = dict(plan.files)
    files[SUMMARY_FILE] = render_summary(plan, opts, target=opts.target, kind=g.kind)
    written = write_files(opts.out, files)
    verified = VerifyResult()
    if opts.verify:
        progress("verifying on the engine")
        scripts = [
            (opts.out / script, script, expected_for(plan, opts, name))
            for name, script in sorted(plan.scripts.items())
        ]
        verified = verify_scripts(scripts, connect=connect)
        summary = render_summary(
            plan, opts, target=opts.target, kind=g.kind, verification=verified.facts
        )
        written.append(write_one(opts.out, SUMMARY_FILE, summary))
    # the inspect findings had the policy applied already; AG501 findings get it here
    applied = apply_policy(verified.findings, g.config, root=Path.cwd())
    report = make_report(
        "harden",
        [*_findings(plan), *applied.findings],
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
        facts=_facts(g, plan, opts, verified if opts.verify else None),
        notes=(
            *g.report.notes,
            f"hardened configuration written to {opts.out} ({len(files)} files); "
            f"read {opts.out / SUMMARY_FILE}",
            *applied.notes,
        ),
    )
    return HardenResult(report, g.config, plan, g)

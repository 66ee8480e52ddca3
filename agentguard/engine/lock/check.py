"""`agentguard lock --check`: the lock files against the inputs and each other, offline.

Reads the project's inputs and the two lock files, nothing else: no index, no resolver,
no build (no package code runs). Every lock entry is compared whole (name, version and
marker: a forked package has one entry per fork).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

from agentguard.findings import Finding, Fix, JSONValue, Location, Report, Severity, Source
from agentguard.lock.check_reads import build_backend, entry_lines
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.mutex import PYLOCK, REQUIREMENTS_LOCK, LockfileError
from agentguard.provenance import make_report

if TYPE_CHECKING:
    from agentguard.config import DepsPolicy


def check_lock(inputs: ProjectInputs, deps: DepsPolicy | None = None) -> Report:
    """Offline: the lock files match the inputs and each other, every pin is hashed, no
    unmitigated high major-span finding. Reads only the two lock files."""
    from agentguard.lock.stored import read_stored
    from agentguard.rules.deps import LockOutOfSync, UnhashedPin, check_unknown_metadata
    from agentguard.rules.deps_age import check_young_releases
    from agentguard.rules.deps_spans import check_major_spans

    root = inputs.root
    if deps is None:
        from agentguard.config import load_config

        deps = load_config(root).deps
    policy = deps
    sources: list[Source] = [
        Source.ok("file", inputs.source, f"{len(inputs.requirements)} requirements")
    ]
    findings: list[Finding] = []
    prov: dict[str, JSONValue] = {"input_hash": inputs.input_hash, "input_source": inputs.source}
    from agentguard.lock.switch import SWITCH, pending

    if pending(root):  # killed between the two renames: the pair on disk may be mixed
        sources.append(
            Source.failed(
                "lockfile",
                SWITCH,
                "a write of the two lock files was interrupted after its switch; "
                "the pair on disk is not checked",
                error_code="lock-switch-interrupted",
                retryable=False,
            )
        )
        return make_report(
            "lock --check", [], sources, target=str(root), inputs=prov, facts=_sites(inputs)
        )
    try:
        stored = read_stored(root)
    except LockfileError as exc:
        sources.append(
            Source.failed(
                "lockfile",
                PYLOCK,
                str(exc),
                error_code=exc.code,
                retryable=False,
                remedy="Re-run `agentguard lock` to regenerate the lock files.",
            )
        )
        return make_report(
            "lock --check", [], sources, target=str(root), inputs=prov, facts=_sites(inputs)
        )
    if stored is None:
        backend = build_backend(inputs)
        package = (
            f" The project builds a package (`{backend}`): the people who install it resolve "
            "its ranges themselves, and a lock here does not reach them; what this tree "
            "deploys (an image, a CI job that runs the agent) installs whatever the ranges "
            "admit that day, which the install steps' own findings show."
            if backend
            else ""
        )
        findings.append(
            LockOutOfSync.finding(
                f"No lock: neither {PYLOCK} nor {REQUIREMENTS_LOCK} exists in {root}.{package}",
                locations=[Location(path=inputs.source)],
                fix="Run `agentguard lock` and commit both lock files"
                + (" (and install from them where this tree deploys)." if backend else "."),
                evidence={  # (an application's evidence as before: its fingerprint stays)
                    "expected_input_hash": inputs.input_hash,
                    "found": None,
                    **({"build_backend": backend} if backend else {}),
                },
                severity=Severity.MEDIUM if backend else None,
            )
        )
        return make_report(
            "lock --check", findings, sources, target=str(root), inputs=prov, facts=_sites(inputs)
        )
    sources.append(Source.ok("lockfile", PYLOCK, f"{len(stored.packages)} packages"))
    sources.append(
        Source.ok("lockfile", REQUIREMENTS_LOCK, f"{len(stored.requirements_pins)} pins")
    )
    digest = stored.tool.get("lock-digest")
    prov["lock_digest"] = str(digest) if digest else None
    prov["resolved_at"] = stored.tool.get("resolved-at")
    for name, found in (
        (PYLOCK, stored.input_hash),
        (REQUIREMENTS_LOCK, stored.requirements_input_hash),
    ):
        if found != inputs.input_hash:
            findings.append(
                LockOutOfSync.finding(
                    f"{name} was made from other inputs than {inputs.source} declares now "
                    f"(recorded {found or 'nothing'}, now {inputs.input_hash}).",
                    locations=[Location(path=name)],
                    fix="Run `agentguard lock` and commit both lock files.",
                    evidence={
                        "file": name,
                        "recorded_input_hash": found,
                        "input_hash": inputs.input_hash,
                    },
                )
            )
    a = {p.label for p in stored.packages}
    b = {p.label for p in stored.requirements_pins}
    in_sync = not findings and a == b
    if a != b:
        only_py = sorted(a - b)
        only_req = sorted(b - a)
        findings.append(
            LockOutOfSync.finding(
                f"{PYLOCK} and {REQUIREMENTS_LOCK} pin different packages.",
                locations=[Location(path=PYLOCK), Location(path=REQUIREMENTS_LOCK)],
                fix="Run `agentguard lock`; never edit one lock file by hand.",
                evidence={"only_in_pylock": only_py, "only_in_requirements": only_req},
            )
        )
    req_lines = entry_lines(root / REQUIREMENTS_LOCK)
    for pin in stored.requirements_pins:
        if pin.hashes and pin.version:
            continue
        findings.append(
            UnhashedPin.finding(
                f"{pin.label if pin.version else pin.name} has "
                f"{'no hash' if not pin.hashes else 'no exact pin'}; pip --require-hashes refuses the file.",
                locations=[
                    Location(
                        path=REQUIREMENTS_LOCK,
                        line=req_lines.get((pin.name, pin.version, pin.marker or "")),
                    )
                ],
                fix=Fix("Re-generate the lock with `agentguard lock`; do not edit it by hand."),
                evidence={
                    "package": pin.name,
                    "version": pin.version or None,
                    "marker": pin.marker,
                    "hashes": len(pin.hashes),
                },
            )
        )
    from agentguard.rules.deps_cover import check_environment_cover

    env = stored.tool.get("environment")
    cover = check_environment_cover(
        stored.tool.get("universal") is not False,
        {str(k): str(v) for k, v in env.items()} if isinstance(env, dict) else None,
        inputs.requires_python,
        PYLOCK,
    )
    findings += cover
    in_sync = in_sync and not cover and not any(f.rule_id == "AG104" for f in findings)
    findings += check_major_spans(stored.graph, policy)
    findings += check_unknown_metadata(stored.graph)
    young, _unknown = check_young_releases(
        stored.graph,
        stored.uploaded,
        dt.datetime.now(dt.timezone.utc),
        stored.tool.get("min-release-age"),
    )
    findings += young
    notes: list[str] = []
    if in_sync:
        forks = len(stored.requirements_pins) - len({p.name for p in stored.requirements_pins})
        notes.append(
            f"The lock is in sync with {inputs.source}: both files were made from these inputs "
            f"and pin the same {len(stored.requirements_pins)} entries, every one hashed"
            + (f" ({forks} more than one per package: forks)" if forks else "")
            + "."
        )
    return make_report(
        "lock --check",
        findings,
        sources,
        target=str(root),
        inputs=prov,
        notes=notes,
        facts=_sites(inputs),
    )


def _sites(inputs: ProjectInputs) -> dict[str, JSONValue]:
    """Where SARIF places AG101/AG102: each requirement's line in the project's input."""
    from agentguard.lock.sites import requirement_sites

    return {"requirement_sites": requirement_sites(inputs)}

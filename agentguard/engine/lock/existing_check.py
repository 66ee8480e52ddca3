"""`agentguard lock --check` on a project that locks with uv, Poetry or another PEP 751
writer: AG101, AG104 and the in-sync check (AG103) against the lock it has."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from packaging.requirements import Requirement
from packaging.version import InvalidVersion, Version

from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.lock.inputs import ProjectInputs
from agentguard.lock.readers.interface import ExistingLock
from agentguard.lock.uv_declared import UvDeclared
from agentguard.lock.uv_records import differences

RELOCK = {
    "uv.lock": "Run `uv lock` (or `agentguard lock`, which runs it and gates the result) and commit uv.lock.",
    "poetry.lock": "Run `poetry lock`, then `agentguard lock` to gate it, and commit poetry.lock.",
    "pylock.toml": "Re-generate pylock.toml with the tool that wrote it and commit it.",
}


def check_in_sync(
    lock: ExistingLock, inputs: ProjectInputs, declared_by_lock_tool: UvDeclared | None
) -> list[Finding]:
    """AG103: the lock was made from other requirements than the project declares now.

    ``declared_by_lock_tool`` is what the project declares in the form the lock records it
    (uv: the root package's requires-dist, compared as uv compares it: :mod:`.uv_records`);
    every declared requirement must also be held by a pin whose version it admits."""
    from agentguard.rules.deps import LockOutOfSync

    findings: list[Finding] = []
    fix = RELOCK.get(lock.format, RELOCK["pylock.toml"])
    declared = declared_by_lock_tool
    if lock.root_requires is not None and declared is not None and declared.records is not None:
        added, removed = differences(
            declared.records, _comparable(lock.root_requires, declared), declared.skip
        )
        if added or removed:
            findings.append(
                LockOutOfSync.finding(
                    f"{lock.path} was made from other requirements than {inputs.source} declares now"
                    f" (declared, not in the lock: {', '.join(added) or 'none'}; in the lock, no "
                    f"longer declared: {', '.join(removed) or 'none'}).",
                    locations=[Location(path=lock.path), Location(path=inputs.source)],
                    fix=fix,
                    evidence={"file": lock.path, "declared_only": added, "locked_only": removed},
                )
            )
    by_name: dict[str, list[str]] = {}
    for p in lock.pins:
        by_name.setdefault(p.name, []).append(p.version)
    for decl in inputs.requirements:
        req = decl.requirement
        versions = by_name.get(decl.name)
        if versions is None:
            if req.marker is not None:
                continue  # may be for a platform the lock does not cover
            problem = "is not in the lock"
        elif any(_admits(req, v) for v in versions):
            continue
        else:
            problem = f"is locked at {', '.join(versions)}, which {decl.text} does not admit"
        findings.append(
            LockOutOfSync.finding(
                f"{decl.name} (declared as {decl.text} in {decl.file}) {problem}: {lock.path} is "
                "out of date.",
                locations=[Location(path=decl.file, line=decl.line), Location(path=lock.path)],
                fix=fix,
                evidence={
                    "file": lock.path,
                    "package": decl.name,
                    "declared": decl.text,
                    "locked": versions or [],
                },
            )
        )
    return findings


def check_members_in_sync(
    lock: ExistingLock, members: Mapping[str, tuple[str, UvDeclared]]
) -> list[Finding]:
    """AG103 for each uv workspace member whose requirements differ from what uv.lock
    recorded for it (``members``: name -> (its pyproject.toml, its requirements))."""
    from agentguard.rules.deps import LockOutOfSync

    recorded = dict(lock.member_requires)
    out: list[Finding] = []
    for name, (path, declared) in sorted(members.items()):
        if declared.records is None:
            continue  # (dynamic: the caller reports it as not checked)
        then = recorded.get(name)
        if then is not None:
            added, removed = differences(
                declared.records, _comparable(then, declared), declared.skip
            )
            if not added and not removed:
                continue
        else:
            added, removed = [], []
        what = (
            f"workspace member {name} ({path}) is not in {lock.path}"
            if then is None
            else f"workspace member {name} ({path}) declares other requirements than "
            f"{lock.path} recorded (declared, not in the lock: {', '.join(added) or 'none'}; "
            f"in the lock, no longer declared: {', '.join(removed) or 'none'})"
        )
        out.append(
            LockOutOfSync.finding(
                what + ".",
                locations=[Location(path=path), Location(path=lock.path)],
                fix=RELOCK["uv.lock"],
                evidence={
                    "file": lock.path,
                    "member": name,
                    "declared_only": added,
                    "locked_only": removed,
                },
            )
        )
    return out


def _comparable(recorded: Iterable[str], declared: UvDeclared) -> list[str]:
    """The recorded requirements the declared ones can be compared with: all of them, or
    those outside any extra when the optional dependencies are dynamic (unknown)."""
    if not declared.extras_unknown:
        return list(recorded)
    return [r for r in recorded if "extra" not in r.partition(";")[2]]


def _admits(req: Requirement, version: str) -> bool:
    if not version:
        return True  # a local package (the project's own member)
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False


# the tool that installs from each lock format, and its re-lock command
_LOCK_TOOL = {"uv.lock": ("uv", "uv lock"), "poetry.lock": ("Poetry", "poetry lock")}


def check_hashes(lock: ExistingLock) -> list[Finding]:
    """AG104 for every downloaded pin the lock holds no hash for."""
    from agentguard.rules.deps import UnhashedPin

    out: list[Finding] = []
    for pin in lock.pins:
        if pin.local or pin.hashes:
            continue
        tool, relock = _LOCK_TOOL.get(lock.format, ("", "agentguard lock"))
        if pin.source == "git" and tool:
            what = (
                f"is pinned by a git commit, not by a file hash: {tool} checks out that commit "
                "and builds it at install time, with no hash of a file to check it against"
            )
        elif pin.source == "git":
            what = (
                "is pinned by a git commit, not by a file hash: `pip --require-hashes` refuses it"
            )
        else:
            how = "a direct URL" if pin.source == "url" else "a download"
            what = f"is {how} with no hash: a substituted file installs unnoticed"
        out.append(
            UnhashedPin.finding(
                f"{pin.name}=={pin.version} in {lock.path} {what}.",
                severity=Severity.MEDIUM if pin.source == "git" else None,
                locations=[Location(path=lock.path, line=pin.line)],
                fix=Fix(
                    "Depend on a released version from the index and re-lock with "
                    f"`{relock}` (the lock then holds its hashes)."
                ),
                evidence={
                    "package": pin.name,
                    "version": pin.version or None,
                    "hashes": 0,
                    "source": pin.source,
                },
            )
        )
    return out


def check_poetry_hash(lock: ExistingLock, pyproject: dict[str, Any], source: str) -> list[Finding]:
    """AG103 when poetry.lock's content-hash is not that of the pyproject.toml here: what
    `poetry check --lock` rejects (:mod:`agentguard.lock.poetry_hash`)."""
    from agentguard.lock.poetry_hash import content_hash, is_fresh
    from agentguard.rules.deps import LockOutOfSync

    recorded = lock.content_hash
    if lock.format != "poetry.lock" or not recorded or not pyproject:
        return []  # (no pyproject.toml read: nothing to compare)
    if is_fresh(pyproject, recorded, lock.tool_version):
        return []
    now = content_hash(pyproject)
    return [
        LockOutOfSync.finding(
            f"{lock.path} was made from another {source} than the one here: its content-hash "
            f"is not the hash of the dependency tables now ([project] dependencies, "
            "[dependency-groups], [tool.poetry] dependencies and groups), so `poetry check "
            "--lock` rejects it and `poetry install` refuses it.",
            locations=[Location(path=lock.path), Location(path=source)],
            fix=RELOCK["poetry.lock"],
            evidence={"file": lock.path, "recorded_content_hash": recorded, "content_hash": now},
        )
    ]

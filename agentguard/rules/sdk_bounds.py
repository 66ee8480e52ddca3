"""AG121: an agent SDK declared without an upper bound below its next major, judged from the
requirement declarations of the build files (facts only, no I/O); the rule itself is
:class:`agentguard.rules.buildfiles.UnboundedAgentSdk`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from agentguard import escape, redact
from agentguard.facts.graph import next_major_floor
from agentguard.facts.installs import RequirementDecl
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.buildfiles import UnboundedAgentSdk

_UPPER = ("<", "<=", "==", "===", "~=")
_LOWER = (">", ">=")


def sdk_bound(specifier: str) -> tuple[str, str | None] | None:
    """("unbounded" | "floor", floor version) when ``specifier`` has no upper bound."""
    try:
        spec = SpecifierSet(specifier)
    except InvalidSpecifier:
        return None
    if any(s.operator in _UPPER for s in spec):
        return None
    floors = [s.version for s in spec if s.operator in _LOWER]
    if not floors:
        return "unbounded", None
    return "floor", max(floors, key=_version_key)


def _version_key(text: str) -> Version:
    try:
        return Version(text)
    except InvalidVersion:
        return Version("0")


def _judged(d: RequirementDecl, watched: frozenset[str]) -> tuple[str, str | None] | None:
    """The bound AG121 judges a requirement by: a watched package with no upper bound."""
    if d.name is None or d.name not in watched or "@" in d.raw.split(";", 1)[0]:
        return None
    return sdk_bound(d.specifier)


def _folder(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else "."


def _cap(name: str, floor: str, held: Sequence[str] | None) -> tuple[str, str | None]:
    """The cap a fix proposes, and its snippet (None: no number can be given). On a 0.x
    line every minor is a major, so the floor's next minor would shut out every later
    release the project may already run (``anthropic>=0.39.0,<0.40`` where releases
    reach 0.125): the cap is put above the version the lock holds, or left for the user
    to fill in from the version they tested, never at the floor's next minor."""
    low = _version_key(floor)
    if low.major != 0:
        cap = f"{name}>={floor},<{next_major_floor(low)}"
        return cap, cap
    tested = max((_version_key(v) for v in held or ()), default=None)
    if tested is not None and tested >= low:
        cap = f"{name}>={floor},<{next_major_floor(tested)}"
        return cap, cap
    return f"{name}>={floor},<0.<the minor after the one you tested>", None


def lock_questions(
    decls: Sequence[RequirementDecl], watched: frozenset[str]
) -> dict[str, set[str]]:
    """Folder -> the packages whose pin in that folder's lock can change an AG121 finding
    (a pyproject.toml requirement AG121 judges). The project scan reads a lock only where
    this names a package: elsewhere no finding depends on what it holds."""
    asked: dict[str, set[str]] = {}
    for d in decls:
        if d.origin == "pyproject" and d.name is not None and _judged(d, watched) is not None:
            asked.setdefault(_folder(d.path), set()).add(d.name)
    return asked


def check_sdk_bounds(
    decls: Sequence[RequirementDecl],
    watched: frozenset[str],
    locked: Mapping[str, tuple[str, Mapping[str, Sequence[str]]]] | None = None,
) -> list[Finding]:
    """AG121 for each watched package declared without an upper bound. ``locked`` maps a
    folder to what the lock there (uv.lock, poetry.lock, pylock.toml) pins: a pyproject
    requirement its own lock holds fixed is mitigated (info)."""
    findings: list[Finding] = []
    for d in decls:
        bound = _judged(d, watched)
        if bound is None or d.name is None:
            continue
        kind, floor = bound
        where = {"requirements": "a requirements file", "pyproject": "pyproject.toml"}.get(
            d.origin, "an install command"
        )
        if kind == "unbounded":
            what = (
                "with no version constraint"
                if not d.specifier
                else f"as {d.name}{d.specifier}, with no bound"
            )
            cap = f"{d.name}==<the version you tested>"
            snippet = None
        lock_name, pins = (locked or {}).get(_folder(d.path), ("", {}))
        held = pins.get(d.name) if d.origin == "pyproject" else None  # as lock_questions
        if kind != "unbounded":
            what = f"as {d.name}{d.specifier}: a floor and no upper bound"
            cap, snippet = _cap(d.name, floor or "0", held)
        message = f"{d.name} is required in {where} {what}; every future major satisfies it."
        if held:
            message += (
                f" Mitigated: the project's lock ({lock_name}) holds {d.name}=={', '.join(held)};"
                " installs from it do not move (a re-lock can: cap it before the next one)."
            )
        findings.append(
            UnboundedAgentSdk.finding(
                message,
                severity=Severity.INFO if held else None,
                locations=[Location(path=d.path, line=d.line)],
                fix=Fix(
                    f"Pin the version you tested and install from a lock, or cap the major: `{cap}`.",
                    snippet=escape.snippet(snippet) if snippet else None,
                ),
                evidence={
                    "package": d.name,
                    "specifier": d.specifier,
                    "bound": kind,
                    "declared_in": d.origin,
                    "requirement": redact.url(d.raw),
                    **({"locked": list(held), "lock": lock_name} if held else {}),
                },
            )
        )
    return findings

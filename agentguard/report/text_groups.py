"""Findings that repeat one cause, shown once with a table of packages (text output only).

An image that drifts from its lock gives one AG110 finding per package (JSON and SARIF keep
them so: one result per package, each with its own location and fingerprint). Read by a
person, thirty near-identical paragraphs hide the point, so text shows one block per cause
(missing / extra / other version) and severity, with every package in a table.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from agentguard.findings import Finding, JSONValue, Severity

# rule id -> the evidence key naming the cause its findings are grouped by
GROUPED_RULES = {"AG110": "drift"}
# a cause shared by fewer findings than this is shown finding by finding
GROUP_AT = 3

_CAUSE = {
    "missing": "in the lock but not installed",
    "extra": "installed but not in the lock",
    "other-version": "installed at another version than the lock's",
}
_FIX = {
    "missing": "Install the lock as written: `pip install --require-hashes -r` the lock.",
    "extra": "Remove these packages from the image, or add them to the project's requirements "
    "and re-run `agentguard lock`.",
    "other-version": "Rebuild the image installing the lock with `--require-hashes`; where a "
    "new version is wanted, re-run `agentguard lock` and review it.",
}


@dataclass(frozen=True)
class FindingGroup:
    rule_id: str
    cause: str
    severity: Severity
    findings: tuple[Finding, ...]


def _key(f: Finding) -> tuple[str, str, Severity, bool] | None:
    field = GROUPED_RULES.get(f.rule_id)
    cause = f.evidence.get(field) if field else None
    if not isinstance(cause, str):
        return None
    return (f.rule_id, cause, f.severity, f.suppressed is not None)


def group_repeats(findings: Sequence[Finding]) -> list[Finding | FindingGroup]:
    """``findings`` in order, each cause with GROUP_AT or more findings replaced (where its
    first finding was) by one group."""
    counts: dict[tuple[str, str, Severity, bool], list[Finding]] = {}
    for f in findings:
        key = _key(f)
        if key is not None:
            counts.setdefault(key, []).append(f)
    out: list[Finding | FindingGroup] = []
    placed: set[tuple[str, str, Severity, bool]] = set()
    for f in findings:
        key = _key(f)
        members = counts.get(key) if key is not None else None
        if key is None or members is None or len(members) < GROUP_AT:
            out.append(f)
        elif key not in placed:
            placed.add(key)
            out.append(FindingGroup(key[0], key[1], key[2], tuple(members)))
    return out


def _versions(values: JSONValue) -> str:
    if not isinstance(values, list) or not values:
        return "-"
    out = []
    for v in values:
        if isinstance(v, dict):
            version, where = v.get("version"), v.get("location")
            out.append(f"{version} in {where}" if where else str(version))
        else:
            out.append(str(v))
    return ", ".join(out)


def _notes(f: Finding) -> str:
    notes = []
    if f.confidence.value != "high":
        notes.append(f"confidence: {f.confidence.value}")
    if f.ambiguous:
        notes.append("ambiguous")
    if f.suppressed:
        notes.append(f"suppressed: {f.suppressed}")
    return "; ".join(notes)


def _t(s: str, style: str = "") -> Text:
    """Data as a Text, escaped by the one terminal escaper (never parsed as markup; its
    controls never reach the table's capture, which is re-read as ANSI below)."""
    from agentguard.escape import terminal as visible  # (what report.text.visible is)

    return Text(visible(s), style=style)


def print_group(console: Console, group: FindingGroup, head: Text) -> None:
    """``head``: the severity and rule id, styled as for a single finding."""
    first = group.findings[0]
    head.append_text(_t(first.title))
    head.append(f"  ({len(group.findings)} packages)", style="dim")
    console.print(head)
    console.print(
        _t(f"  {len(group.findings)} packages are {_CAUSE.get(group.cause, group.cause)}.")
    )
    notes = [_notes(f) for f in group.findings]
    table = Table(show_edge=False, box=None, pad_edge=False, padding=(0, 1))
    for col in ("package", "locked", "installed", *(["note"] if any(notes) else [])):
        table.add_column(col, overflow="fold")
    for f, note in zip(group.findings, notes, strict=True):
        ev = f.evidence
        cells = [
            _t(str(ev.get("package", "?"))),
            _t(_versions(ev.get("locked"))),
            _t(_versions(ev.get("installed"))),
        ]
        table.add_row(*cells, *([_t(note, style="dim")] if any(notes) else []))
    with console.capture() as captured:
        console.print(Padding(table, (0, 0, 0, 2), expand=False))
    for line in captured.get().splitlines():  # whole lines, no trailing cell padding
        console.print(Text.from_ansi(line.rstrip()))
    lock = _lock_paths(group.findings)
    if lock:
        console.print(_t("  lock: " + ", ".join(lock), style="dim"))
    fix = _FIX.get(group.cause, first.fix.description)
    console.print(_t("  fix: " + fix, style="green"))


def _lock_paths(findings: Iterable[Finding]) -> list[str]:
    out: list[str] = []
    for f in findings:
        for loc in f.locations:
            if loc.path and loc.layer is None and loc.path not in out:
                out.append(loc.path)
    return out

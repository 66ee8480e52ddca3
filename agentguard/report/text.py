"""Text output for people (rich). Colour only when asked (a TTY without NO_COLOR)."""

from __future__ import annotations

import io
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentguard import escape
from agentguard.findings import Finding, Location, Report, Severity, SourceStatus
from agentguard.report.groups import grouped
from agentguard.report.text_groups import FindingGroup, group_repeats, print_group

_STYLE = {
    Severity.CRITICAL: "bold white on red",
    Severity.HIGH: "bold red",
    Severity.MEDIUM: "yellow",
    Severity.LOW: "cyan",
    Severity.INFO: "dim",
}
_STATUS_STYLE = {
    SourceStatus.OK: "green",
    SourceStatus.FAILED: "bold red",
    SourceStatus.SKIPPED: "yellow",
}


_LOCK_STATUS = {
    "refused": " (the re-lock was refused: nothing written; exit 1)",
    "not-written": " (nothing written: see the sources)",
}


def visible(s: str) -> str:
    """The terminal escaper (:func:`agentguard.escape.terminal`): ``s`` with every control
    character shown as an escape, and no ``##[``.

    Data is never parsed as rich markup either: text is always handed to rich as a
    :class:`~rich.text.Text` built from the escaped string (``[/x]``, ``app/[slug]/``
    print as written)."""
    return escape.terminal(s)


def _t(s: str, style: str = "") -> Text:
    return Text(visible(s), style=style)


# Low and info findings beyond this many per rule are summarised in one line.
SUMMARISE_AFTER = 5


def _finding(console: Console, f: Finding) -> None:
    head = Text()
    head.append(f"{f.severity.value.upper():8}", style=_STYLE[f.severity])
    head.append(f" {f.rule_id} ", style="bold")
    head.append(visible(f.title))
    if f.ambiguous:
        head.append("  [ambiguous]", style="magenta")
    if f.context and f.context != "production":
        head.append(visible(f"  [{f.context}]"), style="dim")
    if f.confidence.value != "high":
        head.append(f"  (confidence: {f.confidence.value})", style="dim")
    if f.suppressed:
        head.append(visible(f"  (suppressed: {f.suppressed})"), style="dim")
    console.print(head)
    console.print(_t("  " + f.message))
    for loc in f.locations:
        if len(loc.dependency_path) > 1:
            console.print(_t("  path: ", style="dim"), end="")
            for depth, node in enumerate(loc.dependency_path):
                prefix = "" if depth == 0 else "        " + "   " * (depth - 1) + "└─ "
                console.print(_t(prefix + node))
            if loc.path or loc.layer:
                console.print(
                    _t(
                        "  at: "
                        + Location(path=loc.path, line=loc.line, layer=loc.layer).describe(),
                        style="dim",
                    )
                )
        else:
            console.print(_t("  at: " + loc.describe(), style="dim"))
    console.print(_t("  fix: " + f.fix.description, style="green"))
    if f.fix.snippet:
        for line in f.fix.snippet.removesuffix("\n").split("\n"):
            console.print(_t("       " + line, style="green"))


def _group(console: Console, group: list[Finding]) -> None:
    """One subject (an agent configuration), everything the rules say of it, compactly:
    each rule's message, its location where it differs, and each fix once."""
    worst = group[0]
    head = Text()
    head.append(f"{worst.severity.value.upper():8}", style=_STYLE[worst.severity])
    head.append(" agent configuration ", style="bold")
    head.append(visible(worst.subject or ""))
    if worst.context and worst.context != "production":
        head.append(visible(f"  [{worst.context}]"), style="dim")
    console.print(head)
    shown_at = worst.subject.rsplit(" at ", 1)[-1] if worst.subject else ""
    for f in group:
        line = Text("  ")
        line.append(f"{f.rule_id} {f.severity.value}", style=_STYLE[f.severity])
        line.append(visible(f" {f.title}"))
        if f.confidence.value != "high":
            line.append(f"  (confidence: {f.confidence.value})", style="dim")
        console.print(line)
        console.print(_t("    " + f.message))
        for loc in f.locations:
            if Location(path=loc.path, line=loc.line).describe() != shown_at or loc.layer:
                console.print(_t("    at: " + loc.describe(), style="dim"))
    fixes: dict[str, list[str]] = {}
    for f in group:  # each fix once, with every snippet that goes with it
        snippets = fixes.setdefault(f.fix.description, [])
        if f.fix.snippet and f.fix.snippet not in snippets:
            snippets.append(f.fix.snippet)
    for description, snippets in fixes.items():
        console.print(_t("  fix: " + description, style="green"))
        if not snippets:
            continue  # (a fix with no command: no empty line under it)
        for snippet_line in "\n".join(s.removesuffix("\n") for s in snippets).split("\n"):
            console.print(_t("       " + snippet_line, style="green"))


def _entries(findings: list[Finding]) -> list[list[Finding] | FindingGroup]:
    """What the text report shows, in report order: an agent configuration's findings as
    one entry (report/groups.py), and findings of one cause over many packages as one
    table (report/text_groups.py), where the first of them stood."""
    groups = grouped(findings)
    singles = [g[0] for g in groups if len(g) == 1]
    member_of: dict[int, FindingGroup] = {}
    for item in group_repeats(singles):
        if isinstance(item, FindingGroup):
            member_of.update((id(m), item) for m in item.findings)
    out: list[list[Finding] | FindingGroup] = []
    placed: set[int] = set()
    for group in groups:
        table = member_of.get(id(group[0])) if len(group) == 1 else None
        if table is None:
            out.append(group)
        elif id(table) not in placed:
            placed.add(id(table))
            out.append(table)
    return out


def _outside_production(group: list[Finding]) -> str | None:
    """The context of an agent configuration in example, test or docs code (or None)."""
    ctx = group[0].context
    return ctx if len(group) > 1 and ctx not in (None, "production") else None


def _delta(console: Console, delta: Any) -> None:
    """``check --base``: what the change adds (the findings above), resolves, and moves."""
    from agentguard.report.delta_lines import (
        agent_lines,
        growth_lines,
        headline,
        lock_lines,
        resolved_lines,
    )

    def q(s: str) -> str:
        return s

    console.print(_t(headline(delta, q), style="bold"))
    for line in growth_lines(delta, q):
        console.print(_t(f"  {line}", style="bold red"))
    resolved = resolved_lines(delta, q)
    if resolved:
        console.print(_t(f"  resolved by this change (good news): {len(resolved)}", style="green"))
        for line in resolved:
            console.print(_t(f"    {line}", style="green"))
    for line in lock_lines(delta, q):
        console.print(_t(f"  lock: {line}"))
    agents = agent_lines(delta, q)
    if agents is None:
        console.print(_t("  agent capabilities: not compared", style="dim"))
    elif not agents:
        console.print(_t("  agent capabilities: no change", style="dim"))
    for line in agents or ():
        console.print(_t(f"  agent: {line}"))
    console.print()


def render_text(
    report: Report, *, color: bool = False, verbose: bool = False, show_suppressed: bool = False
) -> str:
    """``verbose``: every finding (low ones not summarised), suppressed ones and every source;
    ``show_suppressed``: the suppressed findings only (harden lists what it fixed so)."""
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        width=110,
        highlight=False,
        soft_wrap=True,
        # the tables' titles and headers are rich strings: no `:name:` in them is an emoji,
        # and rich's table of 3,600 emoji names is not loaded as the run ends
        emoji=False,
    )
    prov = report.provenance
    console.print(_t(f"agentguard {prov.tool_version} {prov.command}", style="bold"), end="")
    console.print(_t(f"  target: {prov.target}" if prov.target else ""), end="")
    console.print(_t(f"  at {prov.made_at}", style="dim"))
    for key, value in prov.inputs.items():
        console.print(_t(f"  {key}: {value}", style="dim"))
    trace = report.configuration
    if trace is not None:  # (loud when the scanned folder's own file changed findings)
        loud = trace.by_the_scanned_folder > 0
        console.print(_t(f"  {trace.describe()}", style="bold yellow" if loud else "dim"))

    shown_per_rule: dict[str, int] = {}
    hidden: dict[str, int] = {}
    shown = [f for f in report.findings if not f.suppressed or verbose or show_suppressed]
    for entry in _entries(shown):
        if isinstance(entry, FindingGroup):  # one cause, many packages: one block, one table
            console.print()
            head = Text()
            head.append(f"{entry.severity.value.upper():8}", style=_STYLE[entry.severity])
            head.append(f" {entry.rule_id} ", style="bold")
            print_group(console, entry, head)
            continue
        group = entry
        f = group[0]
        ctx = _outside_production(group)
        key = (
            f.rule_id
            if len(group) == 1
            else f"agent configuration in {ctx} code"
            if ctx
            else "agent configuration"
        )
        n = shown_per_rule.get(key, 0)
        # (configurations in example and test code: a few, then a count, at any grade)
        if not verbose and (f.severity <= Severity.LOW or ctx) and n >= SUMMARISE_AFTER:
            hidden[key] = hidden.get(key, 0) + 1
            continue
        shown_per_rule[key] = n + 1
        console.print()
        if len(group) == 1:
            _finding(console, f)
        else:
            _group(console, group)
    for key, count in sorted(hidden.items()):
        what = (
            f"{key} findings (low/info"
            if key.startswith("AG")
            else "agent configuration entries (low/info"
            if key == "agent configuration"
            else key.replace("agent configuration", "agent configurations") + " ("
        )
        sep = "; " if what.endswith("info") else ""
        console.print()  # (a blank line: a newline inside the text would be escaped)
        console.print(_t(f"  ... and {count} more {what}{sep}--verbose shows all)", style="dim"))

    console.print()
    delta: Any = report.facts.get("delta")
    if delta:
        _delta(console, delta)
    bad = [s for s in report.sources if s.status is not SourceStatus.OK]
    ok_count = len(report.sources) - len(bad)
    if verbose or bad:
        table = Table(title="sources", show_lines=False, title_justify="left")
        table.add_column("status")
        table.add_column("kind")
        table.add_column("name", overflow="fold")
        table.add_column("reason", overflow="fold")
        for s in report.sources if verbose else bad:
            reason = s.reason or ""
            if s.remedy:  # a failed source says what to do
                reason += f" -- what to do: {s.remedy}"
            table.add_row(
                _t(s.status.value, style=_STATUS_STYLE[s.status]),
                _t(s.kind),
                _t(s.name),
                _t(reason),
            )
        console.print(table)
    console.print(
        _t(
            f"sources: {ok_count} ok, {len(report.failed_sources)} failed, "
            f"{len(bad) - len(report.failed_sources)} skipped"
        )
    )

    active = report.active_findings()
    summary = Table(title="findings", title_justify="left")
    summary.add_column("severity")
    summary.add_column("count", justify="right")
    for sev in sorted(Severity, reverse=True):
        count = sum(1 for f in active if f.severity is sev)
        if count:
            summary.add_row(_t(sev.value, style=_STYLE[sev]), _t(str(count)))
    if active:
        console.print(summary)
    suppressed = len(report.findings) - len(active)
    tail = f"{len(active)} findings" + (f", {suppressed} suppressed" if suppressed else "")
    if not report.complete:
        tail += " -- INCOMPLETE: a source failed, so this is not a clean bill of health"
    elif not active and len(bad) > len(report.failed_sources):
        tail += " (some sources were skipped: see the table above)"
    elif not active:
        tail += " (every source was read)"
    console.print(_t(tail, style="bold"))
    if report.status is not None:
        console.print(
            _t(f"Status: {report.status}" + _LOCK_STATUS.get(report.status, ""), style="bold")
        )
    for note in report.notes:
        console.print(_t(note, style="dim"))
    return escape.commands(buf.getvalue())

"""Text output for people (rich). Colour only when asked (a TTY without NO_COLOR)."""

from __future__ import annotations

import io
import re

from rich.console import Console
from rich.table import Table
from rich.text import Text

from agentguard.findings import Finding, Location, Report, Severity, SourceStatus

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

# Shown as escapes, never sent raw: C0/C1 controls (ESC starts every terminal sequence:
# OSC 52 writes the clipboard, OSC 0 the title; CR and LF forge lines), DEL, and the
# invisible format characters that reorder or hide text (bidi overrides, zero-width).
_CONTROL = re.compile(
    "[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]"
)
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(s: str) -> str:
    """The one terminal escaper: ``s`` with every control character shown as an escape.

    Data is never parsed as rich markup either: text is always handed to rich as a
    :class:`~rich.text.Text` built from the escaped string (``[/x]``, ``app/[slug]/``
    print as written)."""
    if not _CONTROL.search(s):
        return s
    return _CONTROL.sub(_escape, s)


def _escape(m: re.Match[str]) -> str:
    ch = m.group(0)
    code = ord(ch)
    if ch in _NAMED:
        return _NAMED[ch]
    if 0xDC80 <= code <= 0xDCFF:  # a non-UTF-8 byte of a file name (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


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
        for line in f.fix.snippet.splitlines():
            console.print(_t("       " + line, style="green"))


def render_text(report: Report, *, color: bool = False, verbose: bool = False) -> str:
    buf = io.StringIO()
    console = Console(
        file=buf,
        force_terminal=color,
        no_color=not color,
        width=110,
        highlight=False,
        soft_wrap=True,
    )
    prov = report.provenance
    console.print(_t(f"agentguard {prov.tool_version} {prov.command}", style="bold"), end="")
    console.print(_t(f"  target: {prov.target}" if prov.target else ""), end="")
    console.print(_t(f"  at {prov.made_at}", style="dim"))
    for key, value in prov.inputs.items():
        console.print(_t(f"  {key}: {value}", style="dim"))

    shown_per_rule: dict[str, int] = {}
    hidden: dict[str, int] = {}
    for f in report.findings:
        if f.suppressed and not verbose:
            continue
        n = shown_per_rule.get(f.rule_id, 0)
        if not verbose and f.severity <= Severity.LOW and n >= SUMMARISE_AFTER:
            hidden[f.rule_id] = hidden.get(f.rule_id, 0) + 1
            continue
        shown_per_rule[f.rule_id] = n + 1
        console.print()
        _finding(console, f)
    for rule_id, count in sorted(hidden.items()):
        console.print(
            _t(
                f"\n  ... and {count} more {rule_id} findings (low/info; --verbose shows all)",
                style="dim",
            )
        )

    console.print()
    bad = [s for s in report.sources if s.status is not SourceStatus.OK]
    ok_count = len(report.sources) - len(bad)
    if verbose or bad:
        table = Table(title="sources", show_lines=False, title_justify="left")
        table.add_column("status")
        table.add_column("kind")
        table.add_column("name", overflow="fold")
        table.add_column("reason", overflow="fold")
        for s in report.sources if verbose else bad:
            table.add_row(
                _t(s.status.value, style=_STATUS_STYLE[s.status]),
                _t(s.kind),
                _t(s.name),
                _t(s.reason or ""),
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
    for note in report.notes:
        console.print(_t(note, style="dim"))
    return buf.getvalue()

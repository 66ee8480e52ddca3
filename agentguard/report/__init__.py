"""Output formats. Each renders a finished :class:`~agentguard.findings.Report`; none checks anything."""

from __future__ import annotations

import enum
from pathlib import Path

from agentguard import escape, redact
from agentguard.findings import Report


class Format(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


def render(
    report: Report,
    fmt: Format,
    *,
    color: bool = False,
    verbose: bool = False,
    sarif_root: Path | None = None,
    show_suppressed: bool = False,
) -> str:
    """The report in ``fmt``, every secret it holds redacted first (one redactor for
    every format: :mod:`agentguard.redact`), then escaped for its channel
    (:mod:`agentguard.escape`: a JSON report on a CI log forges no runner command either). ``sarif_root``: the folder SARIF URIs are
    relative to (default: the git top level)."""
    report = redact.scrub(report)
    if fmt is Format.JSON:
        from agentguard.report.json_out import render_json

        return escape.json_text(render_json(report))
    if fmt is Format.SARIF:
        from agentguard.report.sarif import render_sarif

        return escape.json_text(render_sarif(report, sarif_root=sarif_root))
    from agentguard.report.text import render_text

    return render_text(report, color=color, verbose=verbose, show_suppressed=show_suppressed)

"""The rule catalogue (``rules``) and a rule's page (``explain``), in every output format.

Text: ``rules`` is a table; ``explain`` is the rule's Markdown page, drawn by rich for a
terminal and written plain (Markdown, as committed in ``docs/rules``, without the
generated-file comment) to a pipe or a file. JSON: ``"schema": "agentguard.rules/1"``
(``agentguard/schemas/rules-1.json``). SARIF: a run that describes the rules and reports
no results.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

from agentguard import __version__
from agentguard.findings import JSONValue
from agentguard.report import Format
from agentguard.rules.base import Rule

SCHEMA = "agentguard.rules/1"


def plain_page(rule: type[Rule]) -> str:
    """The rule's page as Markdown, without the comment that marks the generated docs file."""
    from agentguard.docs import GENERATED, rule_page

    page = rule_page(rule)
    if page.startswith(GENERATED):
        page = page[len(GENERATED) :].lstrip("\n")
    return page


def rules_to_json(rules: Sequence[type[Rule]], *, pages: bool) -> dict[str, JSONValue]:
    entries: list[JSONValue] = []
    for r in rules:
        entry: dict[str, JSONValue] = {
            "id": r.id,
            "name": r.name,
            "title": r.title,
            "default_severity": r.default_severity.value,
            "family": r.family,
        }
        if pages:
            entry["page"] = plain_page(r)
        entries.append(entry)
    return {"schema": SCHEMA, "tool_version": __version__, "rules": entries}


def _terminal_width() -> int:
    import shutil

    return shutil.get_terminal_size().columns


def _table(rules: Sequence[type[Rule]], *, color: bool, terminal: bool) -> str:
    from rich.console import Console
    from rich.table import Table

    table = Table(show_edge=False, box=None, pad_edge=False)
    for col in ("id", "name", "severity", "title"):
        table.add_column(col, no_wrap=col != "title")
    for r in rules:
        table.add_row(r.id, r.name, r.default_severity.value, r.title)
    buf = io.StringIO()
    width = _terminal_width() if terminal else 160  # a pipe gets whole lines, never wrapped
    console = Console(
        file=buf, force_terminal=color, no_color=not color, highlight=False, width=width
    )
    console.print(table)
    return "".join(line.rstrip() + "\n" for line in buf.getvalue().splitlines())


def _page(rule: type[Rule], *, color: bool, terminal: bool) -> str:
    page = plain_page(rule)
    if not terminal:
        return page
    from rich.console import Console
    from rich.markdown import Markdown

    buf = io.StringIO()
    Console(
        file=buf, force_terminal=color, no_color=not color, highlight=False, width=_terminal_width()
    ).print(Markdown(page))
    return buf.getvalue()


def render_catalogue(
    rules: Sequence[type[Rule]],
    fmt: Format,
    *,
    page: bool,
    terminal: bool = False,
    color: bool = False,
) -> str:
    """``page``: one rule's page (explain) rather than the table (rules)."""
    if fmt is Format.JSON:
        import json

        return json.dumps(rules_to_json(rules, pages=page), indent=2) + "\n"
    if fmt is Format.SARIF:
        import json

        from agentguard.report.sarif import catalogue_to_sarif

        return json.dumps(catalogue_to_sarif(rules), indent=2) + "\n"
    if page:
        return "".join(_page(r, color=color, terminal=terminal) for r in rules)
    return _table(rules, color=color, terminal=terminal)

"""`agentguard rules` and `agentguard explain`: the rule catalogue, as a list or one rule's
page (see :mod:`agentguard.cli` for the application)."""

from __future__ import annotations

import os
from typing import Annotated

import typer

from agentguard.cli_shared import FormatOpt, OutputOpt, _terminal, fail_usage, write_result
from agentguard.report import Format


def rules_cmd(fmt: FormatOpt = Format.TEXT, output: OutputOpt = None) -> None:
    """List every rule: id, name, default severity, title."""
    from agentguard.report.catalogue import render_catalogue
    from agentguard.rules.base import all_rules

    terminal = output is None and _terminal()
    text = render_catalogue(
        all_rules(),
        fmt,
        page=False,
        terminal=terminal,
        color=terminal and "NO_COLOR" not in os.environ,
    )
    write_result(text, output)


def explain(
    rule_id: Annotated[str, typer.Argument(help="A rule id, e.g. AG101.")],
    fmt: FormatOpt = Format.TEXT,
    output: OutputOpt = None,
) -> None:
    """Print a rule's page: what it checks, why it matters, an example, what to do instead."""
    from agentguard.report.catalogue import render_catalogue
    from agentguard.rules.base import get_rule

    try:
        rule = get_rule(rule_id)
    except KeyError as exc:
        fail_usage(str(exc.args[0]))
    terminal = output is None and _terminal()
    text = render_catalogue(
        [rule], fmt, page=True, terminal=terminal, color=terminal and "NO_COLOR" not in os.environ
    )
    write_result(text, output)

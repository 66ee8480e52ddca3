"""The command-line reference page, generated from the typer commands themselves.

``python -m agentguard.cli_reference`` writes ``docs/reference/cli.md``; ``--check`` writes
nothing and exits 1 when the committed page differs from the commands, so the reference
cannot drift from ``agentguard --help`` (CI runs the check through the tests).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import typer

GENERATED = (
    "<!-- generated from the commands by `python -m agentguard.cli_reference`; do not edit -->"
)
DEFAULT_OUT = Path("docs/reference/cli.md")


# typer carries its own copy of click, so the commands are read by their attributes, which
# both copies share, not by isinstance against one of them.
Command = Any
Param = Any


def root_command() -> Command:
    from agentguard.cli import app

    return typer.main.get_command(app)


def commands(group: Command) -> Iterator[tuple[str, Command]]:
    """The visible subcommands, in the order ``--help`` lists them."""
    ctx = typer.Context(group, info_name="agentguard")
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        if command is not None and not command.hidden:
            yield name, command


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _names(param: Param) -> str:
    if param.param_type_name == "argument":
        return f"`{param.human_readable_name}`"
    names = [*param.opts, *param.secondary_opts]
    return ", ".join(f"`{n}`" for n in names)


def _value(param: Param) -> str:
    if param.param_type_name == "option" and param.is_flag and not param.secondary_opts:
        return "flag"
    kind = param.type
    if getattr(kind, "choices", None):
        return " \\| ".join(f"`{c}`" for c in kind.choices)
    return _cell(str(kind.name).upper())


def _default(param: Param) -> str:
    if param.param_type_name == "option" and param.is_flag and not param.secondary_opts:
        return ""
    if param.required:
        return "required"
    default = param.default
    if default is None or default == () or default == []:
        return ""
    if isinstance(default, bool) and param.param_type_name == "option" and param.secondary_opts:
        return f"`{param.opts[0] if default else param.secondary_opts[0]}`"
    value = getattr(default, "value", default)
    if isinstance(value, (list, tuple)):
        return ", ".join(f"`{v}`" for v in value)
    return f"`{value}`"


def visible_params(command: Command) -> list[Param]:
    return [
        p
        for p in command.params
        if not getattr(p, "hidden", False) and p.name != "help" and "--help" not in p.opts
    ]


def command_section(name: str, command: Command) -> list[str]:
    ctx = typer.Context(command, info_name=f"agentguard {name}")
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines = [f"## `agentguard {name}`", "", "```text", f"agentguard {name} {usage}", "```", ""]
    if command.help:
        lines += [command.help.strip().replace("\b\n", ""), ""]
    params = visible_params(command)
    if params:
        lines += ["| option | value | default | what it does |", "|---|---|---|---|"]
        for p in params:
            text = getattr(p, "help", None) or ""
            lines.append(f"| {_names(p)} | {_value(p)} | {_default(p)} | {_cell(text)} |")
        lines.append("")
    return lines


def page() -> str:
    group = root_command()
    lines = [
        GENERATED,
        "",
        "# Command-line reference",
        "",
        (group.help or "").strip(),
        "",
        "Every command below also takes `--help`. The exit codes are shared by all of them.",
        "",
    ]
    for name, command in commands(group):
        lines += command_section(name, command)
    return "\n".join(lines).rstrip("\n") + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentguard.cli_reference", description=__doc__)
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="default: docs/reference/cli.md"
    )
    parser.add_argument("--check", action="store_true", help="exit 1 when the page drifted")
    args = parser.parse_args(argv)
    text = page()
    current = args.out.read_text(encoding="utf-8") if args.out.is_file() else None
    if args.check:
        if current != text:
            sys.stderr.write(
                f"stale: {args.out}; regenerate with: python -m agentguard.cli_reference\n"
            )
            return 1
        return 0
    if current != text:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text, encoding="utf-8")
        sys.stderr.write(f"wrote {args.out}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

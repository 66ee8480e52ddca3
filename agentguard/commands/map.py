"""`agentguard map`: what each agent of a project (or an image) can read, run and reach,
as text for people, JSON (schema ``agentguard/schemas/map-1.json``) or a Mermaid diagram.

It gathers what `inspect` gathers (the same readers, the same configuration: excluded
paths are not read) and renders the agent capability map. Exit 0, or 3 when a source
failed (the map may then miss an agent); findings do not change the exit code: `inspect`
and `check` judge."""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from agentguard.cli_shared import (
    ConfigOpt,
    NoProjectConfigOpt,
    OutputOpt,
    QuietOpt,
    TimeoutOpt,
    fail_usage,
    internal_error_source,
    write_result,
)
from agentguard.engine import ExitCode, UsageError, make_report
from agentguard.facts.capabilities import CapabilityMap
from agentguard.findings import Report


class MapFormat(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    MERMAID = "mermaid"
    MARKDOWN = "markdown"


def map_cmd(
    target: Annotated[
        str,
        typer.Argument(
            help="A project folder, a compose file, a file, an image (name:tag, id, digest), "
            "a container, a `docker save` tarball or an OCI layout."
        ),
    ] = ".",
    kind: Annotated[
        str | None,
        typer.Option("--kind", help="TARGET's kind when its name says nothing (as `inspect`)."),
    ] = None,
    config_file: ConfigOpt = None,
    no_project_config: NoProjectConfigOpt = False,
    timeout: TimeoutOpt = None,
    fmt: Annotated[
        MapFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (one block per agent), json, mermaid, or markdown (the agents and the "
            "diagram, for a job summary or a pull request comment).",
        ),
    ] = MapFormat.TEXT,
    output: OutputOpt = None,
    quiet: QuietOpt = False,
) -> None:
    """Map each agent: where it is defined, what runs it, where it works, its tools, paths,
    MCP servers, secrets (by name) and model fallbacks, with evidence for every edge."""
    from agentguard.engine.inspect_run import InspectOptions, run_with_maps
    from agentguard.facts.capabilities_json import merge_maps
    from agentguard.inspect.targets import parse_kind
    from agentguard.progress import progress
    from agentguard.watchdog import RunDeadline, run_deadline

    try:
        target_kind, file_kind = parse_kind(kind)
        opts = InspectOptions(
            target=target,
            kind=target_kind,
            file_kind=file_kind,
            discover_lock=False,
            config_file=config_file,
            project_config=not no_project_config,
        )
        with run_deadline(timeout), progress("mapping", quiet=quiet) as step:
            report, _config, maps = run_with_maps(opts, command="map", progress=step)
    except UsageError as exc:
        fail_usage(str(exc))
    except RunDeadline as exc:
        from agentguard.watchdog import deadline_source

        report, maps = make_report("map", [], [deadline_source(target, exc)], target=target), ()
    except Exception as exc:  # agentguard's own failure: a map that says so, exit 3
        source = internal_error_source(exc, target)
        report, maps = make_report("map", [], [source], target=target), ()
    write_result(render_map(report, merge_maps(maps), fmt), output)
    raise typer.Exit(int(ExitCode.INCOMPLETE if report.failed_sources else ExitCode.OK))


def render_map(report: Report, merged: CapabilityMap | None, fmt: MapFormat) -> str:
    if fmt is MapFormat.JSON:
        from agentguard.report.map_json import render_map_json

        text = render_map_json(report, merged)
    elif fmt is MapFormat.MARKDOWN:
        from agentguard.report.map_mermaid import render_map_markdown

        text = render_map_markdown(report, merged)
    elif fmt is MapFormat.MERMAID:
        from agentguard.report.map_mermaid import render_map_mermaid

        text = render_map_mermaid(merged)
    else:
        from agentguard.report.map_text import render_map_text

        text = render_map_text(report, merged)
    return text

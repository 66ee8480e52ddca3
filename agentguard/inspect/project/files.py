"""One file at a time: the cheap pre-filter, then the parser for its kind.

Code files are parsed only when a byte search finds a name that can matter (an SDK
import, a framework, ``mcp``, a ``claude`` command); everything else is counted, not
parsed. A file that does not parse is a failed source with its line, never an empty
result; nothing here raises for bad input.
"""

from __future__ import annotations

import gc
import re
import sys
from typing import TYPE_CHECKING

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.project.lined import PARSE_FAILURES, document_error
from agentguard.inspect.project.needles import (
    ACTION_NEEDLE,
    as_shell_reads,
    escaped_command,
    has_cli_use,
    has_engine_cli_use,
)
from agentguard.inspect.project.outcome import FileOutcome as FileOutcome
from agentguard.inspect.project.outcome import failed_source as failed_source
from agentguard.inspect.project.outcome import not_utf8_source
from agentguard.inspect.project.python_prefilter import MAP_MODULES as MAP_MODULES
from agentguard.inspect.project.python_prefilter import PY_MODULES as PY_MODULES
from agentguard.inspect.project.python_prefilter import python_may_matter as python_may_matter
from agentguard.inspect.project.python_prefilter import (
    python_risk_may_matter as python_risk_may_matter,
)
from agentguard.inspect.project.python_source import as_python_reads
from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere
from agentguard.inspect.project.servers_needle import names_servers

if TYPE_CHECKING:
    from agentguard.facts.agents import McpServer
    from agentguard.inspect.project.python_agents import Wanted

TS_NEEDLE = b"@anthropic-ai/claude"
_PY = f"{sys.version_info.major}.{sys.version_info.minor}"


def process_file(
    path: str, kind: str, data: bytes, origin: str = "project", wanted: Wanted | None = None
) -> FileOutcome:
    """Facts and sources from one file. Never raises for bad input. ``wanted``: a Python
    file's readers, when the caller has worked them out from ``data`` already."""
    wide = not_utf8_source(path, kind, data)
    if wide is not None:
        return FileOutcome(sources=[wide], read=False)
    data = as_shell_reads(path, data)  # (what the shell runs: its NUL bytes dropped)
    out = FileOutcome()
    try:
        _process(path, kind, data, origin, out, wanted)
    except RecursionError:
        out = FileOutcome(sources=[failed_source(path, "nested too deeply to analyse", "too-deep")])
    except MemoryError:
        out = FileOutcome(sources=[failed_source(path, "too large to analyse", "too-large")])
    except PARSE_FAILURES as exc:  # this file's failure: its failed source, nothing else's
        err = document_error(exc)
        out = FileOutcome(sources=[failed_source(path, str(err), err.code)])
    except Exception as exc:  # a bug met on this file: still this file's alone
        out = FileOutcome(
            sources=[
                failed_source(
                    path, f"agentguard failed on this file: {type(exc).__name__}", "internal-error"
                )
            ]
        )
    _cap(path, out)
    shell = kind in _SHELL_KINDS  # (what the runner expands, which the readers do not)
    if kind in _ESCAPE_READ and escaped_command(data, shell=shell):
        why = (
            "a claude/codex/gemini command line that only its runner's expansion spells"
            " (\\x63, \\u0063, \\143, a joined line, c''laude): not read, the readers read"
            " the text as written; write it plainly"
        )
        out.sources.append(failed_source(path, why, "escaped-command"))
    return out


# the kinds read by the byte needles and the line readers (the settings, MCP and engine
# configuration readers parse their JSON/TOML whole, escapes decoded)
_ESCAPE_READ = frozenset({"python", "script", "ts", "container"})
_SHELL_KINDS = frozenset({"script", "container"})  # (scripts, workflows, Dockerfiles)


MAX_FACTS_PER_FILE = 200  # agent configurations (and tools, servers...) from one file


def _cap(path: str, out: FileOutcome) -> None:
    """Keep at most :data:`MAX_FACTS_PER_FILE` of each kind of fact from one file: a
    generated file of 60,000 agent configurations would otherwise mean 360,000 findings
    and gigabytes. What is cut is a failed source (the file was not wholly checked)."""
    if len(out.definitions) > MAX_FACTS_PER_FILE:  # (drawn by the map only: the map says so)
        out.definitions_cut = len(out.definitions)
        del out.definitions[MAX_FACTS_PER_FILE:]
    decorations = len(out.tool_decorations)
    if decorations > MAX_FACTS_PER_FILE:  # (those seen to call something kept first)
        from agentguard.inspect.project.python_tool_defs import keep_tools

        kept, _cut = keep_tools([d.tool for d in out.tool_decorations], MAX_FACTS_PER_FILE)
        ids = {id(t) for t in kept}
        out.tool_decorations[:] = [d for d in out.tool_decorations if id(d.tool) in ids]
    cut = {
        what: len(facts)
        for what, facts in (
            ("agent configurations", out.configs),
            ("tool grants", out.grants),
            ("container harnesses", out.harnesses),
            ("MCP servers", out.mcp_servers),
            ("fallback sites", out.fallbacks),
        )
        if len(facts) > MAX_FACTS_PER_FILE
    }
    if decorations > MAX_FACTS_PER_FILE:
        cut["tool decorations"] = decorations
    if not cut:
        return
    del out.configs[MAX_FACTS_PER_FILE:]
    del out.grants[MAX_FACTS_PER_FILE:]
    del out.harnesses[MAX_FACTS_PER_FILE:]
    del out.mcp_servers[MAX_FACTS_PER_FILE:]
    del out.fallbacks[MAX_FACTS_PER_FILE:]
    found = ", ".join(f"{n} {what}" for what, n in cut.items())
    out.sources.append(
        Source.failed(
            "file",
            path,
            f"{found} in one file, over the cap of {MAX_FACTS_PER_FILE}: only the first "
            f"{MAX_FACTS_PER_FILE} of each were checked",
            error_code="cap-file-facts",
            retryable=False,
            remedy="Exclude the file if it is generated; otherwise split it.",
        )
    )


def _process(
    path: str, kind: str, data: bytes, origin: str, out: FileOutcome, wanted: Wanted | None
) -> None:
    text = data  # (what the byte tests read: a Python file's as Python decodes it)
    if kind == "python":
        text = as_python_reads(data)
    may = kind != "python" or python_may_matter(text)
    if kind == "python":
        if may:
            _python(path, data, text, origin, out, wanted)
        elif may_decorate_elsewhere(text):  # (tools onto an agent of another module only)
            _python(path, data, text, origin, out, decorations_only())
    elif kind == "ts":
        if TS_NEEDLE in data:
            _ts(path, data, origin, out)
        if names_servers(data):  # a TS/JS server table
            _ts_servers(path, data, out, sdk=TS_NEEDLE in data)
    elif kind in ("settings", "mcp"):
        _json_config(path, kind, data, out)
    elif kind in ("codex-config", "gemini-settings", "openhands-config"):
        from agentguard.inspect.project.engine_files import engine_config

        engine_config(path, kind, data, out)
    elif kind == "script" and path.endswith((".yml", ".yaml")):
        from agentguard.inspect.project.engine_files import yaml_config

        yaml_config(path, data, out, origin=origin)
    # (each reader is imported where its needle is found: a scan of files that name no
    # agent imports none of them, nor the records they build; a container file is read
    # for these three needles alone, which servers._launches_none tests before any scan)
    read = out.claude_step_lines
    if kind != "settings" and may and has_cli_use(text):
        from agentguard.inspect.project.cli_flags import cli_configs

        # (a Python file without "claude" was already ruled out by its pre-filter; one that
        # does not parse, or holds nothing the code readers read, is still read for these)
        found = cli_configs(path, text, origin=origin)
        out.configs.extend(c for c in found if read is None or c.line not in read)
    if kind in ("script", "container") and has_engine_cli_use(data):
        from agentguard.inspect.project.engine_cli import engine_cli_policies

        out.engine_policies.extend(engine_cli_policies(path, data))
    if kind == "script" and ACTION_NEEDLE in data and read is None:
        from agentguard.inspect.project.action_steps import action_steps

        out.configs.extend(action_steps(path, data, origin=origin))
    if kind in ("script", "container") and names_servers(data):  # a here-document writing one
        from agentguard.inspect.project.heredoc_servers import read_heredoc_servers

        read_heredoc_servers(path, kind, data, out)
    kept = out.configs[:MAX_FACTS_PER_FILE]  # (the rest is cut by _cap: never joined)
    if any(c.engine == "claude CLI" and c.called_from is None for c in kept):
        from agentguard.inspect.project.workflow_jobs import join_own_jobs

        # (a workflow's command lines with their jobs, from the bytes in hand: kept with the
        # file's facts, so a cached file is not parsed again for the map's join; each line
        # a cap keeps, as that join did: a line many jobs hold costs one step per job)
        out.configs[: len(kept)] = join_own_jobs(path, data, kept)


def _python(
    path: str, data: bytes, text: bytes, origin: str, out: FileOutcome, wanted: Wanted | None
) -> None:
    """``text``: ``data`` as Python decodes it, in UTF-8 (what the pre-filters test; the
    parse reads ``data``). The cyclic collector is paused meanwhile: a syntax tree is
    many new objects alive until the readers are done, and each collection that its
    building set off walked them and freed nothing (40 ms of 1.8 s on openai-agents-python);
    the tree is freed by reference counting, a cycle by the next collection."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        _python_read(path, data, text, origin, out, wanted)
    finally:
        if was_enabled:
            gc.enable()


def _python_read(
    path: str, data: bytes, text: bytes, origin: str, out: FileOutcome, wanted: Wanted | None
) -> None:
    from agentguard.inspect.project.python_agents import Wanted, analyse_python

    template = False
    if wanted is None:
        wanted = Wanted.of(text, risk_readers=python_risk_may_matter(text), path=path)
    try:
        try:
            facts = analyse_python(path, data, origin=origin, wanted=wanted)
        except SyntaxError:
            untemplated = _python_untemplated(data)
            if untemplated is None:
                raise
            template = True
            facts = analyse_python(
                path,
                untemplated,
                origin=origin,
                wanted=Wanted.of(
                    as_python_reads(untemplated),
                    risk_readers=python_risk_may_matter(text),
                    path=path,
                ),
            )
    except SyntaxError as exc:
        if template:  # a project template that is no Python until it is rendered
            out.sources.append(
                Source.skipped(
                    "file",
                    path,
                    "a template ({{ }} / {% %} markers) that does not parse as Python before "
                    "rendering: not read; render it and inspect the result, or list it in "
                    "`exclude`",
                )
            )
            return
        where = f" at line {exc.lineno}" if exc.lineno else ""
        out.sources.append(
            Source.failed(
                "file",
                path,
                f"Python syntax error{where}: {exc.msg}",
                error_code="parse-error",
                retryable=False,
                remedy=f"Fix the file (or exclude it); it was parsed as Python {_PY}, so syntax "
                "of a newer Python needs agentguard run on that Python.",
            )
        )
        return
    except ValueError as exc:  # null bytes, bad encoding declaration
        out.sources.append(failed_source(path, f"not Python source: {exc}", "parse-error"))
        return
    if not facts.parsed:
        return  # read: nothing in it that a reader of agent code can take (no parse needed)
    out.parsed += 1
    out.configs += facts.configs
    out.grants += facts.grants
    out.harnesses += facts.harnesses
    out.definitions += facts.definitions
    out.crew_classes += facts.crew_classes
    out.tool_decorations += facts.tool_decorations
    out.mcp_servers += facts.mcp_servers
    out.fallbacks += facts.fallbacks
    out.sources.append(
        Source.ok(
            "file",
            path,
            "Python template read best-effort before rendering: each {{ value }} read as an "
            "unknown name, {% %} tags dropped"
            if template
            else "Python agent code parsed",
        )
    )


def decorations_only() -> Wanted:
    """The readers of a file no other pre-filter passed: its tool decorations alone."""
    from agentguard.inspect.project.python_agents import Wanted

    return Wanted(False, False, False, False, False, decorations=True)


_TEMPLATE_VALUE = re.compile(rb"\{\{-?\s*([^{}]*?)\s*-?\}\}")
_TEMPLATE_TAG = re.compile(rb"\{%-?.*?-?%\}", re.S)


def _python_untemplated(data: bytes) -> bytes | None:
    """A Jinja/cookiecutter-templated Python file (crewAI's ``class {{crew_name}}Crew:``)
    with each ``{{ value }}`` made a name (unknown to every reader) and ``{% %}`` tags
    dropped; None when the file holds no template markers."""
    if b"{{" not in data and b"{%" not in data:
        return None

    def name(m: re.Match[bytes]) -> bytes:
        return b"__template_" + re.sub(rb"\W+", b"_", m.group(1)).strip(b"_")[:40] + b"__"

    return _TEMPLATE_TAG.sub(b"", _TEMPLATE_VALUE.sub(name, data))


def _ts(path: str, data: bytes, origin: str, out: FileOutcome) -> None:
    from agentguard.inspect.project.ts_agents import analyse_ts

    facts = analyse_ts(path, data, origin=origin)
    out.parsed += 1
    if facts.parse_error_line is not None and facts.configs == []:
        out.sources.append(
            failed_source(
                path,
                f"syntax error at line {facts.parse_error_line}; the SDK's options could "
                "not be read",
                "parse-error",
            )
        )
        return
    out.configs += facts.configs
    out.mcp_servers += facts.mcp_servers
    if facts.parse_error_line is not None:
        out.sources.append(
            failed_source(
                path,
                f"syntax error at line {facts.parse_error_line}: the options found were "
                "read, others may be missed",
                "parse-error",
            )
        )
    else:
        out.sources.append(Source.ok("file", path, "TypeScript/JavaScript agent code parsed"))


def _ts_servers(path: str, data: bytes, out: FileOutcome, *, sdk: bool) -> None:
    """MCP server definitions anywhere in TS/JS code (:mod:`.ts_mcp_servers`). In a file
    the SDK reader read too, a server it found in the SDK's options is not counted again."""
    from agentguard.inspect.project.ts_mcp_servers import analyse_ts_servers

    found = analyse_ts_servers(path, data)
    known = {_launch_key(m) for m in out.mcp_servers}
    out.mcp_servers += [m for m in found.mcp_servers if _launch_key(m) not in known]
    failed = any(s.name == path and s.status is SourceStatus.FAILED for s in out.sources)
    if found.parse_error_line is not None and not failed:
        # (also where the SDK reader read the file as parsed: `@anthropic-ai/claude` in a
        # comment is enough for it, and its source said nothing of this statement)
        out.sources.append(
            failed_source(
                path,
                f"syntax error at line {found.parse_error_line}, where `mcpServers` is "
                "written: the MCP server definitions found were read, others may be missed",
                "parse-error",
            )
        )
    elif found.mcp_servers and not sdk:  # (else the SDK reader's source says how it was read)
        out.parsed += 1
        n = len(found.mcp_servers)
        out.sources.append(Source.ok("file", path, f"TypeScript/JavaScript MCP servers ({n})"))


def _launch_key(m: McpServer) -> tuple[object, ...]:
    return (m.name, m.transport, repr(m.command), repr(m.args), m.env)


def _json_config(path: str, kind: str, data: bytes, out: FileOutcome) -> None:
    from agentguard.inspect.project.claude_settings import parse_mcp_file, parse_settings
    from agentguard.inspect.project.lined import DocumentError

    try:
        if kind == "settings":
            out.settings.append(parse_settings(path, data))
            what = "Claude Code settings"
        else:
            out.mcp_servers += parse_mcp_file(path, data)
            what = "MCP server configuration"
    except DocumentError as exc:
        where = f" (line {exc.line})" if exc.line else ""
        out.sources.append(failed_source(path, f"{exc}{where}", f"{kind}-{exc.code}"))
        return
    out.parsed += 1
    out.sources.append(Source.ok("file", path, what))

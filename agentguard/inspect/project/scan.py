"""Ties the walk, the parsers and the rules together.

Each candidate file is read once. Code files are parsed only when a cheap byte search
finds a name that can matter (an SDK import, a framework, ``mcp``, a ``claude`` command);
everything else is counted, not parsed. A file that cannot be read is a failed source, a
file over the size cap a skipped one, a file that does not parse a failed one with its
line -- never an empty result.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agentguard.findings import Finding, JSONValue, Source
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.model import (
    AgentConfig,
    ClaudeSettings,
    FallbackSite,
    McpServer,
    ToolGrant,
)
from agentguard.inspect.project.walk import (
    MAX_FILE_BYTES,
    Candidate,
    NotRegular,
    TooLarge,
    classify,
    is_marker,
    read_candidate,
    walk,
)

if TYPE_CHECKING:
    from agentguard.inspect.project import ProjectResult

# A Python file is parsed only when it names ``claude`` anywhere (SDK imports, ``claude``
# command lines) or imports one of these modules (SDKs, agent frameworks, LLM clients).
# Both searches have a literal prefix, so ``re`` scans with its fast literal search.
PY_MODULES = (
    b"claude",
    b"agents",
    b"smolagents",
    b"langchain",
    b"langgraph",
    b"autogen",
    b"crewai",
    b"mcp",
    b"fastmcp",
    b"anthropic",
    b"openai",
    b"litellm",
    b"google.genai",
    b"google.generativeai",
    b"ollama",
    b"mistralai",
    b"llama_index",
)
_FROM = re.compile(rb"from[ \t]+([\w.]+)")
_IMPORT = re.compile(rb"import[ \t]+([\w., \t]+)")
TS_NEEDLE = b"@anthropic-ai/claude"


def python_may_matter(data: bytes) -> bool:
    """The cheap test run on every Python file before ``ast.parse``."""
    if b"claude" in data:
        return True
    for module in _FROM.findall(data):
        if module.startswith(PY_MODULES):
            return True
    for names in _IMPORT.findall(data):
        for name in names.split(b","):
            if name.strip().startswith(PY_MODULES):
                return True
    return False


@dataclass
class FileOutcome:
    configs: list[AgentConfig] = field(default_factory=list)
    grants: list[ToolGrant] = field(default_factory=list)
    mcp_servers: list[McpServer] = field(default_factory=list)
    fallbacks: list[FallbackSite] = field(default_factory=list)
    settings: list[ClaudeSettings] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    parsed: int = 0
    read: bool = True
    container_file: ProjectFile | None = None  # handed on to the container-file scan


def _failed(path: str, reason: str, code: str) -> Source:
    return Source.failed(
        "file",
        path,
        reason,
        error_code=code,
        retryable=False,
        remedy="Fix the file (or exclude it); agentguard could not read what it configures.",
    )


def process_file(path: str, kind: str, data: bytes, origin: str = "project") -> FileOutcome:
    """Facts and sources from one file. Never raises for bad input."""
    out = FileOutcome()
    try:
        _process(path, kind, data, origin, out)
    except RecursionError:
        out.sources.append(_failed(path, "nested too deeply to analyse", "too-deep"))
    except MemoryError:
        out.sources.append(_failed(path, "too large to analyse", "too-large"))
    return out


def _process(path: str, kind: str, data: bytes, origin: str, out: FileOutcome) -> None:
    from agentguard.inspect.project.cli_flags import cli_configs, has_cli_use

    if kind == "python":
        if python_may_matter(data):
            _python(path, data, origin, out)
    elif kind == "ts":
        if TS_NEEDLE in data:
            _ts(path, data, origin, out)
    elif kind in ("settings", "mcp"):
        _json_config(path, kind, data, out)
    if kind != "settings" and (kind != "python" or out.parsed) and has_cli_use(data):
        # (a Python file without "claude" was already ruled out by its pre-filter)
        out.configs.extend(cli_configs(path, data, origin=origin))


def _python(path: str, data: bytes, origin: str, out: FileOutcome) -> None:
    from agentguard.inspect.project.python_agents import analyse_python

    try:
        facts = analyse_python(path, data, origin=origin)
    except SyntaxError as exc:
        where = f" at line {exc.lineno}" if exc.lineno else ""
        out.sources.append(_failed(path, f"Python syntax error{where}: {exc.msg}", "parse-error"))
        return
    except ValueError as exc:  # null bytes, bad encoding declaration
        out.sources.append(_failed(path, f"not Python source: {exc}", "parse-error"))
        return
    out.parsed += 1
    out.configs += facts.configs
    out.grants += facts.grants
    out.mcp_servers += facts.mcp_servers
    out.fallbacks += facts.fallbacks
    out.sources.append(Source.ok("file", path, "Python agent code parsed"))


def _ts(path: str, data: bytes, origin: str, out: FileOutcome) -> None:
    from agentguard.inspect.project.ts_agents import analyse_ts

    facts = analyse_ts(path, data, origin=origin)
    out.parsed += 1
    if facts.parse_error_line is not None and facts.configs == []:
        out.sources.append(
            _failed(
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
            _failed(
                path,
                f"syntax error at line {facts.parse_error_line}: the options found were "
                "read, others may be missed",
                "parse-error",
            )
        )
    else:
        out.sources.append(Source.ok("file", path, "TypeScript/JavaScript agent code parsed"))


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
        out.sources.append(_failed(path, f"{exc}{where}", f"{kind}-{exc.code}"))
        return
    out.parsed += 1
    out.sources.append(Source.ok("file", path, what))


# --------------------------------------------------------------------------------------


@dataclass
class Collected:
    outcomes: list[FileOutcome] = field(default_factory=list)
    container_files: list[ProjectFile] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    markers: list[str] = field(default_factory=list)
    files_seen: int = 0
    files_read: int = 0


def _too_large(path: str, size: int) -> Source:
    return Source.skipped(
        "file", path, f"{size} bytes, over the {MAX_FILE_BYTES} byte cap: not read"
    )


def read_and_process(cand: Candidate) -> FileOutcome | None:
    """Read one candidate and process it; every miss becomes a source. None: a Python
    file read whole that the pre-filter ruled out (the common case, kept allocation-free)."""
    try:
        data = read_candidate(cand.abspath)
    except TooLarge as exc:
        return FileOutcome(sources=[_too_large(cand.rel, exc.size)], read=False)
    except NotRegular:
        return FileOutcome(
            sources=[Source.skipped("file", cand.rel, "not a regular file")], read=False
        )
    except OSError as exc:
        return FileOutcome(
            sources=[_failed(cand.rel, f"cannot read: {exc.strerror or exc}", "file-unreadable")],
            read=False,
        )
    if cand.kind == "python" and not python_may_matter(data):
        return None
    out = process_file(cand.rel, cand.kind, data)
    if cand.kind == "container":
        out.container_file = ProjectFile(cand.rel, data)
    return out


def _process_chunk(chunk: list[Candidate]) -> tuple[int, list[tuple[int, FileOutcome]]]:
    """(files read, the outcomes that hold anything, by index in the chunk)."""
    read = 0
    kept: list[tuple[int, FileOutcome]] = []
    for i, cand in enumerate(chunk):
        out = read_and_process(cand)
        if out is None:
            read += 1
            continue
        read += out.read
        if (
            out.sources
            or out.configs
            or out.container_file
            or out.mcp_servers
            or out.grants
            or out.fallbacks
            or out.settings
        ):
            kept.append((i, out))
    return read, kept


PARALLEL_MIN = 2000  # candidates below this are read in-process (a pool costs ~30 ms)
CHUNK = 400


def _jobs(count: int) -> int:
    """Worker processes for ``count`` candidates: 1 = in-process.

    ``AGENTGUARD_JOBS`` overrides (1 turns the pool off). The pool forks, so it is only
    used on Linux, from a process without other threads.
    """
    env = os.environ.get("AGENTGUARD_JOBS", "")
    if env.isdigit() and int(env) >= 1:
        wanted = int(env)
    else:
        wanted = min(os.cpu_count() or 1, 4) if count >= PARALLEL_MIN else 1
    if wanted > 1 and (not sys.platform.startswith("linux") or threading.active_count() > 1):
        return 1
    return wanted


def _process_all(candidates: list[Candidate]) -> tuple[int, list[FileOutcome]]:
    """(files read, outcomes worth keeping in candidate order)."""
    jobs = _jobs(len(candidates))
    chunks = [candidates[i : i + CHUNK] for i in range(0, len(candidates), CHUNK)]
    if jobs <= 1:
        results = [_process_chunk(c) for c in chunks]
    else:
        import multiprocessing

        _preload()
        with multiprocessing.get_context("fork").Pool(jobs) as pool:
            results = pool.map(_process_chunk, chunks, chunksize=1)
    return sum(r[0] for r in results), [o for r in results for _, o in r[1]]


def _preload() -> None:
    """Import the parsers before forking, so workers do not each import them."""
    import agentguard.inspect.project.claude_settings
    import agentguard.inspect.project.cli_flags
    import agentguard.inspect.project.python_agents
    import agentguard.inspect.project.python_fallback
    import agentguard.inspect.project.python_frameworks
    import agentguard.inspect.project.ts_agents  # noqa: F401


def collect_folder(root: Path) -> Collected:
    got = walk(str(root))
    col = Collected(sources=list(got.sources), markers=list(got.markers))
    col.files_seen = got.files_seen
    col.files_read, col.outcomes = _process_all(got.candidates)
    col.container_files = [o.container_file for o in col.outcomes if o.container_file]
    col.sources.append(
        Source.ok(
            "project",
            str(root),
            f"{got.files_seen} files in {got.dirs_seen} folders walked "
            f"({got.dirs_skipped} dependency/cache folders not entered), "
            f"{col.files_read} candidate files read",
        )
    )
    return col


def collect_files(files: Sequence[ProjectFile], *, workdir: str | None) -> Collected:
    col = Collected()
    col.files_seen = len(files)
    for f in files:
        kind = classify(f.path)
        if is_marker(f.path, False) and _under(f.path, workdir):
            col.markers.append(f.path)
        if kind is None:
            continue
        col.files_read += 1
        if len(f.data) > MAX_FILE_BYTES:
            col.sources.append(_too_large(f.path, len(f.data)))
            continue
        if kind == "container":
            col.container_files.append(f)
        col.outcomes.append(process_file(f.path, kind, f.data, f.origin))
    return col


def _under(path: str, workdir: str | None) -> bool:
    if not workdir or not path.startswith("/"):
        return True
    wd = workdir.rstrip("/") + "/"
    return path.startswith(wd) or wd == "/"


def scan_path(path: Path) -> ProjectResult:
    if path.is_dir():
        return finish(collect_folder(path), workdir=None)
    col = Collected()
    name = path.name
    kind = classify(name) or _kind_by_suffix(name)
    col.files_seen = 1
    try:
        data = path.read_bytes()
    except OSError as exc:
        col.sources.append(
            _failed(str(path), f"cannot read: {exc.strerror or exc}", "file-unreadable")
        )
        return finish(col, workdir=None)
    col.files_read = 1
    if kind is None:
        col.sources.append(
            Source.skipped("file", name, "not a file kind the agent-configuration rules read")
        )
        return finish(col, workdir=None)
    if len(data) > MAX_FILE_BYTES:
        col.sources.append(_too_large(name, len(data)))
        return finish(col, workdir=None)
    if kind == "container":
        col.container_files.append(ProjectFile(name, data))
    col.outcomes.append(process_file(name, kind, data))
    return finish(col, workdir=None)


def _kind_by_suffix(name: str) -> str | None:
    ext = os.path.splitext(name)[1].lower()
    if ext == ".json":
        return "mcp" if "mcp" in name.lower() else "settings" if "settings" in name else None
    return None


def scan_files(files: Sequence[ProjectFile], *, workdir: str | None) -> ProjectResult:
    return finish(collect_files(files, workdir=workdir), workdir=workdir)


def finish(col: Collected, *, workdir: str | None) -> ProjectResult:
    from agentguard.inspect.project import ProjectResult
    from agentguard.inspect.project.containers import scan_container_files
    from agentguard.inspect.project.model import ProjectFacts
    from agentguard.rules.agent_checks import run_agent_rules

    container_findings: list[Finding] = []
    container_sources: list[Source] = []
    container_facts: dict[str, JSONValue] = {}
    if col.container_files:
        container_findings, container_sources, container_facts = scan_container_files(
            col.container_files
        )
    ids = {f.rule_id for f in container_findings}
    facts = ProjectFacts(
        configs=tuple(c for o in col.outcomes for c in o.configs),
        grants=tuple(g for o in col.outcomes for g in o.grants),
        mcp_servers=tuple(m for o in col.outcomes for m in o.mcp_servers),
        fallbacks=tuple(s for o in col.outcomes for s in o.fallbacks),
        settings=tuple(s for o in col.outcomes for s in o.settings),
        workdir=workdir,
        project_markers=tuple(col.markers),
        runs_as_root=True if "AG401" in ids else None,
        project_mounted=True if ids & {"AG201", "AG202", "AG212"} else None,
    )
    findings = [*container_findings, *run_agent_rules(facts)]
    sources = [*col.sources, *(s for o in col.outcomes for s in o.sources), *container_sources]
    json_facts: dict[str, JSONValue] = {
        "agent_configs": [c.to_json() for c in facts.configs],
        "mcp_servers": [m.to_json() for m in facts.mcp_servers],
        "tool_grants": [
            {
                "framework": g.framework,
                "tool": g.tool,
                "category": g.category,
                "path": g.path,
                "line": g.line,
            }
            for g in facts.grants
        ],
        "settings_files": [s.path for s in facts.settings],
        "project_markers": list(facts.project_markers),
        "files_seen": col.files_seen,
        "files_read": col.files_read,
        "files_parsed": sum(o.parsed for o in col.outcomes),
    }
    if container_facts:
        json_facts["containers"] = container_facts
    return ProjectResult(tuple(findings), tuple(sources), json_facts)

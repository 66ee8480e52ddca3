"""One candidate file of a folder scan: read through the safe-open path, tested by the
pre-filters, then its facts from the run's memo (``check --base``: a base revision's file
the head has unchanged), the content cache, or its parser. Every miss is a source.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
from collections.abc import Iterator

from agentguard.facts.project_file import ProjectFile
from agentguard.findings import Source
from agentguard.inspect.project import cache as content_cache
from agentguard.inspect.project.files import (
    FileOutcome,
    failed_source,
    process_file,
    python_may_matter,
)
from agentguard.inspect.project.needles import escaped_command
from agentguard.inspect.project.outcome import not_utf8_source
from agentguard.inspect.project.python_source import as_python_reads
from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere
from agentguard.inspect.project.walk import Candidate, NotRegular, TooLarge, read_candidate

# `check --base`: a file's outcome depends only on its path, kind and bytes, so the base's
# copy of a file the head has unchanged is not parsed again (see :func:`outcomes_shared`)
_SHARED_OUTCOMES: dict[tuple[str, str, bytes], FileOutcome] | None = None


@contextlib.contextmanager
def outcomes_shared() -> Iterator[None]:
    """Within this block, scans in this process reuse each other's file outcomes for the
    same path, kind and content (by BLAKE2 digest); each use gets its own copy."""
    global _SHARED_OUTCOMES
    _SHARED_OUTCOMES = {}
    try:
        yield
    finally:
        _SHARED_OUTCOMES = None


def _processed(cand: Candidate, data: bytes) -> FileOutcome:
    """One file's outcome: from the run's memo (a base revision's file the head has
    unchanged), else through the content cache where one is open, else parsed."""
    memo = _SHARED_OUTCOMES
    if memo is None:
        return _process_or_cached(cand, data)
    key = (cand.rel, cand.kind, hashlib.blake2b(data, digest_size=20).digest())
    hit = memo.get(key)
    if hit is None:
        hit = memo[key] = _process_or_cached(cand, data)
    return copy.deepcopy(hit)


_CACHED_KINDS = frozenset({"python", "script", "ts"})


def _process_or_cached(cand: Candidate, data: bytes) -> FileOutcome:
    """Through the content cache where one is open: a Python file that passed the first
    pre-filter, every script (a YAML file, a shell script, a Makefile...) and every
    TypeScript/JavaScript file by the hash of its bytes, so that a re-run neither parses
    nor runs the second-stage pre-filters and needle searches again (on 150 MB of recorded
    test exchanges those searches cost more than reading and hashing the bytes; gemini-cli's
    server tables were half of its re-run); the small kinds are read again."""
    cache = content_cache.ACTIVE
    if cache is None or cand.kind not in _CACHED_KINDS:
        return process_file(cand.rel, cand.kind, data)
    key = cache.key(cand.rel, cand.kind, data)
    out = cache.get(key)
    if out is None:
        out = process_file(cand.rel, cand.kind, data)
        cache.put(key, out)
    return out


def read_and_process(cand: Candidate) -> FileOutcome | None:
    """Read one candidate and process it; every miss becomes a source. None: a Python
    file read whole that the pre-filter ruled out (the common case, kept allocation-free)."""
    if cand.outside is not None:
        return _unread(cand, cand.outside)
    try:
        data = read_candidate(cand.abspath, cand.regular)
    except TooLarge as exc:
        from agentguard.inspect.project.scan_oversize import oversize  # (rare: not at start)

        return _unread(cand, oversize(cand.rel, cand.abspath, cand.kind, exc.size))
    except NotRegular:
        return _unread(cand, Source.skipped("file", cand.rel, "not a regular file"))
    except OSError as exc:
        return _unread(
            cand, failed_source(cand.rel, f"cannot read: {exc.strerror or exc}", "file-unreadable")
        )
    wide = not_utf8_source(cand.rel, cand.kind, data)  # (before the Python pre-filter)
    if wide is not None:
        return _unread(cand, wide)
    if cand.kind == "python":
        text = as_python_reads(data)
        if (
            not python_may_matter(text)
            and not may_decorate_elsewhere(text)
            and not escaped_command(data, shell=False)
        ):
            return None
    out = _processed(cand, data)
    if cand.kind == "container":
        out.container_file = ProjectFile(cand.rel, data)
    return out


def _unread(cand: Candidate, source: Source) -> FileOutcome:
    """A candidate not read: its source, and for a container/build file the fact that it
    exists unread (a .dockerignore that could not be read is not "no .dockerignore")."""
    out = FileOutcome(sources=[source], read=False)
    if cand.kind == "container":
        out.container_file = ProjectFile(cand.rel, b"", readable=False)
    return out


def worth_keeping(out: FileOutcome) -> bool:
    """An outcome that says anything (most files: read, and nothing in them)."""
    return bool(
        out.sources
        or out.configs
        or out.container_file
        or out.mcp_servers
        or out.grants
        or out.fallbacks
        or out.definitions
        or out.crew_classes
        or out.tool_decorations
        or out.settings
        or out.engine_policies
        or out.action_steps
        or out.agent_runs
        or out.k8s_containers
        or out.composites
        or out.local_uses
    )

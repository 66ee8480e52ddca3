"""Applying a configuration to a run's findings: report post-processing, after the rules.

In order: disabled rules are dropped; severities are remapped; findings matching an
``ignore`` pattern, an inline ``# agentguard: ignore[AG301]`` comment, or the baseline
are kept but marked suppressed with the reason. Inline comments are read from the file
a finding points to (this is the one place outside gathering that reads files; the
rules stay free of I/O), and every file read for them is recorded as a source.

Inline comments: ``# agentguard: ignore[AG301]`` or ``# agentguard: ignore[AG301,AG302]``
(``//`` works too, for JSONC) at the end of the finding's line, or on a comment-only
line directly above it. Only a real comment of the file's language counts
(:mod:`agentguard.comments`): a string that reads like one is data. ``--no-inline-ignores``
turns them off. A finding without a line number can be ignored in the
configuration, not inline.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import stat
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from agentguard import safeio
from agentguard.baseline import Baseline
from agentguard.comments import Comment, comments
from agentguard.config import Config, IgnoreEntry
from agentguard.findings import ConfigTrace, Finding, Location, Severity, Source
from agentguard.globmatch import _path_matches
from agentguard.globmatch import glob_matches as glob_matches
from agentguard.globmatch import glob_to_regex as glob_to_regex

_MARKER = b"agentguard"  # what every INLINE match spells, in any case
INLINE = re.compile(r"(?:#|//|/\*)\s*agentguard:\s*ignore\[([^\]]*)\]", re.IGNORECASE)
MAX_SUPPRESSION_FILE_BYTES = 4 * 1024 * 1024


@dataclass(frozen=True)
class Applied:
    findings: tuple[Finding, ...]
    sources: tuple[Source, ...]  # files read for inline suppressions
    notes: tuple[str, ...]
    trace: ConfigTrace  # which configuration, from where, and what it changed


def _candidate_paths(loc: Location, root: Path | None) -> tuple[str, ...]:
    """The spellings of a location's path an ignore pattern may match."""
    if not loc.path:
        return ()
    return _spellings(loc.path, loc.layer is None, root)


@functools.lru_cache(maxsize=4096)
def _spellings(raw: str, on_host: bool, root: Path | None) -> tuple[str, ...]:
    path = raw.replace("\\", "/")
    out = [path]
    if root is not None and on_host and path.startswith("/"):
        full, base = Path(path).resolve(), root.resolve()
        if full.is_relative_to(base):  # outside the project: no project-relative spelling
            out.append(full.relative_to(base).as_posix())
    if path.startswith("./"):
        out.append(path[2:])
    return tuple(out)


def _pattern_matches(entry: IgnoreEntry, loc: Location, root: Path | None) -> bool:
    if entry.line is not None and loc.line != entry.line:
        return False
    return any(_path_matches(entry.pattern, c) for c in _candidate_paths(loc, root))


def _contextualise(f: Finding, config: Config) -> Finding:
    """Sets the finding's context; a context with a ceiling (test code: low, by default)
    grades it no higher, and the message says so."""
    from agentguard.context import context_of

    # a file inside an image is what runs (whatever its folder is called): production
    in_image = any(loc.layer for loc in f.locations)
    paths = [] if in_image else [loc.path for loc in f.locations if loc.path]
    ctx = context_of(paths, config.contexts)
    ceiling = config.context_severity.get(ctx)
    if ceiling is None or f.severity <= ceiling:
        return f.with_context(ctx)
    return dataclasses.replace(
        f,
        context=ctx,
        severity=ceiling,
        message=f"{f.message} (In {ctx} code: reported at {ceiling.value}, not "
        f"{f.severity.value}; `context-severity.{ctx}` in the configuration changes that.)",
    )


def _config_ignore(f: Finding, config: Config, root: Path | None) -> str | None:
    for entry in config.ignores:
        if entry.rule not in ("*", f.rule_id):
            continue
        for loc in f.locations:
            if _pattern_matches(entry, loc, root):
                return f"config: {entry.origin} = {entry.text!r}"
    return None


class _Lines:
    """File lines read for inline comments, each file once, each read recorded."""

    def __init__(self, root: Path | None) -> None:
        self.root = root
        # (resolved once: each file then costs one realpath and one stat, not five and two)
        self.real_root = os.path.realpath(root) if root is not None else ""
        self.cache: dict[Path, dict[int, Comment] | None] = {}
        self.where: dict[str, Path | None] = {}
        self.found: dict[Path, tuple[str, int]] = {}  # a local file: its real path and size
        self.sources: list[Source] = []

    def local_file(self, loc: Location) -> Path | None:
        if not loc.path or loc.layer is not None or self.root is None:
            return None
        if loc.path not in self.where:
            self.where[loc.path] = self._local_file(loc.path, self.root)
        return self.where[loc.path]

    def _local_file(self, text: str, root: Path) -> Path | None:
        path = Path(text)
        full = path if path.is_absolute() else root / path
        real = os.path.realpath(full)
        top = self.real_root
        if real != top and not real.startswith(top.rstrip(os.sep) + os.sep):
            return None  # not a file of this project (a host path elsewhere)
        try:
            st = os.stat(real)
        except OSError:
            return None
        if not stat.S_ISREG(st.st_mode):
            return None
        self.found[full] = (real, st.st_size)
        return full

    def comments(self, full: Path, shown: str) -> dict[int, Comment] | None:
        """The file's real comments by line (:mod:`agentguard.comments`), or None."""
        if full in self.cache:
            return self.cache[full]
        lines: dict[int, Comment] | None = None
        real, size = self.found[full]  # (local_file found it)
        try:
            if size > MAX_SUPPRESSION_FILE_BYTES:
                self.sources.append(
                    Source.skipped(
                        "file",
                        shown,
                        f"larger than {MAX_SUPPRESSION_FILE_BYTES} bytes: inline suppressions "
                        "in it were not read",
                    )
                )
            else:
                # resolved and inside the root: opened without following a link, a
                # FIFO or device swapped in meanwhile is refused, the read is capped
                data = safeio.read_candidate(real, True, cap=MAX_SUPPRESSION_FILE_BYTES)
                # a file that never spells the marker has no suppression in any comment:
                # not decoded nor tokenized (a Python file's tokenize was most of the
                # policy's time; a search of the text ignoring case, the rest of it)
                lines = (
                    comments(shown, data.decode("utf-8", errors="replace"))
                    if (_spells_marker(data))
                    else {}
                )
                self.sources.append(Source.ok("file", shown, "read for inline suppressions"))
        except OSError as exc:
            self.sources.append(
                Source.failed(
                    "file",
                    shown,
                    f"cannot read it for inline suppressions: {exc.strerror or exc}",
                    error_code="suppression-file-unreadable",
                    retryable=False,
                    remedy="make the file readable, or ignore the finding in the configuration",
                )
            )
        self.cache[full] = lines
        return lines


def _spells_marker(data: bytes) -> bool:
    """Whether the text ``data`` decodes to (UTF-8, errors replaced) spells the marker in
    any case. Its letters have no case partner outside ASCII, and no byte of a multi-byte
    or undecodable sequence is ASCII: the bytes lowered by ASCII rules tell it (10 times
    faster than a search of the text ignoring case: 3 ms on a 470 KB test file)."""
    return _MARKER in data.lower()


def inline_rules(line: str) -> set[str]:
    return {
        part.strip().upper()
        for m in INLINE.finditer(line)
        for part in m.group(1).split(",")
        if part.strip()
    }


def _inline_ignore(f: Finding, files: _Lines) -> str | None:
    """A real comment (never a string that looks like one) on the finding's line, or a
    comment-only line directly above it, that names the finding's rule."""
    for loc in f.locations:
        if loc.line is None or loc.path is None:
            continue
        full = files.local_file(loc)
        if full is None:
            continue
        found = files.comments(full, loc.path)
        if not found:
            continue
        here = found.get(loc.line)
        if here is not None and f.rule_id in inline_rules(here.text):
            return f"inline: {loc.path}:{loc.line}"
        above = found.get(loc.line - 1)
        if above is not None and above.whole_line and f.rule_id in inline_rules(above.text):
            return f"inline: {loc.path}:{loc.line - 1}"
    return None


def _remap(f: Finding, config: Config) -> Finding:
    # A finding the rule itself graded info (mitigated, accepted, inventory) is a verdict,
    # not a hazard grade: a remap never raises it.
    target = config.severity.get(f.rule_id)
    if target is None or f.severity is Severity.INFO or f.severity is target:
        return f
    return f.with_severity(target)


def apply_policy(
    findings: Iterable[Finding],
    config: Config,
    *,
    root: Path | None,
    baseline: Baseline | None = None,
) -> Applied:
    """Apply ``config`` (and the baseline) to ``findings``; nothing is lost but disabled rules."""
    notes: list[str] = []
    dropped: Counter[str] = Counter()
    remapped: Counter[str] = Counter()
    lowered: Counter[str] = Counter()
    files = _Lines(root)
    out: list[Finding] = []
    ignored = inline = 0
    for f in findings:
        if f.rule_id in config.disabled:
            dropped[f.rule_id] += 1
            continue
        g = _remap(f, config)
        if g is not f:
            remapped[f.rule_id] += 1
        if g.context is None:
            graded = g.severity
            g = _contextualise(g, config)
            if g.context is not None and g.severity is not graded:
                lowered[g.context] += 1
        if g.suppressed is None:
            reason = _config_ignore(g, config, root)
            if reason:
                ignored += 1
            elif config.inline_ignores:
                reason = _inline_ignore(g, files)
                inline += bool(reason)
            if reason:
                g = g.with_suppression(reason)
        out.append(g)
    for rule, n in sorted(dropped.items()):
        notes.append(f"config: {rule} is disabled ({n} finding(s) not reported)")
    for rule, n in sorted(remapped.items()):
        notes.append(
            f"config: {rule} severity set to {config.severity[rule].value} ({n} finding(s))"
        )
    for ctx, n in sorted(lowered.items()):
        notes.append(
            f"context: {n} finding(s) in {ctx} code reported at most "
            f"{config.context_severity[ctx].value} (`context-severity.{ctx}` changes that)"
        )
    in_baseline = 0
    if baseline is not None:
        out, note = _apply_baseline(out, baseline)
        notes.append(note)
        in_baseline = sum(1 for f in out if f.suppressed == "baseline")
    trace = ConfigTrace(
        origin=config.origin,
        policy=config.policy,
        files=tuple(f for f in config.files if not f.startswith("policy:")),
        ignored=config.ignored_files,
        inline_ignores=config.inline_ignores,
        disabled=sum(dropped.values()),
        downgraded=sum(lowered.values()),
        remapped=sum(remapped.values()),
        suppressed_config=ignored,
        suppressed_inline=inline,
        suppressed_baseline=in_baseline,
    )
    return Applied(tuple(out), tuple(files.sources), tuple(notes), trace)


def _apply_baseline(findings: list[Finding], baseline: Baseline) -> tuple[list[Finding], str]:
    left = baseline.counts()
    out: list[Finding] = []
    matched = 0
    for f in findings:
        fp = f.fingerprint()
        if f.suppressed is None and left[fp] > 0:
            left[fp] -= 1
            matched += 1
            f = f.with_suppression("baseline")
        out.append(f)
    gone = sum(left.values())
    note = f"baseline {baseline.path}: {matched} finding(s) matched"
    if gone:
        note += f"; {gone} baseline entr{'y' if gone == 1 else 'ies'} no longer found (fixed?)"
    return out, note

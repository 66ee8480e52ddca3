"""``.dockerignore`` reading and matching, with the engine's rules.

Patterns are cleaned paths relative to the build context (a leading ``/`` is dropped);
``*`` and ``?`` do not cross ``/``, ``**`` matches any number of folders, ``!`` re-includes,
and the last matching pattern wins. A pattern that matches a folder excludes everything
below it (the engine checks each parent of a path too).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from agentguard.globmatch import Glob, compile_glob


@dataclass(frozen=True)
class IgnorePattern:
    text: str
    exclude: bool  # False for "!pattern"
    line: int
    regex: Glob  # matched in linear time whatever the pattern


@dataclass(frozen=True)
class DockerIgnore:
    path: str
    patterns: tuple[IgnorePattern, ...]
    readable: bool = True  # False: the file exists but could not be read

    def excluded(self, rel: str) -> bool:
        """True when ``rel`` (relative to the context) is kept out of the build context."""
        rel = posixpath.normpath(rel).lstrip("/")
        parts = rel.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        result = False
        for pat in self.patterns:
            if any(pat.regex.match(c) for c in candidates):
                result = pat.exclude
        return result


def parse_dockerignore(path: str, text: str) -> DockerIgnore:
    patterns: list[IgnorePattern] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exclude = True
        if line.startswith("!"):
            exclude = False
            line = line[1:].strip()
        cleaned = posixpath.normpath(line).lstrip("/") if line else ""
        if not cleaned or cleaned == ".":
            continue
        patterns.append(IgnorePattern(raw.strip(), exclude, n, compile_glob(cleaned, classes=True)))
    return DockerIgnore(path, tuple(patterns))

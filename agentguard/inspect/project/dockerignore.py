"""``.dockerignore`` reading and matching, with the engine's rules.

Patterns are cleaned paths relative to the build context (a leading ``/`` is dropped);
``*`` and ``?`` do not cross ``/``, ``**`` matches any number of folders, ``!`` re-includes,
and the last matching pattern wins. A pattern that matches a folder excludes everything
below it (the engine checks each parent of a path too).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass


@dataclass(frozen=True)
class IgnorePattern:
    text: str
    exclude: bool  # False for "!pattern"
    line: int
    regex: re.Pattern[str]


@dataclass(frozen=True)
class DockerIgnore:
    path: str
    patterns: tuple[IgnorePattern, ...]

    def excluded(self, rel: str) -> bool:
        """True when ``rel`` (relative to the context) is kept out of the build context."""
        rel = posixpath.normpath(rel).lstrip("/")
        parts = rel.split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        result = False
        for pat in self.patterns:
            if any(pat.regex.fullmatch(c) for c in candidates):
                result = pat.exclude
        return result


def _translate(pattern: str) -> re.Pattern[str]:
    out: list[str] = []
    i = 0
    n = len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if i < n and pattern[i] == "/":
                out.append("(?:.*/)?")
                i += 1
            else:
                out.append(".*")
            continue
        if ch == "*":
            out.append("[^/]*")
        elif ch == "?":
            out.append("[^/]")
        elif ch == "[":
            end = pattern.find("]", i + 1)
            if end < 0:
                out.append(re.escape(ch))
            else:
                body = pattern[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("^"):
                    body = "!" + body[1:]
                out.append("[" + ("^" + body[1:] if body.startswith("!") else body) + "]")
                i = end
        elif ch == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(pattern[i]))
        else:
            out.append(re.escape(ch))
        i += 1
    try:
        return re.compile("".join(out))
    except re.error:
        return re.compile(re.escape(pattern))


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
        patterns.append(IgnorePattern(raw.strip(), exclude, n, _translate(cleaned)))
    return DockerIgnore(path, tuple(patterns))

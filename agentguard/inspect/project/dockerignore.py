"""``.dockerignore`` reading and matching, with the engine's rules.

Patterns are cleaned paths relative to the build context (a leading ``/`` is dropped);
``*`` and ``?`` do not cross ``/``, ``**`` matches any number of folders, ``!`` re-includes,
and the last matching pattern wins. A pattern that matches a folder excludes everything
below it (the engine checks each parent of a path too).
"""

from __future__ import annotations

import posixpath

from agentguard.facts.project import DockerIgnore as DockerIgnore
from agentguard.facts.project import IgnorePattern as IgnorePattern
from agentguard.globmatch import compile_glob


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

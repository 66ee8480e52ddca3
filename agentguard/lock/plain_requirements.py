"""Requirements and ``requires-python`` values whose normal form is their own text.

`agentguard lock` starts its resolver before the rest of the command is imported
(:mod:`agentguard.lock.early`); parsing a requirement with ``packaging`` imports its marker
grammar and wheel-tag modules (logging, platform, sysconfig: about 17 ms) on that path.
Most declared requirements are a bare name or a name with one release bound
(``letta-client``, ``httpx>=0.27``): for those, ``str(packaging.requirements.Requirement(t))``
is ``t`` itself and the parse cannot fail, so the reader takes them as they are. Anything
else (extras, markers, URLs, several specifiers, pre-releases, wildcards, whitespace) goes
to ``packaging`` as before. ``tests/lock/test_plain_requirements.py`` holds the two equal
on generated and real requirements.
"""

from __future__ import annotations

import re

# PEP 508 name (ASCII letters and digits at both ends); one specifier whose version is a
# plain release (digits and dots): valid for every operator below, and kept as written.
_NAME = r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?"
_RELEASE = r"[0-9]+(?:\.[0-9]+)*"
_PLAIN = re.compile(rf"{_NAME}(?:(?:>=|<=|==|!=|<|>){_RELEASE}|~=[0-9]+(?:\.[0-9]+)+)?")
_PLAIN_PYTHON = re.compile(rf">={_RELEASE}")


def is_plain(text: str) -> bool:
    """``text`` is a requirement that ``packaging`` accepts and normalises to itself."""
    return _PLAIN.fullmatch(text) is not None


def plain_python_floor(requires_python: str) -> str | None:
    """The floor of a ``requires-python`` of the form ``>=X[.Y...]`` (a valid specifier
    set of one bound), as :func:`agentguard.lock.start.python_floor` gives it; None for
    every other form (which ``packaging`` reads)."""
    if _PLAIN_PYTHON.fullmatch(requires_python) is None:
        return None
    parts = requires_python[2:].split(".")
    return ".".join(parts[:2]) if len(parts) > 1 else f"{parts[0]}.0"

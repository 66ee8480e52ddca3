"""The cheap test run on every Python file before ``ast.parse``: which files may matter.

A byte search, not syntax: ``claude`` anywhere, an import of an SDK, an agent framework or
an LLM client, a Docker SDK harness that starts containers, or a name spelled in letters
Python reads as ASCII. A file it rules out is counted, not parsed.
"""

from __future__ import annotations

import re

from agentguard.inspect.project.python_import_needles import BLANKS, spelled_non_ascii

# A Python file is parsed only when it names ``claude`` anywhere (SDK imports, ``claude``
# command lines) or imports one of these modules (SDKs, agent frameworks, LLM clients).
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
    b"agno",
    b"pydantic_ai",
)
# the frameworks whose agents only the map draws (no risk reader reads their files): a file
# that imports one of them and none of the above is parsed for its agent definitions alone
MAP_MODULES = (b"aider", b"browser_use")


def _import_of(modules: tuple[bytes, ...]) -> re.Pattern[bytes]:
    alternatives = b"|".join(re.escape(m) for m in modules)
    return re.compile(
        rb"m[ \tp](?:(?<=from[ \t])[ \t]*(?:"
        + alternatives
        + rb")|(?<=imp)ort[ \t]+(?:[\w. \t]*,[ \t]*)*(?:"
        + alternatives
        + rb"))"
    )


# ``from[ \t]+<module>`` and ``import[ \t]+(?:[\w. \t]*,[ \t]*)*<module>`` (``import a as b,
# <module>``) in one scan: a match starts at the ``m`` both keywords share (``re`` finds
# a pattern's single leading literal with its fastest loop), the byte after it (blank for
# ``from``, ``p`` for ``import``) and a lookbehind tell which keyword it ends, if any.
# Two scans of the same bytes (``from``..., ``import``...) cost 40% more.
_FROM_OR_IMPORT = _import_of(PY_MODULES + MAP_MODULES)
_RISK_IMPORT = _import_of(PY_MODULES)  # (run only on files the first one matched)


def python_may_matter(data: bytes) -> bool:
    """The cheap test run on every Python file before ``ast.parse``: ``claude`` anywhere,
    or a ``from``/``import`` of a module whose name starts with one of :data:`PY_MODULES`
    (bytes, not syntax: ``import a as b, mcp`` and ``x = 1  # from mcp`` both count), or
    an import of ``docker`` followed by a ``containers.run(``/``.create(`` call; or an
    import of one of :data:`MAP_MODULES`."""
    return (
        b"claude" in data
        or _FROM_OR_IMPORT.search(data) is not None
        or _docker_harness(data)
        or spelled_non_ascii(data)  # (a name in letters Python reads as ASCII: maybe)
    )


def python_risk_may_matter(data: bytes) -> bool:
    """:func:`python_may_matter` without :data:`MAP_MODULES`: the pre-filter of the readers
    the rules read (a file only the map's reader wants is not theirs)."""
    return (
        b"claude" in data
        or _RISK_IMPORT.search(data) is not None
        or _docker_harness(data)
        or spelled_non_ascii(data)
    )


# a harness that starts containers for its package's scripts (agbench's run_cmd.py) imports
# no agent module: it is read when it imports the Docker SDK (`import docker`, `import os,
# docker`, `from docker...`: anywhere in the file) and may start a container as the harness
# reader matches one, `X.containers.run(...)` or `.create(...)`, spelled as Python allows:
# blanks, line ends and continuations around the dot (`client.containers .run`), and
# inside brackets comments, which count as "maybe" (never read through: see BLANKS)
_DOCKER_IMPORT = _import_of((b"docker",))
CONTAINER_START = re.compile(
    rb"containers" + BLANKS + rb"(?:#|\." + BLANKS + rb"(?:#|(?:run|create)(?![A-Za-z0-9_])))"
)


def _docker_harness(data: bytes) -> bool:
    return (
        b"containers" in data
        and CONTAINER_START.search(data) is not None
        and _DOCKER_IMPORT.search(data) is not None
    )

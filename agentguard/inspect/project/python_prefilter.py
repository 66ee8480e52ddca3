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


# a blank between two tokens of a line as Python reads one: a space, a tab, a form feed, or
# a backslash continuation (`from \<newline> agents import X` is one line to Python)
_CONTINUED = rb"\\(?:\r\n|\r|\n)"
_LINE_BLANK = rb"(?:[ \t\f]|" + _CONTINUED + rb")"
_LINE_BLANKS = rb"[ \t\f]*(?:" + _CONTINUED + rb"[ \t\f]*)*"
# an import statement's list, `import a.b as c, d` (names, blanks, continuations up to each
# comma), taken whole from each `import`: one match per statement, none starting inside
# another (a list read by a search from each `import` and each way its blanks could be
# split took time exponential in its commas: `import a, a, ..., x` with 28 names, minutes)
_ITEM = rb"[\w. \t\f]*(?:" + _CONTINUED + rb"[\w. \t\f]*)*"
_IMPORT_LIST = re.compile(
    rb"m(?<=im)port" + _LINE_BLANK + rb"((?:" + _ITEM + rb",)*" + _ITEM + rb")"
)
_CONTINUATION = re.compile(_CONTINUED)


class _Imports:
    """Whether bytes hold ``from <module>`` or ``import a as b, <module>`` for a module whose
    name starts with one of ``modules`` (bytes, not syntax; blanks as above between the
    tokens): one search for ``from`` (its match starts at the ``m``, which ``re`` finds with
    its fastest loop, a lookbehind telling the keyword), then each import list, whole."""

    def __init__(self, modules: tuple[bytes, ...]) -> None:
        self.modules = modules
        # a dotted module is also imported as a name of its package (`from google import
        # genai`), its dots may have blanks around them (`google . genai`): its first name
        # after `from` is a start, read whole below
        heads = {m.split(b".", 1)[0] for m in modules}
        alternatives = b"|".join(re.escape(m) for m in sorted({*modules, *heads}))
        self._from = re.compile(
            rb"m(?<=from)" + _LINE_BLANK + _LINE_BLANKS + rb"(" + alternatives + rb")"
        )
        self._dotted: dict[bytes, list[bytes]] = {}
        for m in modules:
            if b"." in m:
                head, rest = m.split(b".", 1)
                self._dotted.setdefault(head, []).append(rest)

    def search(self, data: bytes) -> bool:
        spelled: bool | None = None  # (a dotted module's other names in the file: asked once)
        for m in self._from.finditer(data):
            head = m.group(1)
            if head not in self._dotted:
                return True
            if spelled is None:
                spelled = any(rest in data for rests in self._dotted.values() for rest in rests)
            if spelled:
                return True  # (a dotted module's package, and its other names spelled: maybe)
        for m in _IMPORT_LIST.finditer(data):
            names = m.group(1)
            if b"\\" not in m.group():
                if any(_dotted_name(n).startswith(self.modules) for n in names.split(b",")):
                    return True
                continue
            # a backslash ends this list's line or another's: read as a continuation
            # (`import google.\<newline> genai`), and as the end of a comment that ran the
            # next line into this list (`# ... import \` then `import agents as a`), where
            # every word may begin a statement: maybe
            joined = _CONTINUATION.sub(b" ", names)
            if any(_dotted_name(n).startswith(self.modules) for n in joined.split(b",")):
                return True
            words = _CONTINUATION.sub(b",", names).replace(b",", b" ").split()
            if any(w.startswith(self.modules) for w in words):
                return True
        return False


def _dotted_name(name: bytes) -> bytes:
    """An import list's name as Python reads it: blanks around a dot are Python's too
    (`google . genai`)."""
    return b".".join(part.strip(b" \t\f") for part in name.split(b"."))


_FROM_OR_IMPORT = _Imports(PY_MODULES + MAP_MODULES)
_RISK_IMPORT = _Imports(PY_MODULES)  # (run only on files the first one matched)


def python_may_matter(data: bytes) -> bool:
    """The cheap test run on every Python file before ``ast.parse``: ``claude`` anywhere,
    or a ``from``/``import`` of a module whose name starts with one of :data:`PY_MODULES`
    (bytes, not syntax: ``import a as b, mcp`` and ``x = 1  # from mcp`` both count), or
    an import of ``docker`` and a ``containers.run``/``.create`` call; or an import of one
    of :data:`MAP_MODULES`."""
    return (
        b"claude" in data
        or _FROM_OR_IMPORT.search(data)
        or _docker_harness(data)
        or spelled_non_ascii(data)  # (a name in letters Python reads as ASCII: maybe)
    )


def python_risk_may_matter(data: bytes) -> bool:
    """:func:`python_may_matter` without :data:`MAP_MODULES`: the pre-filter of the readers
    the rules read (a file only the map's reader wants is not theirs)."""
    return (
        b"claude" in data
        or _RISK_IMPORT.search(data)
        or _docker_harness(data)
        or spelled_non_ascii(data)
    )


# a harness that starts containers for its package's scripts (agbench's run_cmd.py) imports
# no agent module: it is read when it imports the Docker SDK (`import docker`, `import os,
# docker`, `from docker...`: anywhere in the file) and may start a container as the harness
# reader matches one, `X.containers.run(...)` or `.create(...)`, spelled as Python allows:
# blanks, line ends and continuations around the dot (`client.containers .run`), and
# inside brackets comments, which count as "maybe" (never read through: see BLANKS)
_DOCKER_IMPORT = _Imports((b"docker",))
# (the brackets a grouping closes may stand before the dot too: `(client.containers).run`)
_CLOSERS = rb"(?:[ \t\f\r\n)]|\\(?:\r\n|\r(?!\n)|\n))*"
CONTAINER_START = re.compile(
    rb"containers" + _CLOSERS + rb"(?:#|\." + BLANKS + rb"(?:#|(?:run|create)(?![A-Za-z0-9_])))"
)


def _docker_harness(data: bytes) -> bool:
    return (
        b"containers" in data
        and CONTAINER_START.search(data) is not None
        and _DOCKER_IMPORT.search(data)
    )

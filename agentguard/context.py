"""Where a finding's evidence lives: production code, an example, a test, or the docs.

Decided from the path (any folder or file name in it) and the configuration
(``context = {test = ["qa/**"]}`` names more paths for a context, and wins over the
built-in names). A finding in test code is graded at most ``low`` by default, docs the
same, an example at most ``medium``; ``context-severity = {test = "high"}`` changes the
ceiling. Pure: no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from agentguard.severity import Severity

CONTEXTS = ("production", "example", "test", "docs")

# An example is read and copied, never deployed as it is: at most medium; a test or a docs
# snippet at most low. Production code keeps the rule's grade.
DEFAULT_CEILING: Mapping[str, Severity] = {
    "example": Severity.MEDIUM,
    "test": Severity.LOW,
    "docs": Severity.LOW,
}

_TEST_DIRS = frozenset(
    {
        "test",
        "tests",
        "testing",
        "e2e",
        "e2e-tests",
        "e2e_tests",
        "integration-tests",
        "integration_tests",
        "__tests__",
        "spec",
        "specs",
        "test-fixtures",
        "fixtures",
        "testdata",
    }
)
_EXAMPLE_DIRS = frozenset(
    {"example", "examples", "sample", "samples", "demo", "demos", "cookbook", "cookbooks"}
)
_DOCS_DIRS = frozenset({"doc", "docs", "documentation"})
_TEST_FILE = re.compile(
    r"^(?:test_.*\.py|.*_test\.py|conftest\.py|.*\.(?:test|spec)\.[cm]?[jt]sx?"
    r"|dockerfile\.test|.*\.test\.dockerfile)$",
    re.IGNORECASE,
)


# Test code by its own name: a file a test runner runs (not a configuration file an agent
# reads, which is a real launch wherever it lies: `e2e/.mcp.json`)
_TEST_CODE = re.compile(
    r"^(?:test_.*\.py|.*_test\.py|conftest\.py|.*\.(?:test|spec)\.[cm]?[jt]sx?)$", re.IGNORECASE
)


def test_code(path: str) -> bool:
    """Whether the file at ``path`` is test code by its own name (``config.test.ts``,
    ``test_x.py``), whatever its folders say."""
    return bool(_TEST_CODE.match(path.replace("\\", "/").rsplit("/", 1)[-1]))


def path_context(path: str) -> str:
    """The context the path's own names say (production when they say nothing)."""
    norm = path.replace("\\", "/")
    parts = [p for p in norm.split("/") if p and p != "."]
    if not parts:
        return "production"
    folders = {p.lower() for p in parts[:-1]}
    name = parts[-1]
    if folders & _TEST_DIRS or _TEST_FILE.match(name):
        return "test"
    if folders & _EXAMPLE_DIRS:
        return "example"
    if folders & _DOCS_DIRS:
        return "docs"
    return "production"


def context_of(paths: Sequence[str], configured: Mapping[str, tuple[str, ...]]) -> str:
    """The context of a finding located at ``paths`` (its first located path decides).

    ``configured``: context -> globs from the configuration (matched as ignore patterns are).
    """
    from agentguard.globmatch import glob_matches

    for path in paths:
        rel = path[2:] if path.startswith("./") else path
        for ctx in CONTEXTS:
            if any(glob_matches(g, rel) for g in configured.get(ctx, ())):
                return ctx
        return path_context(rel)
    return "production"


def _globs(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(x, str) and x for x in value)


def validate_keys(d: Mapping[str, object], p: str, label: str) -> None:
    """``exclude``, ``context`` and ``context-severity`` of one configuration layer."""
    from agentguard.errors import ConfigError

    if "exclude" in d and not _globs(d["exclude"]):
        raise ConfigError(f"{label}: {p}exclude must be a list of paths (globs)")
    for table in ("context", "context-severity"):
        value = d.get(table, {})
        if not isinstance(value, dict):
            raise ConfigError(f"{label}: {p}{table} must be a table")
        for ctx, entry in value.items():
            if ctx not in CONTEXTS:
                raise ConfigError(
                    f"{label}: unknown context `{p}{table}.{ctx}` (known: {', '.join(CONTEXTS)})"
                )
            if table == "context" and not _globs(entry):
                raise ConfigError(f"{label}: {p}context.{ctx} must be a list of paths (globs)")
            if table == "context-severity":
                try:
                    Severity.parse(entry if isinstance(entry, str) else repr(entry))
                except ValueError as exc:
                    raise ConfigError(f"{label}: {p}context-severity.{ctx}: {exc}") from None

"""Install facts: pip/uv install commands, requirement declarations, agent tool installs.

Filled by :mod:`agentguard.inspect.project.install_facts` (shell text of Dockerfile RUN
lines, compose ``command``/``entrypoint``, devcontainer lifecycle commands; requirements
files and ``pyproject.toml``) and :mod:`agentguard.inspect.project.tool_installs`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class InstallCommand:
    """One ``pip install`` / ``uv pip install`` / ``pipx install`` invocation."""

    tool: str  # "pip" | "uv pip" | "pipx" | "uv tool" | "uv sync"
    text: str  # the command, its URLs masked by the one redactor (redact.url)
    path: str  # the file it was found in
    line: int
    phase: str  # "build" | "start"
    packages: tuple[str, ...]  # requirement specifiers and local paths on the command line
    requirement_files: tuple[str, ...]
    constraint_files: tuple[str, ...]
    require_hashes: bool
    no_deps: bool
    env_guards: tuple[str, ...] = ()  # PIP_REQUIRE_HASHES / PIP_CONSTRAINT / ... in force
    # `uv sync`: --locked/--frozen (or UV_LOCKED/UV_FROZEN) holds it to the lock
    locked: bool = False
    # `uv sync`: whether the build has the project's uv.lock -- "present", "ignored" (the
    # checkout's .gitignore lists it: a fresh clone has none), "absent"; None: not known
    lock_state: str | None = None


@dataclass(frozen=True)
class RequirementDecl:
    """A requirement as declared somewhere, with where."""

    raw: str
    name: str | None  # canonical; None when the line is not a named requirement
    specifier: str  # "" when none
    path: str
    line: int | None
    origin: str  # "requirements" | "pyproject" | "command"
    hashed: bool = False


@dataclass(frozen=True)
class RequirementsFile:
    path: str
    requirements: tuple[RequirementDecl, ...]
    includes: tuple[str, ...]  # -r
    constraints: tuple[str, ...]  # -c
    all_hashed: bool  # every named requirement carries --hash (pip then checks hashes)
    all_pinned: bool  # every named requirement is ==
    generated_lock: bool  # header of pip-compile / uv pip compile / uv export


# The agent CLIs and SDKs distributed through npm whose version decides what the agent
# may do (their defaults for tools and permissions change between releases).
AGENT_NPM = frozenset(
    {
        "@anthropic-ai/claude-code",
        "@anthropic-ai/claude-agent-sdk",
        "@openai/codex",
        "@google/gemini-cli",
        "@github/copilot",
        "@sourcegraph/amp",
        "@qwen-code/qwen-code",
        "opencode-ai",
    }
)


@dataclass(frozen=True)
class ToolInstall:
    kind: str  # "npm-global" | "npx" | "remote-script"
    what: str  # the package (name@spec as written) or the URL
    reason: str  # why it is unpinned, in words
    path: str
    line: int
    phase: str  # "build" | "start"


def poetry_to_pep440(spec: str) -> str:
    """Poetry's ``^``/``~``/``*`` forms as PEP 440 (enough to judge upper bounds)."""
    spec = spec.strip()
    if spec in ("*", ""):
        return ""
    if spec.startswith("^"):
        return f">={spec[1:]},<{_caret_upper(spec[1:])}"
    if spec.startswith("~") and not spec.startswith("~="):
        return _tilde(spec[1:].strip())
    if re.fullmatch(r"\d+(\.\d+)*", spec):
        return f"=={spec}"
    return spec


def _tilde(version: str) -> str:
    """Poetry's ``~``: the minor is fixed where one is given (``~1.2`` and ``~1.2.3`` are
    below 1.3), the major where only it is (``~1`` is below 2). PEP 440's ``~=1.2`` would
    admit every 1.x, a wider range than Poetry resolves."""
    m = re.match(r"(\d+)(?:\.(\d+))?", version)
    if m is None:
        return f"=={version}"  # (not a version Poetry reads either: left to the parser)
    major, minor = m.group(1), m.group(2)
    upper = f"{int(major) + 1}" if minor is None else f"{major}.{int(minor) + 1}"
    return f">={version},<{upper}"


def _caret_upper(version: str) -> str:
    parts = [int(p) if p.isdigit() else 0 for p in version.split(".")[:3]]
    for idx, p in enumerate(parts):
        if p != 0 or idx == len(parts) - 1:
            return ".".join([*map(str, parts[:idx]), str(p + 1)])
    return "1"

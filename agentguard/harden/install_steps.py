"""What a Dockerfile's ``RUN`` step installs, and which project files it reads (no I/O).

Two questions decide how the hardened Dockerfile treats a step:

- does it install the agent's dependencies, and from where: the project's lock
  (``pip install -r requirements.lock``, ``uv sync --locked``, ``poetry install``), a fresh
  resolution (``pip install httpx``, ``-r requirements.txt``), or only the installer itself
  (``pip install --upgrade pip``)?
- which files of the project does it read? Only when that is provable -- each command of
  the step is an install this reader knows, every option it takes is known, and the files
  are named (``-r FILE``, ``pyproject.toml`` and ``uv.lock`` for ``uv sync
  --no-install-project``) -- can the whole-context ``COPY .`` before it be narrowed to those
  files and the code. ``pip install .``, ``-e .``, ``uv sync`` that installs the project,
  a shell construct, a variable or any other command may read any file: ``reads`` is None
  and ``why`` says which part.
"""

from __future__ import annotations

import json
import posixpath
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

LOCK_NAMES = ("requirements.lock", "pylock.toml")
TOOLING = frozenset({"pip", "setuptools", "wheel", "uv", "poetry", "pip-tools"})

# pip and `uv pip` options: those that take a value, those that do not
_PIP_VALUED = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--trusted-host",
        "--target",
        "-t",
        "--prefix",
        "--root",
        "--cache-dir",
        "--python",
        "-p",
        "--platform",
        "--only-binary",
        "--no-binary",
        "--progress-bar",
        "--root-user-action",
        "--python-version",
        "--implementation",
        "--abi",
        "--index-strategy",
        "--keyring-provider",
        "--link-mode",
        "--index",
        "--default-index",
        "--timeout",
        "--retries",
    }
)
_PIP_SWITCHES = frozenset(
    {
        "--no-cache-dir",
        "--no-cache",
        "--no-deps",
        "--require-hashes",
        "--no-index",
        "-q",
        "--quiet",
        "-v",
        "--verbose",
        "--disable-pip-version-check",
        "--user",
        "--system",
        "--break-system-packages",
        "-U",
        "--upgrade",
        "--compile",
        "--no-compile",
        "--compile-bytecode",
        "--prefer-binary",
        "--pre",
        "--no-build-isolation",
        "--no-warn-script-location",
        "--force-reinstall",
        "--ignore-installed",
        "--strict",
    }
)
# where packages come from: carried into the lock install that replaces a line
SOURCE_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--trusted-host", "--index"}
)
SOURCE_SWITCHES = frozenset({"--no-index"})
# how the installer is run (kept too): the environment it installs into
ENV_OPTIONS = frozenset({"--target", "-t", "--prefix", "--root", "--python", "-p"})
ENV_SWITCHES = frozenset(
    {"--no-cache-dir", "--no-cache", "--user", "--system", "--break-system-packages", "-q"}
)
_UV_SYNC_VALUED = frozenset(
    {
        "--extra",
        "--group",
        "--no-group",
        "--only-group",
        "--python",
        "-p",
        "--index-url",
        "--extra-index-url",
        "--find-links",
        "-f",
        "--index",
        "--default-index",
        "--package",
        "--cache-dir",
        "--link-mode",
        "--no-install-package",
    }
)
_UV_SYNC_SWITCHES = frozenset(
    {
        "--locked",
        "--frozen",
        "--no-dev",
        "--all-extras",
        "--no-install-project",
        "--no-install-workspace",
        "--no-editable",
        "--compile-bytecode",
        "--no-cache",
        "-q",
        "--quiet",
        "-v",
        "--offline",
        "--no-sources",
        "--inexact",
        "--exact",
        "--all-groups",
        "--no-progress",
    }
)
_POETRY_VALUED = frozenset({"--with", "--without", "--only", "-E", "--extras"})
_POETRY_SWITCHES = frozenset(
    {"--no-root", "--no-interaction", "-n", "--no-ansi", "--sync", "--all-extras", "-q", "--quiet"}
)


@dataclass(frozen=True)
class InstallCommand:
    """One command of a RUN step that this reader knows."""

    tool: str  # "pip" (pip or `uv pip`), "uv-sync", "poetry"
    argv: tuple[str, ...]
    launcher: tuple[str, ...]  # the words before `install` / `sync` (`python3 -m pip`)
    options: tuple[str, ...]  # the options kept in a replacement (environment and sources)
    requirements: tuple[str, ...]  # the files it installs from (-r), relative as written
    constraints: tuple[str, ...]  # -c files
    names: tuple[str, ...]  # packages named on the line
    reads: tuple[str, ...] | None  # the project files it reads; None: any of them
    why: str = ""  # when reads is None


@dataclass(frozen=True)
class Step:
    """A RUN step: its commands, what it installs and what it reads."""

    commands: tuple[InstallCommand, ...]
    reads: tuple[str, ...] | None
    why: str
    installs: str  # "lock" | "resolve" | "tools" | "none"

    @property
    def replaceable(self) -> bool:
        """Install commands only, one of them resolving: the lock install can take its
        place (the others only update the installer and are kept)."""
        kinds = [_installs(c) for c in self.commands]
        return (
            self.reads is not None
            and kinds.count("resolve") == 1
            and (all(k in ("resolve", "tools") for k in kinds))
        )

    @property
    def tool_commands(self) -> tuple[InstallCommand, ...]:
        return tuple(c for c in self.commands if _installs(c) == "tools")


def _words(rest: str) -> tuple[list[list[str]] | None, str]:
    """The step's commands split at ``&&``, or (None, why) for anything else."""
    if rest.startswith("["):
        try:
            value = json.loads(rest)
        except ValueError:
            return None, "its exec form is not valid JSON"
        if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
            return None, "its exec form is not a list of strings"
        if any(c < " " or c == "\x7f" for v in value for c in v):
            # a word is copied into the hardened Dockerfile: a newline there would start a
            # new instruction
            return None, "a word of it holds a control character"
        return [list(value)], ""
    if rest.startswith("<<") or "`" in rest or "$" in rest:
        return None, "it uses a heredoc, a variable or a command substitution"
    lexer = shlex.shlex(rest, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError as exc:
        return None, f"its shell text does not parse ({exc})"
    commands: list[list[str]] = [[]]
    for tok in tokens:
        if tok == "&&":
            commands.append([])
        elif tok and all(c in "();<>|&" for c in tok):
            return None, f"it uses the shell operator {tok!r}"
        else:
            commands[-1].append(tok)
    if any(not c for c in commands):
        return None, "it has an empty command"
    return commands, ""


def _is_python(word: str) -> bool:
    base = posixpath.basename(word)
    return base == "python" or (base.startswith("python") and base[6:].replace(".", "").isdigit())


def _split_tool(argv: Sequence[str]) -> tuple[str, int] | None:
    """(tool, index of its sub-command) for a command this reader knows."""
    base = [posixpath.basename(a) for a in argv]
    if len(argv) >= 2 and base[0] in ("pip", "pip3") and argv[1] == "install":
        return "pip", 1
    if len(argv) >= 4 and _is_python(argv[0]) and argv[1:4] == ["-m", "pip", "install"]:
        return "pip", 3
    if len(argv) >= 3 and base[0] == "uv" and argv[1:3] == ["pip", "install"]:
        return "pip", 2
    if len(argv) >= 2 and base[0] == "uv" and argv[1] == "sync":
        return "uv-sync", 1
    if len(argv) >= 2 and base[0] == "poetry" and argv[1] == "install":
        return "poetry", 1
    return None


def _unknown(tool: str, argv: Sequence[str], why: str) -> InstallCommand:
    return InstallCommand(tool, tuple(argv), (), (), (), (), (), None, why)


def _pip(argv: Sequence[str], at: int) -> InstallCommand:
    options: list[str] = []
    reqs: list[str] = []
    cons: list[str] = []
    names: list[str] = []
    reads: list[str] = []
    i = at + 1
    while i < len(argv):
        word = argv[i]
        flag, eq, inline = word.partition("=")
        short = word[:2] if word.startswith("-") and not word.startswith("--") else ""
        if flag in ("-r", "--requirement", "-c", "--constraint") or short in ("-r", "-c"):
            if eq:
                value = inline
            elif short and len(word) > 2:
                value, flag = word[2:], short
            elif i + 1 < len(argv):
                value, i = argv[i + 1], i + 1
            else:
                return _unknown("pip", argv, f"{word} has no file")
            (cons if flag in ("-c", "--constraint") else reqs).append(value)
            reads.append(value)
        elif flag in ("-e", "--editable"):
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            return _unknown("pip", argv, f"it installs {value or 'a folder'} in editable mode")
        elif flag in _PIP_VALUED:
            value = inline if eq else (argv[i + 1] if i + 1 < len(argv) else "")
            if not eq:
                i += 1
            if flag in ("-f", "--find-links") and not value.startswith(("/", "http")):
                return _unknown("pip", argv, f"{flag} {value} reads a folder of the project")
            if flag in SOURCE_OPTIONS or flag in ENV_OPTIONS:
                options += [flag, value]
        elif word in _PIP_SWITCHES:
            if word in SOURCE_SWITCHES or word in ENV_SWITCHES:
                options.append(word)
        elif flag == "--root-user-action":
            options.append(word)
        elif word.startswith("-"):
            return _unknown("pip", argv, f"the option {word} is not one this reader knows")
        elif "/" in word or word.startswith(".") or word.endswith((".whl", ".tar.gz", ".zip")):
            return _unknown("pip", argv, f"it installs {word}, which may be any file")
        else:
            names.append(word)
        i += 1
    return InstallCommand(
        "pip",
        tuple(argv),
        tuple(argv[:at]),
        tuple(options),
        tuple(reqs),
        tuple(cons),
        tuple(names),
        tuple(reads),
    )


def _project_tool(tool: str, argv: Sequence[str], at: int) -> InstallCommand:
    """``uv sync`` / ``poetry install``: pyproject.toml and the lock, and the project's
    own source unless the line says not to install it."""
    valued, switches = (
        (_UV_SYNC_VALUED, _UV_SYNC_SWITCHES)
        if tool == "uv-sync"
        else (_POETRY_VALUED, _POETRY_SWITCHES)
    )
    seen: list[str] = []
    i = at + 1
    while i < len(argv):
        word = argv[i]
        flag, eq, _v = word.partition("=")
        if flag in valued:
            i += 1 if eq else 2
            continue
        if word not in switches:
            return _unknown(tool, argv, f"the option {word} is not one this reader knows")
        seen.append(word)
        i += 1
    lock = "uv.lock" if tool == "uv-sync" else "poetry.lock"
    skip_project = "--no-install-project" if tool == "uv-sync" else "--no-root"
    if skip_project not in seen:
        return _unknown(tool, argv, f"it installs the project itself (no {skip_project})")
    return InstallCommand(
        tool, tuple(argv), tuple(argv[:at]), (), (lock,), (), (), ("pyproject.toml", lock)
    )


def install_command(argv: Sequence[str]) -> InstallCommand | None:
    known = _split_tool(argv)
    if known is None:
        return None
    tool, at = known
    return _pip(argv, at) if tool == "pip" else _project_tool(tool, argv, at)


def _installs(cmd: InstallCommand) -> str:
    if cmd.tool in ("uv-sync", "poetry"):
        locked = cmd.tool == "poetry" or {"--locked", "--frozen"} & set(cmd.argv)
        return "lock" if locked else "resolve"
    if cmd.requirements and all(posixpath.basename(r) in LOCK_NAMES for r in cmd.requirements):
        return "lock" if not cmd.names else "resolve"
    if not cmd.requirements and cmd.names and all(n.lower() in TOOLING for n in cmd.names):
        return "tools"
    return "resolve" if (cmd.requirements or cmd.names) else "none"


def read_step(rest: str) -> Step:
    """The RUN step ``rest`` (the text after ``RUN``), classified. Its own flags
    (``--mount=type=cache,...``, ``--network=...``) are not part of the command: a bind
    mount reads the build context, not what ``COPY .`` put in the image."""
    while rest.startswith("--"):
        _flag, _, rest = rest.partition(" ")
        rest = rest.lstrip()
    commands, why = _words(rest)
    if commands is None:
        return Step((), None, why, "none")
    known: list[InstallCommand] = []
    reads: list[str] = []
    unknown = ""
    for argv in commands:
        cmd = install_command(argv)
        if cmd is None:
            unknown = unknown or f"`{' '.join(argv)[:80]}` is not an install this reader knows"
            continue
        known.append(cmd)
        if cmd.reads is None:
            unknown = unknown or cmd.why
        else:
            reads += [r for r in cmd.reads if r not in reads]
    kinds = {_installs(c) for c in known}
    installs = next((k for k in ("resolve", "lock", "tools") if k in kinds), "none")
    if unknown:
        return Step(tuple(known), None, unknown, installs)
    return Step(tuple(known), tuple(reads), "", installs)

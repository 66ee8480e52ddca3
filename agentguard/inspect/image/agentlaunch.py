"""An image's command line read the way the kernel and the usual launchers would
(``tini``/``dumb-init``/``env``/``gosu`` wrappers, ``sh -c``, ``python [-m]``,
``node``/``bun``/``deno``/``tsx``, ``uv run`` and friends, the ``claude``/``codex``/``gemini``
CLIs): one :class:`Launch` per program it starts, a bare command looked up in ``PATH``
(:mod:`.agentplan` turns the launches into what the layer scan collects). Pure functions.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

# npm packages of the agent CLIs (their package.json marks a global install).
CLI_PACKAGES = {
    "@anthropic-ai/claude-code": "claude",
    "@openai/codex": "codex",
    "@google/gemini-cli": "gemini",
}
AGENT_COMMANDS = frozenset(CLI_PACKAGES.values())
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

_PYTHON = re.compile(r"^python(\d+(\.\d+)?)?$")
_NODES = frozenset({"node", "nodejs", "bun", "tsx", "ts-node"})
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_PASS_THROUGH = frozenset({"tini", "dumb-init", "tini-static", "catatonit"})
_SWITCH_USER = frozenset({"gosu", "su-exec"})
_PY_VALUE_FLAGS = frozenset({"-X", "-W", "-Q"})
_RUNNERS = frozenset({"uv", "poetry", "pipenv", "hatch", "pdm", "rye"})
_RUNNER_VALUE_FLAGS = frozenset(
    {"--with", "--python", "-p", "--project", "--directory", "--env-file", "--extra"}
    | {"--group", "--package", "-e", "--env"}
)


@dataclass(frozen=True)
class Launch:
    """One way the config starts a program, as read from its command line."""

    kind: str  # "script" | "module" | "cli" | "program" | "inline" | "unknown"
    argv: tuple[str, ...]  # the command line from the program on (not redacted: facts only)
    target: str | None = None  # script/program path or module name (absolute when a path)
    interpreter: str | None = None  # "python" | "node" | "shell" | the CLI name
    candidates: tuple[str, ...] = ()  # absolute paths the target may be (PATH lookup)
    inline: str | None = None  # the text of ``sh -c``/``python -c``


def read_launch(argv: Sequence[str], env_map: dict[str, str], cwd: str, depth: int = 0) -> Launch:
    """What ``argv`` starts, past launchers and interpreters. ``cwd`` is absolute."""
    args = list(argv)
    while args:
        prog = posixpath.basename(args[0])
        if prog in _PASS_THROUGH:
            args = args[1:]
            while args and args[0].startswith("-"):
                done = args[0] == "--"
                args = args[1:]
                if done:
                    break
            continue
        if prog == "env":
            args = args[1:]
            while args and ("=" in args[0] or args[0].startswith("-")):
                args = args[1:]
            continue
        if prog in _SWITCH_USER:
            args = args[2:]
            continue
        if prog == "exec":
            args = args[1:]
            continue
        if prog in _RUNNERS and args[1:2] == ["run"]:
            # `uv run [--frozen --with X] python bot.py`, `poetry run ...`: the project's env
            args = args[2:]
            while args and args[0].startswith("-"):
                args = args[2:] if args[0] in _RUNNER_VALUE_FLAGS else args[1:]
            if args and args[0].endswith(".py"):
                args = ["python", *args]  # `uv run bot.py` runs it with the project's Python
            continue
        break
    if not args:
        return Launch("unknown", tuple(argv))
    prog = posixpath.basename(args[0])
    rest = args[1:]
    line = tuple(args)
    if prog in AGENT_COMMANDS:
        return Launch(
            "cli", line, target=args[0], interpreter=prog, candidates=_which(args[0], env_map, cwd)
        )
    if prog in ("npx", "bunx") or (prog in ("npm", "pnpm") and rest[:1] == ["exec"]):
        pkgs = [a for a in rest if not a.startswith("-") and a != "exec"]
        if pkgs:
            name = (
                pkgs[0].rsplit("@", 1)[0]
                if pkgs[0].count("@") > 1 or not pkgs[0].startswith("@")
                else pkgs[0]
            )
            for package, command in CLI_PACKAGES.items():
                if name.startswith(package):
                    return Launch("cli", line, target=package, interpreter=command)
        return Launch("program", line, target=args[0])
    if _PYTHON.match(prog):
        return _python(line, rest, env_map, cwd)
    if prog in _NODES or prog == "deno":
        if prog == "deno" and rest[:1] == ["run"]:
            rest = rest[1:]
        for a in rest:
            if not a.startswith("-"):
                return _script(line, a, "node", cwd)
        return Launch("unknown", line, target=args[0], interpreter="node")
    if prog in _SHELLS or (prog == "busybox" and rest[:1] and rest[0] in _SHELLS):
        if prog == "busybox":
            rest = rest[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-c":
            rest = rest[1:]
        if rest[:1] == ["-c"]:
            text = rest[1] if len(rest) > 1 else ""
            return Launch("inline", line, interpreter="shell", inline=text)
        if rest:
            return _script(line, rest[0], "shell", cwd)
        return Launch("unknown", line, interpreter="shell")
    if "/" in args[0] and args[0].endswith(SCRIPT_SUFFIXES):
        interp = (
            "python" if args[0].endswith(".py") else "shell" if args[0].endswith(".sh") else "node"
        )
        return _script(line, args[0], interp, cwd)
    return Launch("program", line, target=args[0], candidates=_which(args[0], env_map, cwd))


def _python(line: tuple[str, ...], rest: list[str], env_map: dict[str, str], cwd: str) -> Launch:
    i = 0
    while i < len(rest):
        a = rest[i]
        if a == "-m" and i + 1 < len(rest):
            return Launch("module", line, target=rest[i + 1], interpreter="python")
        if a.startswith("-m") and len(a) > 2:
            return Launch("module", line, target=a[2:], interpreter="python")
        if a == "-c":
            return Launch(
                "inline",
                line,
                interpreter="python",
                inline=rest[i + 1] if i + 1 < len(rest) else "",
            )
        if a in _PY_VALUE_FLAGS:
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        return _script(line, a, "python", cwd)
    return Launch("unknown", line, interpreter="python")


def _script(line: tuple[str, ...], path: str, interpreter: str, cwd: str) -> Launch:
    full = posixpath.normpath(posixpath.join(cwd, path))
    # the candidate keeps its `..`: the kernel takes it after the links before it
    # (/app/../bot.py with /app -> /opt/real is /opt/bot.py, not /bot.py)
    raw = posixpath.join(cwd, path)
    return Launch("script", line, target=full, interpreter=interpreter, candidates=(raw,))


def _which(prog: str, env_map: dict[str, str], cwd: str) -> tuple[str, ...]:
    """Where the kernel looks for ``prog``: its `..` kept (resolved after links)."""
    if "/" in prog:
        return (posixpath.join(cwd, prog),)
    dirs = env_map.get("PATH", DEFAULT_PATH).split(":")
    return tuple(posixpath.join(d, prog) for d in dirs if d.startswith("/"))

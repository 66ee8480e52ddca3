"""Which pre-approved tool patterns let the model run code of its own choosing.

One table for every rule that weighs an allow-list (``allowed_tools``, ``--allowedTools``,
claude-code-action's ``allowed_tools:`` input, ``permissions.allow`` of a settings file).
A pattern such as ``Bash(git diff:*)`` or ``Bash(ls:*)`` restricts the shell to one
program whose arguments cannot start another; ``Bash(python:*)``, ``Bash(make:*)``,
``Bash(uv run:*)``, ``Bash(npm run:*)``, ``Bash(find:*)`` (``-exec``) do not: with any
arguments, they run any code. Pure data and a pure function; no I/O.
"""

from __future__ import annotations

import posixpath
import re

_INTERPRETER = "runs the code it is given (`-c`/`-e` or a script)"
_WRAPPER = "runs the command it is given"
_RUNNER = "runs a program or package script of the caller's choosing"
_INSTALLER = "builds and installs any package (its build scripts run)"
_TESTS = (
    "runs every test file and `conftest.py` it is pointed at (a pull request's own, in its "
    "checkout), and `-p` loads any installed module"
)

_INTERPRETERS = (
    "python python2 python3 pypy pypy3 node deno bun ruby perl php lua rscript bash sh zsh "
    "dash ksh fish pwsh powershell osascript ipython jupyter"
)
_WRAPPERS = (
    "env xargs sudo doas su timeout nice nohup time watch exec eval source . command strace "
    "script parallel stdbuf flock setsid chroot unshare nsenter"
)
# program -> (subcommands that run arbitrary code; None: every use does, why)
_TABLE: dict[str, tuple[frozenset[str] | None, str]] = {
    **{p: (None, _INTERPRETER) for p in _INTERPRETERS.split()},
    **{p: (None, _WRAPPER) for p in _WRAPPERS.split()},
    "find": (None, "`-exec` runs any command"),
    "awk": (None, "`system()` runs any command"),
    "gawk": (None, "`system()` runs any command"),
    "mawk": (None, "`system()` runs any command"),
    "sed": (None, "GNU sed's `e` command runs a shell command"),
    "tar": (None, "`--to-command` and `--checkpoint-action=exec` run a command"),
    "rg": (None, "`--pre` runs a preprocessor command"),
    "vim": (None, "`:!` runs a shell command"),
    "make": (None, "`--eval` and the Makefile's recipes run shell commands"),
    "gmake": (None, "`--eval` and the Makefile's recipes run shell commands"),
    "just": (None, "the justfile's recipes run shell commands"),
    "npx": (None, "downloads and runs any package"),
    "pnpx": (None, "downloads and runs any package"),
    "bunx": (None, "downloads and runs any package"),
    "uvx": (None, "downloads and runs any package"),
    "pipx": (None, "downloads and runs any package"),
    "pytest": (None, _TESTS),
    "py.test": (None, _TESTS),
    "tox": (None, "runs the commands of its configuration and installs packages"),
    "nox": (None, "runs `noxfile.py`"),
    "pre-commit": (None, "runs the hooks of its configuration, and `try-repo` any repository's"),
    "git": (
        frozenset({"-c", "--exec-path", "submodule", "filter-branch", "bisect", "rebase"}),
        "`-c` sets a pager or an alias that runs a shell command, and hooks run",
    ),
    "uv": (frozenset({"run", "pip", "add", "tool", "build", "x"}), _RUNNER),
    "poetry": (frozenset({"run", "add", "install", "build"}), _RUNNER),
    "pdm": (frozenset({"run", "add", "install", "build"}), _RUNNER),
    "hatch": (frozenset({"run", "env", "build", "test"}), _RUNNER),
    "rye": (frozenset({"run", "add", "sync"}), _RUNNER),
    "pipenv": (frozenset({"run", "install"}), _RUNNER),
    "conda": (frozenset({"run", "install"}), _RUNNER),
    "pip": (frozenset({"install", "download", "wheel"}), _INSTALLER),
    "pip3": (frozenset({"install", "download", "wheel"}), _INSTALLER),
    "npm": (
        frozenset(
            {
                "run",
                "run-script",
                "exec",
                "x",
                "install",
                "i",
                "ci",
                "test",
                "t",
                "start",
                "add",
                "rebuild",
                "explore",
            }
        ),
        _RUNNER,
    ),
    "pnpm": (frozenset({"run", "exec", "dlx", "install", "i", "add", "test", "start"}), _RUNNER),
    "yarn": (frozenset({"run", "exec", "dlx", "install", "add", "test", "start"}), _RUNNER),
    "cargo": (frozenset({"run", "build", "test", "install", "bench", "check"}), _RUNNER),
    "go": (frozenset({"run", "build", "test", "generate", "install", "tool"}), _RUNNER),
    "dotnet": (frozenset({"run", "build", "test", "exec", "tool"}), _RUNNER),
    "mvn": (None, "runs the build's plugins"),
    "gradle": (None, "runs the build script"),
    "./gradlew": (None, "runs the build script"),
    "docker": (frozenset({"run", "exec", "build", "compose", "buildx"}), _RUNNER),
    "podman": (frozenset({"run", "exec", "build"}), _RUNNER),
    # (`gh extension` installs and runs any extension; `gh alias set --shell` any command)
    "gh": (frozenset({"extension", "ext", "alias"}), _RUNNER),
}
# the program of `uv run X`, `npm exec X`, `poetry run X`: classified in turn
_RUNS_NEXT = frozenset({"run", "exec", "x", "dlx", "tool"})
_PYTHON_VERSION = re.compile(r"^python\d+(?:\.\d+)?$")
_SHELL_TOOLS = frozenset({"Bash", "BashOutput", "KillShell", "KillBash"})


def _program(word: str) -> str:
    base = posixpath.basename(word) if "/" in word and word != "./gradlew" else word
    base = base.lower()
    return "python" if _PYTHON_VERSION.match(base) else base


def _classify(words: list[str], open_args: bool) -> str | None:
    """Why the command ``words`` (followed by any arguments when ``open_args``) runs code
    of the caller's choosing, or None when it does not."""
    if not words:
        return "any command" if open_args else None
    if any(c in words[0] for c in "*?["):
        return f"`{words[0]}` matches any program there"
    name = _program(words[0])
    entry = _TABLE.get(name)
    if entry is None:
        return None
    subs, why = entry
    if why == _INTERPRETER and len(words) > 1:
        # `python -m pytest`: the module is the program; `python -c`: the code is open;
        # `python script.py`: that script, with any arguments
        if words[1] == "-m" and len(words) > 2:
            return _classify(words[2:], open_args)
        if words[1] not in ("-c", "-e", "--eval", "-m", "-"):
            return None
    if subs is None:
        return f"{name} {why}" if open_args else None
    if len(words) == 1:
        return f"{name} with any subcommand: {why}" if open_args else None
    sub = words[1]
    if sub not in subs:
        return None
    if sub in _RUNS_NEXT and name not in ("npm", "pnpm", "yarn") and len(words) > 2:
        return _classify(words[2:], open_args)
    return f"`{name} {sub}` {why}" if open_args else None


def arbitrary_code(entry: str) -> str | None:
    """Why a pre-approval pattern lets the model run code of its choosing, or None.

    ``Bash``, ``Bash(*)``, ``Bash(python:*)``, ``Bash(uv run pytest:*)``,
    ``Bash(npm run test *)`` do; ``Bash(git diff:*)``, ``Bash(ls:*)``, an exact
    ``Bash(./bin/test.sh)`` and tools other than the shell do not."""
    text = entry.strip()
    base, paren, rest = text.partition("(")
    if base.strip() != "Bash":  # (BashOutput reads a command's output, KillShell ends one)
        return None
    if not paren:
        return "the whole shell"
    pattern = rest.rsplit(")", 1)[0].strip()
    open_args = pattern.endswith(("*", ":*"))
    pattern = pattern.removesuffix("*").rstrip().removesuffix(":").rstrip()
    if not pattern:
        return "any command"
    words = pattern.split()
    if "/" in words[0] and any(c in words[0] for c in "*?["):
        return f"`{words[0]}` matches any program there"
    if words[-1].endswith("*"):  # `Bash(npm run test*)`: the last word is open
        words[-1] = words[-1].rstrip("*")
        open_args = True
        if not words[-1]:
            words.pop()
    return _classify(words, open_args)


def unrestricted(entry: str) -> bool:
    """A pre-approval that approves every call of its tool (``WebFetch``, ``Write(*)``)
    or arbitrary code through the shell."""
    if arbitrary_code(entry) is not None:
        return True
    base, paren, rest = entry.strip().partition("(")
    return base.strip() not in _SHELL_TOOLS and (
        not paren or rest.rsplit(")", 1)[0].strip() in ("", "*", ":*", "**")
    )

"""Where an image's agent is, from its config alone: what the layer scan must also collect.

The config names the program that starts (``ENTRYPOINT`` + ``CMD``); this module reads that
command line the way the kernel and the usual launchers would (``tini``/``dumb-init``/``env``/
``gosu`` wrappers, ``sh -c``, ``python [-m]``, ``node``/``bun``/``deno``/``tsx``, the
``claude``/``codex``/``gemini`` CLIs) and turns it into an :class:`AgentPlan`: exact paths
(the script, a bare command looked up in ``PATH``), folders whose code is collected (the
script's own source tree, a ``-m`` package in any ``site-packages``), and whether a shell
wrapper may ``exec`` something only its body names (then code outside system folders is
kept speculatively, so the wrapper's target is in the same one pass).

Config-independent names (managed settings, ``/etc/passwd``, ``~/.claude.json`` and
``.claude/settings.json`` anywhere, globally installed agent CLIs) are :func:`always_kind`.
Pure functions; names are relative to the image root (no leading slash).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentguard.inspect.image.collect import SYSTEM_TOPS, VENDORED

MANAGED_DIR = "etc/claude-code/"
MANAGED_FILES = frozenset(
    {"etc/claude-code/managed-settings.json", "etc/claude-code/managed-mcp.json"}
)
PASSWD = "etc/passwd"
# npm packages of the agent CLIs (their package.json marks a global install).
CLI_PACKAGES = {
    "@anthropic-ai/claude-code": "claude",
    "@openai/codex": "codex",
    "@google/gemini-cli": "gemini",
}
_PACKAGE_JSONS = tuple(f"node_modules/{p}/package.json" for p in CLI_PACKAGES)
AGENT_COMMANDS = frozenset(CLI_PACKAGES.values())
_USER_CONFIG_NAMES = frozenset({".claude.json"})
_SETTINGS_NAMES = frozenset({"settings.json", "settings.local.json"})
ALWAYS_BASES = frozenset(
    {*_USER_CONFIG_NAMES, *_SETTINGS_NAMES, "config.toml", "package.json", *AGENT_COMMANDS}
    | {"passwd"}
)
SCRIPT_SUFFIXES = (".py", ".js", ".mjs", ".cjs", ".ts", ".mts", ".sh")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_BIN_DIRS = frozenset({"bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin", "usr/local/sbin"})

# kinds returned by the classifiers
CONTENT = "content"  # body collected
ENTRY = "entry"  # only the entry (kind, link) recorded: an agent CLI's launcher

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


def always_kind(name: str) -> str | None:
    """Config-independent agent files: managed settings, the user database, user configs,
    globally installed agent CLIs. Cheap: called for every entry of every layer (one set
    lookup and one prefix test for the names that are none of these)."""
    slash = name.rfind("/")
    base = name[slash + 1 :]
    if base not in ALWAYS_BASES and not name.startswith(MANAGED_DIR):
        return None
    if base in _USER_CONFIG_NAMES:
        return CONTENT if not _vendored(name) else None
    if base in _SETTINGS_NAMES:
        parent = name[:slash]
        if parent.endswith((".claude", ".gemini")) and not _vendored(name):
            return CONTENT
        return None
    if base == "config.toml":  # the Codex CLI's user config
        return CONTENT if name[:slash].endswith(".codex") and not _vendored(name) else None
    if base == "package.json":
        return CONTENT if name.endswith(_PACKAGE_JSONS) else None
    if base in AGENT_COMMANDS:
        parent = name[:slash]
        return ENTRY if parent in _BIN_DIRS or parent.endswith("node_modules/.bin") else None
    if name.startswith(MANAGED_DIR):
        if name in MANAGED_FILES:
            return CONTENT
        if name.startswith(MANAGED_DIR + "managed-settings.d/") and base.endswith(".json"):
            return CONTENT if name.count("/") == 3 and not base.startswith(".") else None
        return None
    if name == PASSWD:
        return CONTENT
    return None


def _vendored(name: str) -> bool:
    return any(part in VENDORED for part in name.split("/")[:-1])


@dataclass(frozen=True)
class Launch:
    """One way the config starts a program, as read from its command line."""

    kind: str  # "script" | "module" | "cli" | "program" | "inline" | "unknown"
    argv: tuple[str, ...]  # the command line from the program on (not redacted: facts only)
    target: str | None = None  # script/program path or module name (absolute when a path)
    interpreter: str | None = None  # "python" | "node" | "shell" | the CLI name
    candidates: tuple[str, ...] = ()  # absolute paths the target may be (PATH lookup)
    inline: str | None = None  # the text of ``sh -c``/``python -c``


@dataclass(frozen=True)
class AgentPlan:
    """What the layer scan collects beyond the working directory, for one config."""

    launches: tuple[Launch, ...] = ()
    exact: frozenset[str] = frozenset()  # relative names: body and entry collected
    trees: tuple[str, ...] = ()  # relative folder prefixes ("opt/agent/"): code collected
    modules: tuple[str, ...] = ()  # "/site-packages/pkg/"-like fragments: code collected
    speculative: bool = False  # a wrapper may exec what only its body names
    home_hints: tuple[str, ...] = ()  # CLAUDE_CONFIG_DIR, CODEX_HOME from ENV (absolute)
    config_dirs: tuple[str, ...] = ()  # folders ("opt/cc/managed-settings.d/"): their *.json

    @property
    def active(self) -> bool:
        """Whether the plan wants anything beyond the always-collected names."""
        return bool(
            self.exact or self.trees or self.modules or self.speculative or self.config_dirs
        )

    def covers(self, other: AgentPlan) -> bool:
        """Whether a scan for this plan collected everything ``other`` wants."""
        return (
            other.exact <= self.exact
            and set(other.trees) <= set(self.trees)
            and set(other.modules) <= set(self.modules)
            and (self.speculative or not other.speculative)
            and set(other.config_dirs) <= set(self.config_dirs)
        )

    def wants(self, name: str) -> str | None:
        """Does this plan want the body of ``name``? "exact", "code" or "speculative"."""
        if name in self.exact:
            return "exact"
        if (
            self.config_dirs
            and name.endswith(".json")
            and name[: name.rfind("/") + 1] in self.config_dirs
        ):
            return "exact"
        if not name.endswith(SCRIPT_SUFFIXES):
            return None
        if self.trees and name.startswith(self.trees) and not _vendored_below(name, self.trees):
            return "code"
        if self.modules and name.endswith(".py"):
            for m in self.modules:
                if m in "/" + name:
                    return "code"
        if self.speculative and not _system(name) and not _vendored(name):
            return "speculative"
        return None


def _vendored_below(name: str, trees: tuple[str, ...]) -> bool:
    for t in trees:
        if name.startswith(t):
            return _vendored(name[len(t) :])
    return False


def _system(name: str) -> bool:
    i = name.find("/")
    if i < 0:
        return name in SYSTEM_TOPS
    if name[:i] in SYSTEM_TOPS:
        return True
    j = name.find("/", i + 1)
    return j > 0 and name[:j] in SYSTEM_TOPS


def source_tree(script: str) -> str | None:
    """The folder whose code is the script's own project (absolute), or None when the
    script sits at the root, in a bin folder or in a system folder."""
    folder = posixpath.dirname(script).lstrip("/")
    if not folder or folder in _BIN_DIRS or _system(folder + "/x"):
        return None
    return "/" + folder


def union(plans: Iterable[AgentPlan]) -> AgentPlan:
    plans = list(plans)
    if len(plans) == 1:
        return plans[0]
    return AgentPlan(
        launches=tuple(x for p in plans for x in p.launches),
        exact=frozenset(x for p in plans for x in p.exact),
        trees=tuple(sorted({x for p in plans for x in p.trees})),
        modules=tuple(sorted({x for p in plans for x in p.modules})),
        speculative=any(p.speculative for p in plans),
        home_hints=tuple(sorted({x for p in plans for x in p.home_hints})),
        config_dirs=tuple(sorted({x for p in plans for x in p.config_dirs})),
    )


def link_plan(wants: Iterable[str]) -> AgentPlan:
    """What to collect where links lead: ``a/b`` a file, ``a/`` a folder's code, ``a/*`` a
    folder's ``*.json`` (relative names, as :attr:`ImageFacts.link_wants` holds them)."""
    wants = set(wants)
    return AgentPlan(
        exact=frozenset(w for w in wants if not w.endswith(("/", "/*"))),
        trees=tuple(sorted(w for w in wants if w.endswith("/"))),
        config_dirs=tuple(sorted(w[:-1] for w in wants if w.endswith("/*"))),
    )


def link_wants_of(plans: Iterable[AgentPlan]) -> tuple[str, ...]:
    """The wants of plans made by :func:`link_plan`, back in its notation."""
    out: set[str] = set()
    for p in plans:
        out.update(p.exact)
        out.update(p.trees)
        out.update(d + "*" for d in p.config_dirs)
    return tuple(sorted(out))


def command_line(entrypoint: Sequence[str] | None, cmd: Sequence[str] | None) -> tuple[str, ...]:
    """What the engine runs: ENTRYPOINT then CMD as its arguments (CMD alone without one)."""
    return tuple(entrypoint or ()) + tuple(cmd or ())


def plan_for(
    entrypoint: Sequence[str] | None,
    cmd: Sequence[str] | None,
    env: Sequence[tuple[str, str]],
    workdir: str,
) -> AgentPlan:
    """The plan for a config. ``workdir`` is relative ("" = the root)."""
    env_map = dict(env)
    argv = command_line(entrypoint, cmd)
    launches = [read_launch(argv, env_map, "/" + workdir)] if argv else []
    plan = _plan(launches, env_map, workdir)
    if launches and launches[0].kind == "program" and len(launches[0].argv) > 1:
        # A wrapper that ends in `exec "$@"` runs its arguments (an ENTRYPOINT script with
        # the CMD): what they start is collected too.
        args = _plan([read_launch(launches[0].argv[1:], env_map, "/" + workdir)], {}, workdir)
        plan = AgentPlan(
            launches=plan.launches,
            exact=plan.exact | args.exact,
            trees=tuple(sorted({*plan.trees, *args.trees})),
            modules=tuple(sorted({*plan.modules, *args.modules})),
            speculative=True,
            home_hints=plan.home_hints,
        )
    return plan


def _plan(launches: list[Launch], env_map: dict[str, str], workdir: str) -> AgentPlan:
    exact: set[str] = set()
    trees: set[str] = set()
    modules: set[str] = set()
    speculative = False
    for launch in launches:
        for path in launch.candidates:
            exact.add(path.lstrip("/"))
        if launch.kind == "script" and launch.target:
            tree = source_tree(launch.target)
            if tree is not None:
                trees.add(tree.lstrip("/") + "/")
        if launch.kind == "module" and launch.target:
            top = launch.target.split(".")[0]
            for where in ("/site-packages/", "/dist-packages/"):
                modules.add(f"{where}{top}/")
                modules.add(f"{where}{top}.py")
            for base in [workdir, *_pythonpath(env_map)]:
                prefix = f"{base}/{top}" if base else top
                trees.add(prefix + "/")
                exact.add(prefix + ".py")
        if launch.kind in ("program", "inline") or (
            launch.kind == "script" and launch.interpreter == "shell"
        ):
            speculative = True
    # CLAUDE_CONFIG_DIR moves the user's settings and .claude.json out of HOME.
    # CLAUDE_CONFIG_DIR moves the user's settings and .claude.json out of HOME, CODEX_HOME
    # the Codex CLI's config.toml.
    hints: list[str] = []
    for var, leaves in (
        ("CLAUDE_CONFIG_DIR", ("settings.json", ".claude.json")),
        ("CODEX_HOME", ("config.toml",)),
    ):
        value = env_map.get(var, "")
        if value.startswith("/"):
            hints.append(posixpath.normpath(value))
            base = hints[-1].lstrip("/")
            for leaf in leaves:
                exact.add(f"{base}/{leaf}" if base else leaf)
    return AgentPlan(
        launches=tuple(launches),
        exact=frozenset(exact),
        trees=tuple(sorted(trees)),
        modules=tuple(sorted(modules)),
        speculative=speculative,
        home_hints=tuple(hints),
    )


def _pythonpath(env_map: dict[str, str]) -> list[str]:
    out = []
    for part in env_map.get("PYTHONPATH", "").split(":"):
        if part.startswith("/"):
            out.append(posixpath.normpath(part).lstrip("/"))
    return out


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
    return Launch("script", line, target=full, interpreter=interpreter, candidates=(full,))


def _which(prog: str, env_map: dict[str, str], cwd: str) -> tuple[str, ...]:
    if "/" in prog:
        return (posixpath.normpath(posixpath.join(cwd, prog)),)
    dirs = env_map.get("PATH", DEFAULT_PATH).split(":")
    return tuple(posixpath.join(posixpath.normpath(d), prog) for d in dirs if d.startswith("/"))

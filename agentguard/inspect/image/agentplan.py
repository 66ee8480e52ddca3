"""Where an image's agent is, from its config alone: what the layer scan must also collect.

The config names the program that starts (``ENTRYPOINT`` + ``CMD``); that command line is
read the way the kernel and the usual launchers would (:mod:`.agentlaunch`) and turned
here into an :class:`AgentPlan`: exact paths
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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentguard.inspect.image.agentlaunch import (
    AGENT_COMMANDS,
    CLI_PACKAGES,
    SCRIPT_SUFFIXES,
    Launch,
    read_launch,
)
from agentguard.inspect.image.collect import SYSTEM_TOPS, VENDORED

MANAGED_DIR = "etc/claude-code/"
MANAGED_FILES = frozenset(
    {"etc/claude-code/managed-settings.json", "etc/claude-code/managed-mcp.json"}
)
PASSWD = "etc/passwd"
_PACKAGE_JSONS = tuple(f"node_modules/{p}/package.json" for p in CLI_PACKAGES)
_USER_CONFIG_NAMES = frozenset({".claude.json"})
_SETTINGS_NAMES = frozenset({"settings.json", "settings.local.json"})
ALWAYS_BASES = frozenset(
    {*_USER_CONFIG_NAMES, *_SETTINGS_NAMES, "config.toml", "package.json", *AGENT_COMMANDS}
    | {"passwd"}
)
_BIN_DIRS = frozenset({"bin", "sbin", "usr/bin", "usr/sbin", "usr/local/bin", "usr/local/sbin"})

# kinds returned by the classifiers
CONTENT = "content"  # body collected
ENTRY = "entry"  # only the entry (kind, link) recorded: an agent CLI's launcher


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
            exact.add(posixpath.normpath(path).lstrip("/"))  # (where no link is on the way)
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

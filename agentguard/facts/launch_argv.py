"""A package launcher's command line read the way the launcher reads it (the one parser
the MCP server lock and AG310 share).

Only the launcher's own options BEFORE its package or command operand count: everything
after the operand is the server's own arguments (``npx -y srv -p x``: ``-p x`` is the
server's). An option the parser does not know (it cannot tell whether the option takes a
value, so which argument is the package) leaves the launch unknown; an option or an
environment variable that points the launcher at another registry or index is said so,
never read as a launch from the default registry; every further package (``npx -p`` given
twice, ``uvx --with``) is listed."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

NPM, PYPI, IMAGE = "npm", "pypi", "image"


@dataclass(frozen=True)
class LaunchLine:
    """What a launcher's argv names. ``spec_at``: the index in ``args`` of the argument
    that names the package or image (None: none); ``more``: indices of further packages;
    ``problem``: why the line cannot be read (an unknown option, a shell command...);
    ``registry``: the option, variable or project file, as written, that sets another
    registry, index or package cache (a source of packages the project chooses)."""

    kind: str
    launcher: str
    spec_at: int | None
    from_flag: bool = False
    more: tuple[int, ...] = ()
    problem: str | None = None
    registry: str | None = None
    inline: tuple[int, ...] = ()  # of spec_at and more: written `--flag=VALUE`
    # npm: (scope, where) of each scope's registry set that is not the scope of a package
    # the line names (`@google:registry=` for `@modelcontextprotocol/server-x`): npm reads
    # a scope's registry for packages of that scope only
    scoped: tuple[tuple[str, str], ...] = ()

    def text(self, args: Sequence[Any], at: int) -> Any:
        """The package argument at ``at`` as the launcher takes it (`--package=x`: x)."""
        value = args[at]
        if at in self.inline and isinstance(value, str):
            return value.partition("=")[2]
        return value


@dataclass(frozen=True)
class _Table:
    flags: frozenset[str]  # take no value
    values: frozenset[str]  # take the next argument (or `=value`)
    package: frozenset[str]  # their value is a package (npx -p; uvx --from, --spec)
    extra: frozenset[str]  # their value is one more package (uvx --with)
    registry: frozenset[str]  # point the launcher at another registry or index
    refuse: dict[str, str]  # what the line then runs cannot be read

    def known(self, name: str) -> bool:
        return name in self.flags | self.values | self.package | self.extra | self.registry


def _f(text: str) -> frozenset[str]:
    return frozenset(text.split())


_NODE = _Table(
    flags=_f(
        "-y --yes --no-yes --no -q --quiet --silent -s --verbose -d -dd -ddd --ignore-scripts "
        "--prefer-offline --prefer-online --offline --legacy-peer-deps --no-audit --no-fund "
        "--no-update-notifier --no-progress --workspaces -ws --include-workspace-root --bun "
        "--no-install"
    ),
    values=_f("--loglevel -w --workspace"),
    package=_f("-p --package"),
    extra=frozenset(),
    registry=_f("--registry --userconfig --globalconfig --cache --prefix"),
    refuse={
        "-c": "`-c` runs a shell command",
        "--call": "`--call` runs a shell command",
        "--shell-mode": "`--shell-mode` runs a shell command",
        "--script-shell": "`--script-shell` chooses the shell that runs it",
    },
)
_UV = _Table(
    flags=_f(
        "--isolated -n --no-cache -q -qq --quiet -v -vv --verbose --offline --refresh "
        "--reinstall -U --upgrade --no-sources --native-tls --no-progress --no-config "
        "--no-index --no-build --no-binary --managed-python --no-managed-python "
        "--no-python-downloads --show-resolution --preview --no-build-isolation "
        "--compile-bytecode"
    ),
    values=_f(
        "-p --python --python-preference --index-strategy --keyring-provider --resolution "
        "--prerelease --exclude-newer -C --config-setting --no-binary-package "
        "--no-build-package --link-mode -P --upgrade-package --reinstall-package "
        "--refresh-package --color --directory --env-file"
    ),
    package=_f("--from"),
    extra=_f("--with --with-editable"),
    registry=_f(
        "--index --default-index --index-url -i --extra-index-url --find-links -f "
        "--config-file --allow-insecure-host --trusted-host --cache-dir"
    ),
    refuse={
        "--with-requirements": "`--with-requirements` installs what a file lists",
        "--constraints": "`--constraints` reads a file that can name other sources",
        "--overrides": "`--overrides` reads a file that can replace the package",
        "--project": "`--project` reads another project's configuration",
    },
)
_PIPX = _Table(
    flags=_f("--no-cache --path --pypi --system-site-packages -v --verbose -q --quiet"),
    values=_f("--python --backend"),
    package=_f("--spec"),
    extra=frozenset(),
    registry=_f("--index-url -i"),
    refuse={"--pip-args": "`--pip-args` passes pip options agentguard does not read"},
)
_DOCKER = _Table(
    flags=_f(
        "-d --detach -i --interactive -t --tty --rm --init --privileged --read-only -P "
        "--publish-all --no-healthcheck --oom-kill-disable -q --quiet "
        "--disable-content-trust --sig-proxy"
    ),
    values=_f(
        "--add-host --annotation -a --attach --blkio-weight --blkio-weight-device --cap-add "
        "--cap-drop --cgroup-parent --cgroupns --cidfile --cpu-period --cpu-quota "
        "--cpu-rt-period --cpu-rt-runtime -c --cpu-shares --cpus --cpuset-cpus --cpuset-mems "
        "--detach-keys --device --device-cgroup-rule --device-read-bps --device-read-iops "
        "--device-write-bps --device-write-iops --dns --dns-option --dns-search --domainname "
        "--entrypoint -e --env --env-file --expose --gpus --group-add --health-cmd "
        "--health-interval --health-retries --health-start-interval --health-start-period "
        "--health-timeout -h --hostname --ip --ip6 --ipc --isolation --kernel-memory -l "
        "--label --label-file --link --link-local-ip --log-driver --log-opt --mac-address -m "
        "--memory --memory-reservation --memory-swap --memory-swappiness --mount --name "
        "--network --net --network-alias --oom-score-adj --pid --pids-limit --platform -p "
        "--publish --pull --restart --runtime --security-opt --shm-size --stop-signal "
        "--stop-timeout --storage-opt --sysctl --tmpfs --ulimit -u --user --userns --uts -v "
        "--volume --volume-driver --volumes-from -w --workdir"
    ),
    package=frozenset(),
    extra=frozenset(),
    registry=frozenset(),
    refuse={},
)
_TABLES = {NPM: _NODE, PYPI: _UV, "pipx": _PIPX, IMAGE: _DOCKER}
_NODE_LAUNCHERS = {"npx", "bunx", "pnpx"}
_NODE_SUBCOMMANDS = {("pnpm", "dlx"), ("yarn", "dlx"), ("npm", "exec"), ("bun", "x")}
_CONTAINER = {"docker", "podman", "nerdctl"}
# A server's own environment that points its launcher at another registry or index.
# npm reads every `npm_config_*` variable, its name in any case and `_` read as `-`.
_NPM_ENV = re.compile(r"^npm_config_(.+)$", re.IGNORECASE | re.DOTALL)
# npm's settings (a file's keys, a variable's) that choose where npx takes a package's bytes
# from or how it checks them: a registry or a configuration file; the npx cache and the
# global prefix (npx runs a package it finds installed there without asking the registry);
# offline use of that cache; the proxy and the TLS trust on the way.
NPM_SOURCE_KEYS = _f(
    "registry userconfig globalconfig cache prefix offline prefer-offline proxy "
    "https-proxy strict-ssl ca cafile"
)
_NPM_SCOPE_KEY = re.compile(r"^@[^:]*:registry$", re.DOTALL)


def npm_source_key(key: str) -> bool:
    """A key of npm's configuration (as npm reads it: unquoted, no `[]`) that is one of
    :data:`NPM_SOURCE_KEYS`, a scope's registry, or one npm expands from the environment
    (`${VAR}`: what it becomes is unknown)."""
    return key in NPM_SOURCE_KEYS or bool(_NPM_SCOPE_KEY.match(key)) or "${" in key


def _npm_env_key(name: str) -> str | None:
    m = _NPM_ENV.match(name)
    if m is None:
        return None
    key = m.group(1)
    return (key[:1] + key[1:].replace("_", "-")).lower()


_PY_ENV = re.compile(
    r"^(?:UV_(?:INDEX\w*|DEFAULT_INDEX|EXTRA_INDEX_URL|FIND_LINKS|CONFIG_FILE|"
    r"INSECURE_HOST)|PIP_(?:INDEX_URL|EXTRA_INDEX_URL|FIND_LINKS|CONFIG_FILE|TRUSTED_HOST)|"
    r"PIPX_DEFAULT_PYTHON_INDEX)$",
    re.IGNORECASE,
)
_SHORT_CLUSTER = re.compile(r"^-[A-Za-z]{2,}$")


def registry_said(registry: str) -> str:
    """A :attr:`LaunchLine.registry` as a message says it."""
    return registry if " sets " in registry else f"`{registry}`"


def _base(command: str) -> str:
    return command.rsplit("/", 1)[-1].lower()


def launcher_of(command: Any, args: Sequence[Any]) -> tuple[str, str, int] | None:
    """(kind, launcher as named, where its options start), or None: not a launcher that
    takes a package or an image from a registry."""
    if not isinstance(command, str):
        return None
    base = _base(command)
    first = args[0] if args and isinstance(args[0], str) else None
    if (base, first) in _NODE_SUBCOMMANDS:
        return NPM, f"{base} {first}", 1
    if base in _NODE_LAUNCHERS:
        return NPM, base, 0
    if base == "uv" and tuple(args[:2]) == ("tool", "run"):
        return PYPI, "uv tool run", 2
    if base == "pipx" and first == "run":
        return PYPI, "pipx run", 1
    if base == "uvx":
        return PYPI, "uvx", 0
    if base in _CONTAINER and first == "run":
        return IMAGE, f"{base} run", 1
    return None


def _env_registries(kind: str, env: Sequence[tuple[str, str]]) -> list[str]:
    if kind == NPM:
        return [n for n, _ in env if (k := _npm_env_key(n)) is not None and npm_source_key(k)]
    if kind == PYPI:
        return [name for name, _ in env if _PY_ENV.match(name)]
    return []


# `@scope:registry` as an option (`--@google:registry`), a variable
# (`npm_config_@google:registry`) or what a project file sets (".npmrc:3 sets
# `@google:registry`"): the scope it is for
_SCOPED = re.compile(r"(@[^\s`:/=@]+):registry\b", re.IGNORECASE)


def npm_scope(setting: str) -> str | None:
    """The scope an npm registry setting is for (lower case), None: every package."""
    m = _SCOPED.search(setting)
    return m.group(1).lower() if m else None


_INSTALLED = re.compile(r" sets `([^`]+)` \(npx runs the project's own install\)\Z")


def installs_setting(where: str, name: str) -> str:
    """The setting of a package the project installs itself (npx runs that copy): it
    applies to a launch of that package only."""
    return f"{where} sets `{name}` (npx runs the project's own install)"


def package_name(value: Any) -> str | None:
    """The name of an npm package argument (``@a/b@1`` -> ``@a/b``), lower case; None when
    it cannot be read."""
    if not isinstance(value, str):
        return None
    at = value.find("@", 1)
    return (value if at < 0 else value[:at]).lower()


def _package_scope(value: Any) -> str | None:
    """The scope of an npm package argument (``@a/b@1`` -> ``@a``), "" when it has none,
    None when it cannot be read (not written out)."""
    if not isinstance(value, str):
        return None
    if not value.startswith("@"):
        return ""
    return value.split("/", 1)[0].lower() if "/" in value else None


def _applying(
    kind: str, settings: Sequence[str], names: Sequence[Any]
) -> tuple[str | None, tuple[tuple[str, str], ...]]:
    """The first setting that applies to the packages ``names`` (None: none), and the
    scoped npm settings that apply to none of them. A scope's registry applies to a
    package of that scope, or to one whose name cannot be read (conservative)."""
    scopes = [_package_scope(n) for n in names]
    packages = [package_name(n) for n in names]
    first: str | None = None
    scoped: list[tuple[str, str]] = []
    for setting in settings:
        installed = _INSTALLED.search(setting) if kind == NPM else None
        if installed is not None:
            if None in packages or installed.group(1).lower() in packages:
                first = first or setting
            continue  # (the project's install of another package: not this launch's)
        scope = npm_scope(setting) if kind == NPM else None
        if scope is None or None in scopes or scope in scopes:
            first = first or setting
        else:
            scoped.append((scope, setting))
    return first, tuple(scoped)


def _attached(a: str, table: _Table) -> bool:
    """``-p8080:80``: a short option of ``docker run`` with its value written on."""
    return table is _DOCKER and len(a) > 2 and a[:2] in table.values and "=" not in a[:3]


def _cluster_known(a: str, table: _Table) -> bool:
    """``-it``: short options without values written together."""
    return bool(_SHORT_CLUSTER.match(a)) and all(f"-{c}" in table.flags for c in a[1:])


def parse_launch(
    command: Any,
    args: Sequence[Any],
    env: Sequence[tuple[str, str]] = (),
    project: Sequence[tuple[str, str]] = (),
) -> LaunchLine | None:
    """The launch line of ``command args`` (None: not a registry launcher). ``env``: the
    server's own environment; ``project``: what the project's files set for a launcher's
    registry, (kind, where)."""
    found = launcher_of(command, args)
    if found is None:
        return None
    kind, launcher, start = found
    table = _TABLES["pipx" if launcher == "pipx run" else kind]
    settings = [*_env_registries(kind, env), *(w for k, w in project if k == kind)]
    packages: list[int] = []
    more: list[int] = []
    inline: list[int] = []
    i = start
    while i < len(args):
        a = args[i]
        if not isinstance(a, str):  # unknown: an option or the operand, cannot tell
            return LaunchLine(kind, launcher, i, registry=next(iter(settings), None))
        if a == "--":
            i += 1
            break
        if not a.startswith("-") or a == "-":
            break
        name, eq, _ = a.partition("=")
        if name in table.refuse:
            return LaunchLine(kind, launcher, None, problem=table.refuse[name])
        if name.startswith("--@") and name.endswith(":registry") and kind == NPM:
            settings.append(name)
        elif not (table.known(name) or _cluster_known(a, table) or _attached(a, table)):
            what = f"the {launcher} option `{name}`"
            return LaunchLine(kind, launcher, None, problem=f"{what} is not one agentguard reads")
        if name in table.registry:
            settings.append(name)
        takes = name not in table.flags and not (not eq and _cluster_known(a, table))
        if takes and not eq and not _attached(a, table):
            i += 1
            if i >= len(args):
                return LaunchLine(kind, launcher, None, problem=f"`{name}` has no value")
        if name in table.package or name in table.extra:
            (packages if name in table.package else more).append(i)
            if eq:
                inline.append(i)
        i += 1
    operand = i if i < len(args) else None
    if kind == PYPI and len(packages) > 1:
        flag = "--spec" if launcher == "pipx run" else "--from"
        return LaunchLine(kind, launcher, None, problem=f"`{flag}` is given twice")
    line = LaunchLine(kind, launcher, operand, False, tuple(more), inline=tuple(inline))
    if packages:
        line = LaunchLine(
            kind, launcher, packages[0], True, (*packages[1:], *more), inline=tuple(inline)
        )
    named = [line.text(args, at) for at in (line.spec_at, *line.more) if at is not None]
    registry, scoped = _applying(kind, settings, named or [None])
    return replace(line, registry=registry, scoped=scoped)

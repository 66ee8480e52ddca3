"""MCP server launches and their pins: what a launch fetches at start (:class:`ServerLaunch`,
read from an :class:`~agentguard.facts.agents.McpServer` by :func:`launch_of`), and what the
MCP server lock (``mcp.lock.json``) holds for it (:class:`ServerPin`).

Frozen records and pure functions over them: the lock flow fills them, the AG14x rules and
AG310 read them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from agentguard.facts.launch_argv import IMAGE as IMAGE
from agentguard.facts.launch_argv import NPM as NPM
from agentguard.facts.launch_argv import PYPI as PYPI
from agentguard.facts.launch_argv import parse_launch, registry_said

if TYPE_CHECKING:  # (annotations only: a launch read from a project builds none of these)
    from agentguard.facts.mcp_tools import ToolSnapshot
    from agentguard.facts.npm_tree import NpmTree
    from agentguard.facts.npm_trust import ProvenanceCheck, RegistrySignature


class McpServer(Protocol):
    """What a launch is read from (:class:`agentguard.facts.agents.McpServer`)."""

    @property
    def name(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def line(self) -> int: ...
    @property
    def declared_in(self) -> str: ...
    @property
    def transport(self) -> str: ...
    @property
    def command(self) -> Any: ...
    @property
    def args(self) -> Any: ...
    @property
    def pulled_digests(self) -> tuple[tuple[str, int], ...]: ...
    @property
    def env(self) -> tuple[tuple[str, str], ...]: ...
    @property
    def registries(self) -> tuple[tuple[str, str], ...]: ...


# Why a launch was not read (:class:`Unreadable`): not a registry name (a path, a URL),
# a line the parser cannot read, another registry, more than one package.
NOT_A_NAME, UNKNOWN_LINE, OTHER_REGISTRY, MORE_PACKAGES = "name", "line", "registry", "packages"

# What a package name may be. A launch naming anything else (a path, a URL, a git spec,
# shell text) is not a registry package: it is not resolved, and never written back.
# (`\Z`, never `$`: `$` also matches before a last newline, and a name or a version with
# one would be written into a launch as it is)
NPM_NAME = re.compile(r"^(?:@[a-z0-9][a-z0-9._~-]*/)?[a-z0-9][a-z0-9._~-]*\Z")
PYPI_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?\Z")
_PY_EXTRAS = re.compile(r"^\[[A-Za-z0-9._,\s-]*\]")
IMAGE_REF = re.compile(
    r"^(?P<repo>[a-z0-9]+(?:[._/-][a-z0-9]+)*(?::[0-9]+)?(?:/[a-z0-9]+(?:[._-][a-z0-9]+)*)*)"
    r"(?::(?P<tag>[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}))?(?:@(?P<digest>sha256:[0-9a-f]{64}))?\Z"
)


# The files whose launches `agentguard lock --write-launch` rewrites in place (each edit
# checked by re-reading the file); a launch elsewhere is named in its notes.
REWRITABLE_SUFFIXES = (
    ".json", ".jsonc", ".toml", ".yml", ".yaml", ".py",
    ".ts", ".mts", ".cts", ".tsx", ".js", ".mjs", ".cjs", ".jsx",
)  # fmt: skip


@dataclass(frozen=True)
class ServerLaunch:
    """One MCP server launch that takes a package or an image from a registry at start.

    ``requested``: what the launch asks for beside the name (npm: the version, range or
    tag after ``@``; PyPI: the specifier, ``==1.2``; an image: its tag), None when
    nothing; ``operand``: the index in the server's ``args`` of the argument that names it
    (the one a rewrite replaces); ``from_flag``: the argument is the value of ``--from``
    or ``--spec`` (PyPI)."""

    kind: str  # NPM | PYPI | IMAGE
    package: str  # npm name, PyPI name (extras kept apart), image repository
    requested: str | None
    spec: str  # the argument as written
    server: str
    path: str
    line: int
    declared_in: str
    launcher: str  # "npx", "uvx", "pipx run", "docker run", ...
    operand: int
    from_flag: bool = False
    extras: str = ""  # PyPI: "[cli]" as written
    digest: str | None = None  # image: "sha256:..." when the reference carries one
    # image: references of it by digest the same file holds (McpServer.pulled_digests)
    pulled: tuple[tuple[str, int], ...] = ()
    # npm: (scope, where) of each scope the project or the launch points at another
    # registry (`@google:registry=` in .npmrc) that is not the package's own: npx fetches
    # the package from the default registry, and any dependency in that scope from there
    scoped: tuple[tuple[str, str], ...] = ()

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def key(self) -> tuple[str, str, str, str]:
        """What ties a launch to its lock entry: the file, the server's name, the kind and
        the package (not the line: an edit above it moves the line)."""
        return (self.path, self.server, self.kind, self.package)


@dataclass(frozen=True)
class Unreadable:
    """A launch through a package launcher whose package is not a registry package name
    (a path, a URL, a variable, shell text): not resolved, said so."""

    server: str
    path: str
    line: int
    launcher: str
    why: str
    code: str = NOT_A_NAME  # NOT_A_NAME | UNKNOWN_LINE | OTHER_REGISTRY | MORE_PACKAGES

    @property
    def unverified(self) -> bool:
        """The line names a registry package, but not one the lock can check: the lock
        and AG310 report it, never pin it."""
        return self.code != NOT_A_NAME


@dataclass(frozen=True)
class LockedDependency:
    """One package of a PyPI server's own environment (the tool's venv), hash-pinned."""

    name: str
    version: str
    marker: str | None
    hashes: tuple[str, ...]


@dataclass(frozen=True)
class ServerPin:
    """What ``mcp.lock.json`` holds for one launch.

    ``version``: the exact npm or PyPI version; for an image, its digest. ``majors``: the
    released majors the launch's request admits (before 1.0 each minor counts as one), as
    the registry listed them when locked; ``released_majors``: every released major."""

    kind: str
    package: str
    version: str
    server: str
    path: str
    line: int
    requested: str | None = None
    integrity: str | None = None  # npm: dist.integrity, checked against the tarball
    tarball: str | None = None  # npm: where the registry said the tarball is
    registry: str | None = None  # the registry or index it came from (no login)
    hashes: tuple[str, ...] = ()  # PyPI: the server package's own files
    environment: tuple[LockedDependency, ...] = ()  # PyPI: the tool's whole environment
    majors: tuple[str, ...] = ()
    released_majors: tuple[str, ...] = ()
    provenance: bool | None = None  # npm: True, the registry lists an attestation; None: unknown
    tools: ToolSnapshot | None = None  # tools/list, as `lock --smoke` recorded it
    entry_line: int | None = field(default=None, compare=False)  # its line in mcp.lock.json (read)
    signature: RegistrySignature | None = None  # npm: dist.signatures, verified (None: not read)
    attestation: ProvenanceCheck | None = None  # npm: the attestations, verified (None: not read)
    # npm, at lock time: does the registry list attestations today for the version locked
    # before (None: no earlier version, or not in the packument): tells a provenance
    # downgrade from a registry (a mirror) that serves none at all
    earlier_listed: bool | None = field(default=None, compare=False)
    # npm, at lock time: the attestations document as served (kept beside the lock)
    bundles_json: str | None = field(default=None, compare=False, repr=False)
    # npm: the server's own dependency tree, as npm resolved it (None: not recorded)
    tree: NpmTree | None = field(default=None, repr=False)

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.path, self.server, self.kind, self.package)

    def pinned_spec(self, extras: str = "") -> str:
        """The launch argument that pins this version."""
        if self.kind == NPM:
            return f"{self.package}@{self.version}"
        if self.kind == PYPI:
            return f"{self.package}{extras}=={self.version}"
        return f"{self.package}@{self.version}"

    def pinned_command(self, launcher: str = "", extras: str = "") -> str:
        """The whole launch, pinned, as a command line a user can paste."""
        if self.kind == NPM:
            runner = launcher if launcher in ("bunx", "pnpm dlx", "pnpx") else "npx -y"
            return f"{runner} {self.pinned_spec()}"
        if self.kind == PYPI:
            flag = "--spec" if launcher == "pipx run" else "--from"
            runner = "pipx run" if launcher == "pipx run" else "uvx"
            return f"{runner} {flag} '{self.pinned_spec(extras)}' {self.package}"
        return f"docker run {self.pinned_spec()}"


@dataclass(frozen=True)
class ServerLock:
    """``mcp.lock.json`` as read: its pins, and where it is."""

    path: str
    pins: tuple[ServerPin, ...]
    digest: str


def registry_launches(
    servers: Iterable[McpServer],
) -> tuple[list[ServerLaunch], list[Unreadable]]:
    """The launches of ``servers`` that take a package or an image from a registry, each
    once, and those whose package could not be read as a name."""
    seen: set[tuple[str, str, str, str, int]] = set()
    out: list[ServerLaunch] = []
    unread: list[Unreadable] = []
    for server in servers:
        got = launch_of(server)
        if isinstance(got, Unreadable):
            unread.append(got)
        elif got is not None and (*got.key, got.line) not in seen:
            seen.add((*got.key, got.line))
            out.append(got)
    return out, unread


def pin_for(launch: ServerLaunch, pins: Sequence[ServerPin]) -> ServerPin | None:
    """The locked pin of a launch: the one entry of its key, or the one on its line (two
    candidates are never resolved by taking the first: then None)."""
    same = [p for p in pins if p.key == launch.key]
    if len(same) > 1:
        same = [p for p in same if p.line == launch.line]
    return same[0] if len(same) == 1 else None


def major_of(version: str) -> str | None:
    """The major of an npm or PyPI version (before 1.0 each minor counts as one, as the
    lock's gates count them); None when the version is not ``N.N...``."""
    m = re.match(r"^(\d+)(?:\.(\d+))?", version)
    if m is None:
        return None
    return m.group(1).lstrip("0") or f"0.{int(m.group(2) or 0)}"


_Got = ServerLaunch | Unreadable


def launch_of(server: McpServer) -> ServerLaunch | Unreadable | None:
    """The package or image a stdio server's launch takes from a registry (None: the
    launch runs something already there, a local file or an unknown launcher). The line is
    read by :func:`~agentguard.facts.launch_argv.parse_launch`, as the launcher reads it."""
    command, args = server.command, server.args
    if server.transport != "stdio" or not isinstance(command, str) or not isinstance(args, tuple):
        return None
    line = parse_launch(command, args, server.env, server.registries)
    if line is None:
        return None
    if line.problem is not None:
        return _unreadable(server, line.launcher, line.problem, UNKNOWN_LINE)
    if line.registry is not None:
        why = f"{registry_said(line.registry)} makes it fetch from a registry, index or package cache the project chooses"
        return _unreadable(server, line.launcher, why, OTHER_REGISTRY)
    if line.more:
        why = "it installs more than one package; the lock records one package per launch"
        return _unreadable(server, line.launcher, why, MORE_PACKAGES)
    if line.spec_at in line.inline:
        why = "`--flag=SPEC` is not rewritten; write the flag and the package apart"
        return _unreadable(server, line.launcher, why)
    if line.spec_at is None:
        what = "no image" if line.kind == IMAGE else "no package"
        return _unreadable(server, line.launcher, f"the launch names {what}")
    if line.kind == NPM:
        got = _npm_spec(server, args, line.spec_at, line.launcher)
        return replace(got, scoped=line.scoped) if isinstance(got, ServerLaunch) else got
    if line.kind == PYPI:
        return _pypi(server, args, line.spec_at, line.launcher, line.from_flag)
    return _image(server, args, line.spec_at, line.launcher)


def _unreadable(server: McpServer, launcher: str, why: str, code: str = NOT_A_NAME) -> Unreadable:
    return Unreadable(server.name, server.path, server.line, launcher, why, code)


def _npm_spec(server: McpServer, args: tuple[Any, ...], at: int, launcher: str) -> _Got:
    spec = args[at]
    if not isinstance(spec, str):
        return _unreadable(server, launcher, "the package is not written out")
    cut = spec.find("@", 1)
    name, requested = (spec[:cut], spec[cut + 1 :]) if cut > 0 else (spec, None)
    if not NPM_NAME.match(name) or len(name) > 214:
        return _unreadable(server, launcher, "not an npm package name")
    if requested is not None and not re.fullmatch(r"[A-Za-z0-9 .^~<>=|*xX+-]{1,128}", requested):
        return _unreadable(server, launcher, "not a version, range or tag npm reads")
    return ServerLaunch(
        NPM, name, requested, spec, server.name, server.path, server.line,
        server.declared_in, launcher, at,
    )  # fmt: skip


def _pypi(
    server: McpServer, args: tuple[Any, ...], at: int, launcher: str, from_flag: bool
) -> _Got:
    spec = args[at]
    if not isinstance(spec, str):
        return _unreadable(server, launcher, "the package is not written out")
    m = re.match(r"^([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    if m is None or not PYPI_NAME.match(m.group(1)):
        return _unreadable(server, launcher, "not a Python package name")
    name, rest = m.group(1), spec[m.end() :]
    extras_m = _PY_EXTRAS.match(rest)
    extras = extras_m.group(0) if extras_m else ""
    rest = rest[len(extras) :].strip()
    if rest.startswith("@") and not rest.startswith("@ "):  # uvx pkg@1.2 / pkg@latest
        rest = "" if rest == "@latest" else f"=={rest[1:]}"
    if rest and not re.fullmatch(r"(?:[<>=!~]=?=?\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)+", rest):
        return _unreadable(server, launcher, "not a version specifier (a URL or a path?)")
    return ServerLaunch(
        PYPI, name, rest or None, spec, server.name, server.path, server.line,
        server.declared_in, launcher, at, from_flag, extras,
    )  # fmt: skip


def _image(server: McpServer, args: tuple[Any, ...], at: int, launcher: str) -> _Got:
    if not isinstance(args[at], str):
        return _unreadable(server, launcher, "the image is not written out")
    m = IMAGE_REF.match(args[at])
    if m is None:
        return _unreadable(server, launcher, "not an image reference")
    return ServerLaunch(
        IMAGE, m.group("repo"), m.group("tag"), args[at], server.name, server.path,
        server.line, server.declared_in, launcher, at, digest=m.group("digest"),
        pulled=server.pulled_digests,
    )  # fmt: skip

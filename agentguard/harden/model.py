"""The hardened configuration as data: what `agentguard harden` decided, before any writer
renders it (docker run arguments, compose file, Kubernetes fragment) or the verifier runs it.

Frozen records only. Environment values are never kept for a variable that looks like a
secret: such a variable is passed through by name (``value=None``) and its value is never
rendered anywhere.
"""

from __future__ import annotations

import os
import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentguard.findings import Finding

DEFAULT_USER = "10001:10001"
DEFAULT_WORKDIR = "/work"
DEFAULT_MEMORY = "1g"
DEFAULT_PIDS = 256
DEFAULT_OUT = Path("agentguard-hardened")
DEFAULT_SETTLE = 5.0
CODE_DIR = "/opt/agent"  # where the agent's code goes when its old place is the workdir
TMPFS_SIZE = "64m"
SCRATCH_DIRS = ("/tmp",)  # writable scratch besides the working directory
HOME_DIR = "/tmp"  # HOME points at scratch: tools that write ~/.cache keep working

_USER = re.compile(r"(\d+)(?::(\d+))?\Z", re.ASCII)
MAX_ID = 2**31 - 1  # the largest id every engine and Kubernetes' runAsUser accept
_MEMORY = re.compile(r"^\d+(?:\.\d+)?[bkmgBKMG]?$")
_NETWORK = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9_.-]*$")


class OptionError(ValueError):
    """A harden option that cannot be used (exit 2)."""


@dataclass(frozen=True)
class AllowedMount:
    """Data the agent truly needs, mounted read-only outside its working directory."""

    host: str
    container: str


@dataclass(frozen=True)
class HardenOptions:
    target: str
    kind: str | None = None  # as for inspect --kind
    out: Path = DEFAULT_OUT
    network: str = "none"
    allow_mounts: tuple[AllowedMount, ...] = ()
    user: str = DEFAULT_USER
    workdir: str = DEFAULT_WORKDIR
    memory: str = DEFAULT_MEMORY
    pids: int = DEFAULT_PIDS
    verify: bool = False
    platform: str | None = None
    config_file: Path | None = None  # --config: read only this file
    project_config: bool = True  # False: --no-project-config
    inline_ignores: bool = True  # False: --no-inline-ignores
    code_mount: bool = False  # carry the agent's code as read-only bind mounts, not an image
    force: bool = False  # overwrite files changed since harden wrote them
    verify_command: str | None = None  # run in the started agent; exit 0 means it works
    settle: float = DEFAULT_SETTLE  # seconds the agent must keep running to count as started
    # --env-file: the variables passed by name come from this file (never read by harden)
    env_file: str | None = None

    @property
    def uid(self) -> int:
        return int(self.user.split(":", 1)[0])

    @property
    def gid(self) -> int:
        parts = self.user.split(":", 1)
        return int(parts[1]) if len(parts) > 1 else int(parts[0])


def parse_allow_mount(text: str) -> AllowedMount:
    host, sep, container = text.rpartition(":")
    if not sep or not host or not container:
        raise OptionError(f"--allow-mount {text!r}: expected HOST:CONTAINER")
    if not container.startswith("/"):
        raise OptionError(f"--allow-mount {text!r}: the container path must be absolute")
    # the engine needs an absolute host path, and the files are read from another folder
    return AllowedMount(os.path.abspath(os.path.expanduser(host)), posixpath.normpath(container))


def validate_options(opts: HardenOptions) -> HardenOptions:
    """The options as used, or OptionError naming the flag."""
    m = _USER.match(opts.user)
    if m is None:
        raise OptionError(
            f"--user {opts.user!r}: give a numeric UID[:GID] (a name cannot be checked for "
            "root, and Kubernetes' runAsUser needs a number)"
        )
    if len(opts.user) > 21 or any(int(g) > MAX_ID for g in m.groups() if g is not None):
        raise OptionError(f"--user {opts.user!r}: uid and gid are at most {MAX_ID}")
    if int(m.group(1)) == 0 or (m.group(2) is not None and int(m.group(2)) == 0):
        raise OptionError(f"--user {opts.user!r}: uid and gid 0 are root; pick another")
    user = opts.user if m.group(2) is not None else f"{m.group(1)}:{m.group(1)}"
    if not opts.workdir.startswith("/") or posixpath.normpath(opts.workdir) == "/":
        raise OptionError(f"--workdir {opts.workdir!r}: give an absolute path other than /")
    workdir = posixpath.normpath(opts.workdir)
    if not _MEMORY.match(opts.memory):
        raise OptionError(f"--memory {opts.memory!r}: expected a size such as 512m or 1g")
    if not 0 < opts.settle <= 600:
        raise OptionError(f"--settle {opts.settle}: expected seconds between 0 and 600")
    env_file = opts.env_file
    if env_file is not None:
        if not env_file.strip() or any(c in env_file for c in "\n\r\0"):
            raise OptionError(f"--env-file {env_file!r}: give the path of a file")
        # absolute: docker resolves it from the caller's folder, compose from its own
        env_file = os.path.abspath(os.path.expanduser(env_file))
    if opts.pids < 1:
        raise OptionError(f"--pids {opts.pids}: expected a positive number")
    if opts.network == "host" or not _NETWORK.match(opts.network):
        raise OptionError(
            f"--network {opts.network!r}: expected `none` or the name of a network "
            "(not `host`: it shares the host's network namespace)"
        )
    for m2 in opts.allow_mounts:
        rel = _relation(m2.container, workdir)
        if rel is not None:
            raise OptionError(
                f"--allow-mount {m2.host}:{m2.container}: {m2.container} is {rel} the working "
                f"directory {workdir}; mount it elsewhere so the working directory stays empty"
            )
    return HardenOptions(
        target=opts.target,
        kind=opts.kind,
        out=opts.out,
        network=opts.network,
        allow_mounts=opts.allow_mounts,
        user=user,
        workdir=workdir,
        memory=opts.memory,
        pids=opts.pids,
        verify=opts.verify,
        platform=opts.platform,
        config_file=opts.config_file,
        project_config=opts.project_config,
        inline_ignores=opts.inline_ignores,
        code_mount=opts.code_mount,
        force=opts.force,
        verify_command=opts.verify_command,
        settle=opts.settle,
        env_file=env_file,
    )


def _relation(path: str, workdir: str) -> str | None:
    p = posixpath.normpath(path)
    if p == workdir:
        return "at"
    if p.startswith(workdir + "/"):
        return "inside"
    if p == "/" or workdir.startswith(p + "/"):
        return "above"
    return None


@dataclass(frozen=True)
class EnvVar:
    name: str
    value: str | None = field(default=None, repr=False)  # None: passed through by name


@dataclass(frozen=True)
class Tmpfs:
    path: str
    size: str = TMPFS_SIZE
    mode: str = "1777"
    owner: tuple[int, int] | None = None  # (uid, gid) for the working directory

    def options(self) -> str:
        """The option string docker and compose accept after ``PATH:``."""
        opts = ["rw", "nosuid", "nodev", f"size={self.size}", f"mode={self.mode}"]
        if self.owner is not None:
            opts += [f"uid={self.owner[0]}", f"gid={self.owner[1]}"]
        return ",".join(opts)


@dataclass(frozen=True)
class NamedVolume:
    """A named volume kept from the original (not a host folder; outside the workdir)."""

    name: str
    target: str
    read_only: bool


@dataclass(frozen=True)
class DepsInstall:
    """How the hardened Dockerfile installs the agent's dependencies (from the lock)."""

    lock: str | None  # the lock installed from; None: none (the original's dependencies)
    lines: tuple[str, ...] = ()  # Dockerfile lines that install it (empty: nothing added)
    command: str = ""  # the install command among them (for the notes)
    # line ranges (first, last) of the original Dockerfile these lines take the place of;
    # empty: they go before the code is copied (after FROM for an image built on the original)
    replaces: tuple[tuple[int, int], ...] = ()
    dockerfile: str | None = None  # the original Dockerfile's path (absolute), when it has lines
    # project files the RUN steps kept after the narrowed `COPY .` read, relative to the
    # folder the COPY filled (copied there, and nothing else besides the code)
    build_inputs: tuple[str, ...] = ()
    narrowable: bool = True  # every RUN after `COPY .` provably reads only build_inputs
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class CodeSpec:
    """The agent's code, which came from the project (a bind mount at the working directory,
    `COPY . DIR` with the working directory there): only these entries travel, read-only,
    to ``target`` outside the working directory."""

    host_dir: str  # the project folder the code is read from (absolute)
    source_dir: str  # where the original container saw it
    target: str  # where the hardened container sees it
    entries: tuple[str, ...]  # paths relative to host_dir: the code and its installed deps
    how: str  # how the original got it ("bind mount .:/app")
    base_image: str | None  # the image the code is added to; None: built by the original
    # the original Dockerfile's text and the lines (first, last) of its `COPY . DIR`: the
    # hardened Dockerfile is that file with the COPY narrowed to the entries
    dockerfile: tuple[str, int, int] | None = None
    deps: DepsInstall | None = None  # the lock install (None: not looked at)


@dataclass(frozen=True)
class ServiceSpec:
    """One container to run hardened: a compose service, the image, the container."""

    name: str
    image: str | None  # None: built (``build``) or unknown (``image_placeholder``)
    build: Mapping[str, Any] | None = None  # compose ``build`` with paths from the out folder
    entrypoint: Any = None  # as written (compose) or an argv tuple; None: the image's
    command: Any = None
    env: tuple[EnvVar, ...] = ()
    volumes: tuple[NamedVolume, ...] = ()
    passthrough: Mapping[str, Any] = field(default_factory=dict)  # depends_on, labels ...
    origin: str = ""  # where it came from, for the summary ("compose.yaml:3", "image agent:1")
    compose_form: bool = False  # entrypoint/command as compose writes them (`$$` is a literal $)
    notes: tuple[str, ...] = ()
    code: CodeSpec | None = None  # the agent's code, carried out of the project


@dataclass(frozen=True)
class HardenedSpec:
    """The hardening every service gets (the options, decided)."""

    services: tuple[ServiceSpec, ...]
    user: str
    workdir: str
    network: str
    memory: str
    pids: int
    allow_mounts: tuple[AllowedMount, ...]
    tmpfs: tuple[Tmpfs, ...]
    env_file: str | None = None  # the by-name variables come from this file instead

    @property
    def uid(self) -> int:
        return int(self.user.split(":", 1)[0])

    @property
    def gid(self) -> int:
        return int(self.user.split(":", 1)[1])


def hardened_spec(opts: HardenOptions, services: tuple[ServiceSpec, ...]) -> HardenedSpec:
    uid, gid = opts.uid, opts.gid
    tmpfs = (
        Tmpfs(opts.workdir, mode="0700", owner=(uid, gid)),
        *(Tmpfs(d) for d in SCRATCH_DIRS if d != opts.workdir),
    )
    return HardenedSpec(
        services=services,
        user=opts.user,
        workdir=opts.workdir,
        network=opts.network,
        memory=opts.memory,
        pids=opts.pids,
        allow_mounts=opts.allow_mounts,
        tmpfs=tmpfs,
        env_file=opts.env_file,
    )


@dataclass(frozen=True)
class Claim:
    """A finding the hardened configuration fixes, and which written files fix it."""

    finding: Finding
    files: tuple[str, ...]
    how: str


@dataclass(frozen=True)
class Open:
    """A finding the hardened configuration does not fix, why, and what to do."""

    finding: Finding
    why: str
    todo: str
    choices: tuple[str, ...] = ()

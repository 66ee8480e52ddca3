"""What `agentguard harden --verify` saw: frozen records.

The probe (:mod:`agentguard.harden.probe_facts`) runs inside the hardened container and
prints ``AGP <key> <value>`` lines; outside, the engine's record of the same container is
read. ``None`` anywhere means "not observed" -- never "fine".
"""

from __future__ import annotations

from dataclasses import dataclass

from agentguard.facts.image import MountFact


@dataclass(frozen=True)
class MountInfo:
    """One line of /proc/self/mountinfo."""

    mountpoint: str
    root: str  # the path inside the mounted filesystem (a bind's host path, often)
    fstype: str
    options: tuple[str, ...]  # per-mount options (ro/rw first)

    @property
    def read_only(self) -> bool:
        return "ro" in self.options


@dataclass(frozen=True)
class Inside:
    """What the probe printed; a field is None when its line was missing."""

    uids: tuple[int, ...] | None
    gids: tuple[int, ...] | None
    cap_eff: str | None
    cap_prm: str | None
    no_new_privs: str | None
    cwd: str | None
    entries: tuple[str, ...] | None
    rootfs: str | None  # "writable" | "denied"
    mounts: tuple[MountInfo, ...] | None
    interfaces: tuple[str, ...] | None
    complete: bool  # the script reached its end
    # (address, "open" | "blocked" | "undecided")
    egress: tuple[tuple[str, str], ...] | None = None


@dataclass(frozen=True)
class Outside:
    """The engine's record of the probed container (``docker inspect``)."""

    user: str | None
    read_only_rootfs: bool | None
    network_mode: str | None
    networks: tuple[str, ...] | None
    mounts: tuple[MountFact, ...]
    cap_add: tuple[str, ...] | None
    cap_drop: tuple[str, ...] | None
    privileged: bool | None
    security_opt: tuple[str, ...] | None
    workdir: str | None


@dataclass(frozen=True)
class Expected:
    """What the hardening requires (from the harden options, not from the script)."""

    workdir: str
    network: str
    tmpfs: tuple[str, ...]
    allowed: tuple[tuple[str, str], ...]  # (host, container), read-only
    volumes: tuple[str, ...]  # named volume targets kept from the original
    helper: str | None  # the probe helper's mount point (ignored)
    egress: tuple[tuple[str, int, str], ...] = ()  # (address, port, what it is) to try


@dataclass(frozen=True)
class Observation:
    container: str
    image: str
    script: str
    inside: Inside | None  # None: the probe could not run inside (reason in why_not_inside)
    outside: Outside | None
    why_not_inside: str | None = None


@dataclass(frozen=True)
class AgentRun:
    """The agent started with its own command in the hardened configuration."""

    script: str
    image: str
    state: str  # "running" | "exited" | "not-built" | "not-created" | "not-started"
    exit_code: int | None = None
    settle: float = 0.0
    lines: tuple[str, ...] = ()  # its first lines of output (values passed in masked)
    tail: tuple[str, ...] = ()  # its last lines: the cause when it stopped
    error: str | None = None  # the engine's or the build's error
    command: str | None = None  # --verify-command, run in the started agent
    command_exit: int | None = None
    command_output: tuple[str, ...] = ()

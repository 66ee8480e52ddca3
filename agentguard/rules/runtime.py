"""AG5xx: the hardened configuration checked at run time (``agentguard harden --verify``).

Pure functions over what the verifier observed inside and outside the running container
(:mod:`agentguard.facts.probe`). Each probe ends as a :class:`Verdict`: held,
violated (with an AG501 finding) or unknown -- a probe that could not look is never
counted as held.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from dataclasses import dataclass

from agentguard.facts.host_paths import is_docker_socket
from agentguard.facts.probe import Expected, Inside, MountInfo, Observation, Outside
from agentguard.findings import Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.base import Rule, register
from agentguard.rules.mounts import workdir_relation


@register
class HardenedConfigDoesNotHold(Rule):
    """The hardened configuration does not hold when the container runs.

    ## What it does
    `agentguard harden --verify` runs the image with the `docker-run.sh` it generated in
    this run (or the one file named with `--verify-script`) on the real engine. Before
    anything runs, the script's run and build lines are compared with the plan (probe
    `plan`): a mount, tmpfs, network, capability, privilege, namespace, security option,
    user, working directory, limit, variable taken from the caller's environment or env
    file the plan did not make is reported and nothing is run. Then it probes the running container from inside (a static helper shell,
    mounted read-only outside the working directory, reads `/proc/self/status`,
    `/proc/self/mountinfo` and `/proc/net/dev`, lists the working directory and tries to
    write to `/`) and from outside (the engine's record of the container). It reports each
    probe that found the hardening broken: the process runs as uid 0, the working
    directory is not empty or not the expected tmpfs, the root filesystem is writable,
    capabilities are effective, `no-new-privileges` is off, a host folder or the Docker
    socket is mounted, the network is not the one chosen, or (with `--network none`) a
    connection from inside reaches an address of the engine's host over IPv4 or IPv6.
    Only when every probe held does it start the agent with its own command in the same configuration (after building
    the hardened image the script builds): an agent that cannot start -- the image does not
    build, a missing file, an import error, a write to the read-only root -- is reported
    with the cause from its last lines; one still running after `--settle` seconds, one
    that exits 0, or one whose `--verify-command` passes has started.

    ## Why is this bad?
    A configuration file is a promise; the running container is the fact. An edited run
    script (the project mounted back in "for convenience"), an engine that ignores an
    option, or an entrypoint that changes user would leave the agent exactly as exposed as
    before, with a file that says otherwise. And a configuration that stops the agent from
    starting is not adopted at all: the old, exposed one stays in use.

    ## Example
    ```sh
    docker run --read-only --tmpfs /work -v "$PWD":/work -w /work ... agent-image
    ```

    ## Use instead
    Run the configuration `agentguard harden` wrote, unchanged; mount data the agent needs
    read-only outside its working directory with `--allow-mount`:
    ```sh
    agentguard harden agent-image --allow-mount ./inputs:/data --verify
    ```
    """

    id = "AG501"
    name = "hardened-config-does-not-hold"
    title = "Hardened configuration does not hold at run time"
    default_severity = Severity.HIGH
    family = "runtime"


@dataclass(frozen=True)
class Verdict:
    probe: str
    status: str  # "held" | "violated" | "unknown"
    detail: str
    finding: Finding | None = None


PROBES = (
    "user",
    "working-directory",
    "root-filesystem",
    "capabilities",
    "no-new-privileges",
    "mounts",
    "docker-socket",
    "network",
)
_STANDARD = frozenset(
    {"/", "/proc", "/dev", "/sys", "/etc/resolv.conf", "/etc/hostname", "/etc/hosts"}
)
_STANDARD_BELOW = ("/proc/", "/dev/", "/sys/")
_FIX = {
    "user": "Run as the unprivileged user the hardened config sets (`--user`); do not add "
    "setuid helpers or an entrypoint that switches user.",
    "working-directory": "Keep the working directory an empty tmpfs: remove any mount at, "
    "above or inside it, and mount the data the agent needs read-only elsewhere "
    "(`--allow-mount`).",
    "root-filesystem": "Run with `--read-only` (`read_only: true`).",
    "capabilities": "Run with `--cap-drop ALL`, no `--cap-add` and no `--privileged`.",
    "no-new-privileges": "Run with `--security-opt no-new-privileges:true`.",
    "mounts": "Remove the mount; mount only what the agent needs, read-only, outside its "
    "working directory (`--allow-mount`).",
    "docker-socket": "Remove the Docker socket mount: whoever reaches it is root on the host.",
    "network": "Run with the network chosen for the agent (`--network`).",
}


def _finding(obs: Observation, probe: str, detail: str, evidence: dict[str, JSONValue]) -> Finding:
    return HardenedConfigDoesNotHold.finding(
        f"The hardened configuration does not hold at run time: probe {probe}: {detail}.",
        locations=[
            Location(path=obs.script, note=f"probe {probe}, container {obs.container[:12]}")
        ],
        fix=Fix(
            _FIX[probe] + f" Regenerate {posixpath.basename(obs.script)} with `agentguard harden`."
        ),
        evidence={"probe": probe, "image": obs.image, "container": obs.container[:12], **evidence},
    )


def _unknown(probe: str, obs: Observation) -> Verdict:
    why = obs.why_not_inside or "the probe printed nothing for it"
    return Verdict(probe, "unknown", f"not verified: {why}")


def _user(obs: Observation, _e: Expected) -> Verdict:
    inside = obs.inside
    if inside is None or inside.uids is None:
        return _unknown("user", obs)
    if 0 in inside.uids[:3] or (inside.gids is not None and 0 in inside.gids[:3]):
        detail = f"the process runs with uids {inside.uids} and gids {inside.gids} (0 is root)"
        return Verdict(
            "user", "violated", detail, _finding(obs, "user", detail, {"uids": list(inside.uids)})
        )
    return Verdict(
        "user", "held", f"uid {inside.uids[1]}, gid {inside.gids[1] if inside.gids else '?'}"
    )


def _mount_at(mounts: tuple[MountInfo, ...], path: str) -> MountInfo | None:
    hits = [m for m in mounts if m.mountpoint == path]
    return hits[-1] if hits else None  # the last one mounted is the one seen


def _workdir(obs: Observation, e: Expected) -> Verdict:
    inside = obs.inside
    if inside is None or inside.entries is None or inside.mounts is None:
        return _unknown("working-directory", obs)
    problems: list[str] = []
    if inside.cwd != e.workdir:
        problems.append(f"the process starts in {inside.cwd}, not {e.workdir}")
    if inside.entries:
        shown = ", ".join(inside.entries[:8]) + (" ..." if len(inside.entries) > 8 else "")
        problems.append(f"{e.workdir} holds {len(inside.entries)} entries ({shown})")
    at = _mount_at(inside.mounts, e.workdir)
    if at is None or at.fstype != "tmpfs":
        what = f"a {at.fstype} mount of {at.root}" if at else "not a mount (the image's own folder)"
        problems.append(f"{e.workdir} is {what}, not an empty tmpfs")
    if problems:
        detail = "; ".join(problems)
        return Verdict(
            "working-directory",
            "violated",
            detail,
            _finding(
                obs,
                "working-directory",
                detail,
                {"workdir": e.workdir, "entries": list(inside.entries[:20])},
            ),
        )
    return Verdict(
        "working-directory", "held", f"{e.workdir} is an empty tmpfs and the process starts there"
    )


def _rootfs(obs: Observation, _e: Expected) -> Verdict:
    inside, outside = obs.inside, obs.outside
    problems: list[str] = []
    seen: list[str] = []
    if inside is not None and inside.rootfs is not None:
        seen.append("a write to / inside")
        if inside.rootfs != "denied":
            problems.append("a file could be written to / inside the container")
        root = _mount_at(inside.mounts or (), "/")
        if root is not None and not root.read_only:
            problems.append("/ is mounted read-write")
    if outside is not None and outside.read_only_rootfs is not None:
        seen.append("the engine's ReadonlyRootfs")
        if not outside.read_only_rootfs:
            problems.append(
                "the engine runs the container with a writable root (ReadonlyRootfs false)"
            )
    if problems:
        detail = "; ".join(problems)
        return Verdict(
            "root-filesystem", "violated", detail, _finding(obs, "root-filesystem", detail, {})
        )
    if not seen:
        return _unknown("root-filesystem", obs)
    return Verdict("root-filesystem", "held", "read-only (checked: " + ", ".join(seen) + ")")


def _caps(obs: Observation, _e: Expected) -> Verdict:
    inside = obs.inside
    if inside is None or inside.cap_eff is None:
        return _unknown("capabilities", obs)
    try:
        eff = int(inside.cap_eff, 16)
        prm = int(inside.cap_prm or "0", 16)
    except ValueError:
        return Verdict(
            "capabilities", "unknown", f"not verified: CapEff {inside.cap_eff!r} unreadable"
        )
    if eff or prm:
        detail = f"CapEff {inside.cap_eff}, CapPrm {inside.cap_prm}: capabilities are effective"
        return Verdict(
            "capabilities",
            "violated",
            detail,
            _finding(obs, "capabilities", detail, {"cap_eff": inside.cap_eff}),
        )
    return Verdict("capabilities", "held", "CapEff 0000000000000000 (none effective)")


def _nnp(obs: Observation, _e: Expected) -> Verdict:
    inside = obs.inside
    if inside is None or inside.no_new_privs is None:
        return _unknown("no-new-privileges", obs)
    if inside.no_new_privs.strip() != "1":
        detail = f"NoNewPrivs is {inside.no_new_privs}: setuid programs can raise privileges"
        return Verdict(
            "no-new-privileges", "violated", detail, _finding(obs, "no-new-privileges", detail, {})
        )
    return Verdict("no-new-privileges", "held", "NoNewPrivs 1")


def _expected_mount(m: MountInfo, e: Expected) -> bool:
    p = m.mountpoint
    if p in _STANDARD or p.startswith(_STANDARD_BELOW) or p == e.helper or p in e.volumes:
        return True
    if p in e.tmpfs and m.fstype == "tmpfs":
        return True
    return any(p == c and m.read_only for _h, c in e.allowed)


def _mounts(obs: Observation, e: Expected) -> Verdict:
    problems: list[str] = []
    inside, outside = obs.inside, obs.outside
    if inside is not None and inside.mounts is not None:
        for m in inside.mounts:
            if not _expected_mount(m, e) and not is_docker_socket(m.mountpoint):
                rel = workdir_relation(m.mountpoint, e.workdir)
                where = f" ({rel} the working directory)" if rel else ""
                problems.append(f"{m.fstype} mount of {m.root} at {m.mountpoint}{where}")
    allowed = {c: h for h, c in e.allowed}
    if outside is not None:
        for mf in outside.mounts:
            if mf.type != "bind" or mf.destination == e.helper or is_docker_socket(mf.source):
                continue
            if mf.destination not in allowed:
                problems.append(
                    f"bind mount of the host's {mf.source} at {mf.destination} (engine record)"
                )
            elif mf.read_write:
                problems.append(f"{mf.source} at {mf.destination} is writable (engine record)")
    if problems:
        detail = "; ".join(dict.fromkeys(problems))
        return Verdict(
            "mounts",
            "violated",
            detail,
            _finding(obs, "mounts", detail, {"unexpected": list(dict.fromkeys(problems))}),
        )
    if (inside is None or inside.mounts is None) and outside is None:
        return _unknown("mounts", obs)
    checked = [
        w
        for w, ok in (
            ("/proc/self/mountinfo", inside is not None and inside.mounts is not None),
            ("the engine record", outside is not None),
        )
        if ok
    ]
    return Verdict(
        "mounts",
        "held",
        "no host folder mounted besides --allow-mount, read-only (checked: "
        + ", ".join(checked)
        + ")",
    )


def _socket(obs: Observation, _e: Expected) -> Verdict:
    found: list[str] = []
    if obs.inside is not None and obs.inside.mounts is not None:
        found += [m.mountpoint for m in obs.inside.mounts if is_docker_socket(m.mountpoint)]
    if obs.outside is not None:
        found += [
            f"{m.source} -> {m.destination}"
            for m in obs.outside.mounts
            if is_docker_socket(m.source) or is_docker_socket(m.destination)
        ]
    if found:
        detail = "the Docker socket is mounted: " + ", ".join(dict.fromkeys(found))
        return Verdict(
            "docker-socket",
            "violated",
            detail,
            _finding(obs, "docker-socket", detail, {"mounts": list(dict.fromkeys(found))}),
        )
    if (obs.inside is None or obs.inside.mounts is None) and obs.outside is None:
        return _unknown("docker-socket", obs)
    return Verdict("docker-socket", "held", "no Docker socket mounted")


def _network(obs: Observation, e: Expected) -> Verdict:
    problems: list[str] = []
    seen: list[str] = []
    out = obs.outside
    if out is not None and out.network_mode is not None:
        seen.append(f"engine NetworkMode {out.network_mode}")
        if out.network_mode != e.network:
            problems.append(f"the engine runs it on network {out.network_mode}, not {e.network}")
        elif e.network != "none" and out.networks is not None and set(out.networks) != {e.network}:
            problems.append(f"attached to {', '.join(out.networks)}, not only {e.network}")
    if obs.inside is not None and obs.inside.interfaces is not None:
        ifaces = [i for i in obs.inside.interfaces if i != "lo"]
        seen.append("interfaces " + ", ".join(obs.inside.interfaces))
        if e.network == "none" and ifaces:
            problems.append(f"network none, yet interfaces {', '.join(ifaces)} exist")
        if e.network != "none" and len(ifaces) != 1:
            problems.append(
                f"expected one interface on {e.network}, found {', '.join(ifaces) or 'none'}"
            )
    if problems:
        detail = "; ".join(problems)
        return Verdict(
            "network", "violated", detail, _finding(obs, "network", detail, {"expected": e.network})
        )
    if not seen:
        return _unknown("network", obs)
    return Verdict("network", "held", f"{e.network} ({'; '.join(seen)})")


_CHECKS: dict[str, Callable[[Observation, Expected], Verdict]] = {
    "user": _user,
    "working-directory": _workdir,
    "root-filesystem": _rootfs,
    "capabilities": _caps,
    "no-new-privileges": _nnp,
    "mounts": _mounts,
    "docker-socket": _socket,
    "network": _network,
}


def check_observation(obs: Observation, expected: Expected) -> list[Verdict]:
    """One verdict per probe, in :data:`PROBES` order."""
    return [_CHECKS[p](obs, expected) for p in PROBES]


__all__ = [
    "PROBES",
    "HardenedConfigDoesNotHold",
    "Inside",
    "Outside",
    "Verdict",
    "check_observation",
]

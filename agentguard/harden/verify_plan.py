"""What ``--verify`` may run: the run line it is about to execute, compared with the plan.

The plan is the argument list harden rendered (:func:`~agentguard.harden.docker_run.run_argv`),
read as data, never through a shell. The line to run is the script text read back as the
shell would split it. Every setting that reaches past the container -- a mount, a tmpfs, the
network, a capability, privilege, a namespace, a security option, the user, the working
directory, the limits, a variable taken from the caller's environment, an env file, the
image -- must be exactly what the plan made; anything else is a deviation and nothing runs.
This is a comparison against the plan, not a list of bad flags: a flag added tomorrow is
refused the same way. What stays inside the container (its command, a literal variable) may
differ (a person's edit of the command is what ``--verify-script`` is for).

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agentguard.harden.run_script import (
    BuildArgs,
    MountArg,
    RunArgs,
    RunParseError,
    parse_build_argv,
    parse_run_argv,
)


@dataclass(frozen=True)
class PlannedRun:
    """One script as the plan made it: its run line and build line as argument lists."""

    run: RunArgs
    build: BuildArgs | None
    error: str | None = None  # the plan's own line cannot be vouched for: nothing runs


def planned(argv: Sequence[str], build: Sequence[str] | None) -> PlannedRun:
    """The plan's ``docker run ...`` argv (and ``docker build ...`` argv) as data."""
    try:
        return PlannedRun(
            run=parse_run_argv(list(argv[2:])),
            build=parse_build_argv(list(build[2:])) if build else None,
        )
    except RunParseError as exc:
        return PlannedRun(RunArgs(), None, error=str(exc))


def _mount_text(m: MountArg) -> str:
    ro = ",readonly" if m.read_only else ""
    return f"type={m.type},source={m.source or ''},target={m.target}{ro}"


def _by_name(env: Sequence[str]) -> set[str]:
    return {e for e in env if "=" not in e}


def _same(label: str, plan: object, line: object) -> list[str]:
    return [] if plan == line else [f"{label} {line!r} (the plan: {plan!r})"]


def deviations(plan: RunArgs, line: RunArgs) -> list[str]:
    """What ``line`` asks for beyond ``plan``, one phrase each; empty: it may run."""
    out: list[str] = []
    out += _same("image", plan.image, line.image)
    out += _same("user", plan.user, line.user)
    out += _same("working directory", plan.workdir, line.workdir)
    out += _same("network", plan.network, line.network)
    out += _same("pid namespace", plan.pid, line.pid)
    out += _same("ipc namespace", plan.ipc, line.ipc)
    out += _same("memory limit", plan.memory, line.memory)
    out += _same("pids limit", plan.pids_limit, line.pids_limit)
    if line.privileged and not plan.privileged:
        out.append("--privileged")
    if plan.read_only and not line.read_only:
        out.append("a writable root filesystem (no --read-only)")
    planned_mounts = {_mount_text(m) for m in plan.mounts}
    out += [f"the mount {t}" for t in map(_mount_text, line.mounts) if t not in planned_mounts]
    for path, opts in sorted(line.tmpfs.items()):
        if plan.tmpfs.get(path) != opts:
            out.append(f"the tmpfs {path}:{opts}")
    out += [f"the tmpfs at {p} removed" for p in sorted(set(plan.tmpfs) - set(line.tmpfs))]
    out += [f"--cap-add {c}" for c in line.cap_add if c not in plan.cap_add]
    out += [f"--cap-drop {c} removed" for c in plan.cap_drop if c not in line.cap_drop]
    out += [f"--security-opt {o}" for o in line.security_opt if o not in plan.security_opt]
    out += [f"--security-opt {o} removed" for o in plan.security_opt if o not in line.security_opt]
    extra_names = sorted(_by_name(line.env) - _by_name(plan.env))
    out += [f"--env {n} (a value from the caller's environment)" for n in extra_names]
    out += [f"--env-file {f}" for f in line.env_files if f not in plan.env_files]
    return out


def build_deviations(plan: BuildArgs | None, line: BuildArgs | None) -> list[str]:
    """A build line must be the plan's, word for word (context, Dockerfile, tag, arguments)."""
    if plan == line:
        return []
    if plan is None:
        return ["a `docker build` the plan did not make"]
    if line is None:
        return ["no `docker build` (the plan builds the hardened image)"]
    out = _same("build context", plan.context, line.context)
    out += _same("Dockerfile", plan.dockerfile, line.dockerfile)
    out += _same("image tag", plan.tag, line.tag)
    out += _same("build arguments", plan.build_args, line.build_args)
    return out


__all__ = ["PlannedRun", "build_deviations", "deviations", "planned"]

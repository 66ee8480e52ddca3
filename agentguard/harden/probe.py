"""The probe container of ``harden --verify``: created with a run script's settings, its
main process a static busybox from this machine (mounted read-only at
:data:`~agentguard.harden.probe_facts.HELPER_PATH`, outside the working directory) running
shell built-ins only, and read from outside by the engine's record of it. This module
runs and observes; what the observation means (the AG5xx verdicts) is judged by
:mod:`agentguard.harden.verify`, which never lets the agent start before every probe held.
Every container this creates is removed.
"""

from __future__ import annotations

import os
import shutil
import struct
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentguard.findings import Source
from agentguard.harden.probe_facts import (
    HELPER_PATH,
    PROBE_SCRIPT,
    Observation,
    Outside,
    parse_probe_output,
)
from agentguard.harden.run_script import RunArgs
from agentguard.inspect import engine as eng
from agentguard.inspect.container import container_facts

RUN_TIMEOUT = 60
HELPER_ENV = "AGENTGUARD_PROBE_HELPER"  # a static busybox to use instead of the one on PATH


def is_static_elf(path: Path) -> bool:
    """True for an ELF executable without a program interpreter (runs in any image)."""
    try:
        with path.open("rb") as fh:
            head = fh.read(64)
            if head[:4] != b"\x7fELF" or head[4] not in (1, 2):
                return False
            is64, endian = head[4] == 2, "<" if head[5] == 1 else ">"
            if is64:
                phoff, phentsize, phnum = (
                    struct.unpack_from(endian + "Q", head, 32)[0],
                    *struct.unpack_from(endian + "HH", head, 54),
                )
            else:
                phoff, phentsize, phnum = (
                    struct.unpack_from(endian + "I", head, 28)[0],
                    *struct.unpack_from(endian + "HH", head, 42),
                )
            fh.seek(phoff)
            table = fh.read(phentsize * phnum)
    except (OSError, struct.error):
        return False
    for i in range(phnum):
        (p_type,) = struct.unpack_from(endian + "I", table, i * phentsize)
        if p_type == 3:  # PT_INTERP: dynamically linked
            return False
    return True


def find_helper() -> tuple[Path | None, str]:
    """(the static busybox to mount, or None, and why)."""
    named = os.environ.get(HELPER_ENV)
    candidate = Path(named) if named else (Path(p) if (p := shutil.which("busybox")) else None)
    if candidate is None:
        return None, "no busybox on PATH (install a static one, e.g. Debian's busybox-static)"
    if not is_static_elf(candidate):
        return None, f"{candidate} is not a static executable, so it cannot run inside any image"
    return candidate, f"static helper {candidate}"


def _mounts(args: RunArgs, helper: Path | None) -> list[Any]:
    from docker.types import Mount

    out = [
        Mount(target=m.target, source=m.source, type=m.type, read_only=m.read_only)
        for m in args.mounts
    ]
    if helper is not None:
        out.append(Mount(target=HELPER_PATH, source=str(helper), type="bind", read_only=True))
    return out


def create_kwargs(args: RunArgs, helper: Path | None, probe: str = PROBE_SCRIPT) -> dict[str, Any]:
    """docker-py ``containers.create`` arguments with the script's settings."""
    kwargs: dict[str, Any] = {
        "user": args.user,
        "working_dir": args.workdir,
        "read_only": args.read_only,
        "tmpfs": dict(args.tmpfs),
        "cap_drop": list(args.cap_drop) or None,
        "cap_add": list(args.cap_add) or None,
        "security_opt": list(args.security_opt) or None,
        "network_mode": args.network,
        "mem_limit": args.memory,
        "pids_limit": args.pids_limit,
        "privileged": args.privileged,
        "pid_mode": args.pid,
        "ipc_mode": args.ipc,
        # only literal values: a pass-through's value is not needed to probe the container
        "environment": [e for e in args.env if "=" in e],
        "mounts": _mounts(args, helper),
    }
    if helper is not None:
        kwargs["entrypoint"] = [HELPER_PATH, "sh", "-c", probe]
        kwargs["command"] = []
    else:
        if args.entrypoint:
            kwargs["entrypoint"] = [args.entrypoint]
        kwargs["command"] = args.command or None
    return {k: v for k, v in kwargs.items() if v is not None}


def outside_facts(attrs: Mapping[str, Any]) -> Outside:
    facts = container_facts(attrs, None)
    networks = (attrs.get("NetworkSettings") or {}).get("Networks")
    return Outside(
        user=facts.user,
        read_only_rootfs=facts.read_only_rootfs,
        network_mode=facts.network_mode,
        networks=tuple(networks) if isinstance(networks, Mapping) else None,
        mounts=facts.mounts,
        cap_add=facts.cap_add,
        cap_drop=facts.cap_drop,
        privileged=facts.privileged,
        security_opt=facts.security_opt,
        workdir=facts.workdir,
    )


def probe_failed(name: str, reason: str, code: str, remedy: str | None = None) -> Source:
    return Source.failed("probe", name, reason, error_code=code, retryable=False, remedy=remedy)


def run_probe(
    client: Any, args: RunArgs, helper: Path | None, script: str, probe: str = PROBE_SCRIPT
) -> tuple[Observation | None, list[Source]]:
    """Create, run and inspect one container; always removed afterwards."""
    sources: list[Source] = []
    try:
        container = client.containers.create(args.image, **create_kwargs(args, helper, probe))
    except Exception as exc:
        return None, [
            eng.failed_source(
                "engine", script, "cannot create the container with the hardened config", exc
            )
        ]
    inside = None
    why: str | None = None
    try:
        if helper is not None:
            container.start()
            status = container.wait(timeout=RUN_TIMEOUT)
            text = container.logs(stdout=True, stderr=True).decode("utf-8", "replace")
            inside = parse_probe_output(text.splitlines())
            if not inside.complete:
                why = f"the probe did not finish (exit {status.get('StatusCode')}): {text.strip()[-300:]}"
                sources.append(probe_failed(f"inside ({script})", why, "probe-incomplete"))
            else:
                sources.append(
                    Source.ok(
                        "probe", f"inside ({script})", f"probe ran in container {container.id[:12]}"
                    )
                )
        container.reload()
        outside = outside_facts(container.attrs)
        sources.append(
            Source.ok("engine", f"inspect ({script})", f"container {container.id[:12]} read")
        )
    except Exception as exc:
        return None, [
            *sources,
            eng.failed_source("engine", script, "the probe container failed", exc),
        ]
    finally:
        try:
            container.remove(force=True, v=True)
        except Exception as exc:
            sources.append(
                eng.failed_source("engine", script, "cannot remove the probe container", exc)
            )
    obs = Observation(
        container=container.id,
        image=args.image,
        script=script,
        inside=inside,
        outside=outside,
        why_not_inside=why,
    )
    return obs, sources

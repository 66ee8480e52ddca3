"""``--verify``, the agent's part: build the hardened image the script builds, start the
agent with its own command in the hardened configuration, and listen on this host for the
egress probe.

What runs is what is on disk: the script's ``docker build`` line and the Dockerfile it
names, its ``docker run`` settings and command. Values the script passes through by name
are taken from this process's environment, as the script would; they are masked in every
line of output kept. Every container this creates is removed.
"""

from __future__ import annotations

import contextlib
import shlex
import socket
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentguard import safeio
from agentguard.findings import Source
from agentguard.harden.docker_run import BuildArgs, RunArgs
from agentguard.harden.probe_facts import AgentRun
from agentguard.redact import mask_value
from agentguard.secret_text import scan_text

FIRST_LINES = 10
LINE_CAP = 300
HEAD_CAP = 64 * 1024  # bytes of output read for the first lines
MASK = mask_value()  # the one mask of agentguard.redact


@dataclass(frozen=True)
class AgentCheck:
    settle: float = 5.0
    command: str | None = None  # --verify-command


def build_image(
    client: Any, build: BuildArgs, script_dir: Path, label: str
) -> tuple[str | None, Source]:
    """Build the hardened image as the script would (from its folder). (error, source)."""
    context = (script_dir / build.context).resolve()
    dockerfile = (script_dir / build.dockerfile).resolve()
    try:
        client.images.build(
            path=str(context),
            dockerfile=str(dockerfile),
            tag=build.tag,
            buildargs=dict(build.build_args) or None,
            rm=True,
            forcerm=True,
        )
    except Exception as exc:
        reason = str(getattr(exc, "msg", None) or exc).strip().splitlines()
        why = reason[-1] if reason else type(exc).__name__
        return why, Source.ok("engine", f"build ({label})", f"{build.tag} did not build: {why}")
    return None, Source.ok(
        "engine", f"build ({label})", f"built {build.tag} from {build.dockerfile}"
    )


MAX_ENV_FILE = 1 << 20


def env_file_entries(path: str) -> list[str]:
    """The entries of a ``--env-file``, as the docker CLI reads one: ``NAME=VALUE`` as
    written (no quotes removed), a bare ``NAME`` from the caller's environment, ``#``
    comments and blank lines skipped. Read through the safe open (a regular file, capped);
    OSError when it cannot be."""
    try:
        text = safeio.read_text(path, cap=MAX_ENV_FILE)
    except UnicodeDecodeError as exc:
        raise OSError(f"{path}: not UTF-8 text") from exc
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.lstrip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def _passed_env(args: RunArgs, environ: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """(environment for the engine, values to mask): by-name variables from ``environ``,
    then the ``--env-file`` entries, in the order docker applies them (the file first, an
    ``--env`` after it wins). OSError: an env file could not be read."""
    env: list[str] = []
    values: list[str] = []
    entries = [line for path in args.env_files for line in env_file_entries(path)]
    for line in entries:
        _name, eq, value = line.partition("=")
        if eq and value:
            values.append(value)
    for e in [*entries, *args.env]:
        if "=" in e:
            env.append(e)
        elif e in environ:
            env.append(f"{e}={environ[e]}")
            if environ[e]:
                values.append(environ[e])
    return env, values


def _clean(text: str, values: Sequence[str]) -> list[str]:
    out: list[str] = []
    for line in text.splitlines():
        for v in sorted(values, key=len, reverse=True):
            line = line.replace(v, MASK)
        if scan_text(line):
            line = "(a line holding a secret-looking value, not shown)"
        out.append(line[:LINE_CAP])
    return out


def _head(container: Any) -> str:
    """The first lines of the agent's output, read up to :data:`HEAD_CAP` bytes only."""
    data = b""
    stream = container.logs(stdout=True, stderr=True, stream=True, follow=False)
    try:
        for chunk in stream:
            data += chunk
            if len(data) >= HEAD_CAP or data.count(b"\n") >= FIRST_LINES:
                break
    finally:
        with contextlib.suppress(Exception):
            stream.close()
    return data[:HEAD_CAP].decode("utf-8", "replace")


def _last(text: str, values: Sequence[str]) -> str:
    lines = [line for line in _clean(text, values) if line.strip()]
    return lines[-1] if lines else "no reason given"


def start_agent(
    client: Any,
    args: RunArgs,
    kwargs: dict[str, Any],
    check: AgentCheck,
    label: str,
    environ: Mapping[str, str],
) -> AgentRun:
    """Run the agent with the script's settings and command; removed afterwards."""
    base = AgentRun(
        script=label, image=args.image, state="", settle=check.settle, command=check.command
    )
    try:
        env, values = _passed_env(args, environ)
    except OSError as exc:
        return replace(base, state="not-created", error=f"the --env-file was not read: {exc}")
    try:
        container = client.containers.create(args.image, **{**kwargs, "environment": env})
    except Exception as exc:
        return replace(base, state="not-created", error=_last(str(exc), values))
    try:
        try:
            container.start()
        except Exception as exc:
            return replace(base, state="not-started", error=_last(str(exc), values))
        deadline = time.monotonic() + check.settle
        status: Mapping[str, Any] | None = None
        while time.monotonic() < deadline:
            container.reload()
            if container.status not in ("created", "running"):
                status = container.wait(timeout=10)
                break
            time.sleep(0.2)
        cmd_exit: int | None = None
        cmd_out: list[str] = []
        if status is None and check.command is not None:
            try:  # bounded by the engine client's timeout
                result = container.exec_run(
                    shlex.split(check.command), user=args.user or "", workdir=args.workdir
                )
                cmd_exit = int(result.exit_code) if result.exit_code is not None else None
                cmd_out = _clean(result.output[-HEAD_CAP:].decode("utf-8", "replace"), values)
            except Exception as exc:
                cmd_out = [f"did not finish: {_last(str(exc), values)}"]
        tail = container.logs(stdout=True, stderr=True, tail=FIRST_LINES)
        return replace(
            base,
            state="running" if status is None else "exited",
            exit_code=None if status is None else int(status.get("StatusCode", -1)),
            lines=tuple(_clean(_head(container), values)[:FIRST_LINES]),
            tail=tuple(_clean(tail.decode("utf-8", "replace"), values)[-FIRST_LINES:]),
            command_exit=cmd_exit,
            command_output=tuple(cmd_out[-FIRST_LINES:]),
        )
    finally:
        with contextlib.suppress(Exception):
            container.remove(force=True, v=True)


def host_addresses() -> list[tuple[str, str]]:
    """(address, what it is): this host's IPv4 and IPv6 source addresses (no packet sent)."""
    out: list[tuple[str, str]] = []
    for family, probe, what in (
        (socket.AF_INET, "192.0.2.1", "IPv4"),
        (socket.AF_INET6, "2001:db8::1", "IPv6"),
    ):
        try:
            with socket.socket(family, socket.SOCK_DGRAM) as s:
                s.connect((probe, 9))
                addr = str(s.getsockname()[0])
            out.append((addr, f"{what}, this host"))
        except OSError:
            out.append((probe, f"{what}; this host has no route, a documentation address"))
    return out


@contextlib.contextmanager
def listening() -> Iterator[tuple[tuple[str, int, str], ...]]:
    """A TCP listener on every address of this host, for the egress probe to reach."""
    socks: list[socket.socket] = []
    targets: list[tuple[str, int, str]] = []
    port = 0
    try:
        for addr, what in host_addresses():
            family = socket.AF_INET6 if ":" in addr else socket.AF_INET
            s = socket.socket(family, socket.SOCK_STREAM)
            try:
                if family == socket.AF_INET6:
                    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
                s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", port))
                s.listen(8)
                port = port or s.getsockname()[1]
                socks.append(s)
            except OSError:
                s.close()
                port = port or 9
            targets.append((addr, port, what))
        yield tuple(targets)
    finally:
        for s in socks:
            s.close()


__all__ = ["AgentCheck", "build_image", "host_addresses", "listening", "start_agent"]

"""`docker run` arguments for a hardened service, and the reader the verifier uses on them.

:func:`run_argv` renders one :class:`ServiceSpec` under the :class:`HardenedSpec`;
:func:`render_script` writes it as a small POSIX shell script (``docker-run.sh``).
:func:`agentguard.harden.run_script.parse_run_script` reads such a script back, so
``--verify`` runs what is written, not what was meant.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from agentguard.harden.escape import comment
from agentguard.harden.model import HOME_DIR, HardenedSpec, ServiceSpec


def argv_of(value: object) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return shlex.split(value)
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    return None


def run_argv(
    spec: HardenedSpec,
    svc: ServiceSpec,
    image: str,
    code_mounts: Sequence[tuple[str, str]] = (),
) -> list[str]:
    """The whole command line, ``docker run ... IMAGE [ARG...]``."""
    argv = ["docker", "run", "--rm", "--user", spec.user, "--read-only"]
    for t in spec.tmpfs:
        argv += ["--tmpfs", f"{t.path}:{t.options()}"]
    argv += ["--workdir", spec.workdir, "--cap-drop", "ALL"]
    argv += ["--security-opt", "no-new-privileges:true"]
    argv += ["--network", spec.network, "--memory", spec.memory, "--pids-limit", str(spec.pids)]
    argv += ["--env", f"HOME={HOME_DIR}"]
    if spec.env_file is not None:
        argv += ["--env-file", spec.env_file]  # the by-name variables: read by docker, not here
    for e in svc.env:
        if e.value is None and spec.env_file is not None:
            continue
        argv += ["--env", e.name if e.value is None else f"{e.name}={e.value}"]
    for m in spec.allow_mounts:
        argv += ["--mount", f"type=bind,source={m.host},target={m.container},readonly"]
    for host, target in code_mounts:
        argv += ["--mount", f"type=bind,source={host},target={target},readonly"]
    for v in svc.volumes:
        ro = ",readonly" if v.read_only else ""
        argv += ["--mount", f"type=volume,source={v.name},target={v.target}{ro}"]
    entry = _literal_dollars(argv_of(svc.entrypoint), svc)
    command = _literal_dollars(argv_of(svc.command), svc) or []
    if entry:
        argv += ["--entrypoint", entry[0]]
        command = entry[1:] + command
    return [*argv, image, *command]


def _literal_dollars(argv: list[str] | None, svc: ServiceSpec) -> list[str] | None:
    """A compose command's words as the container gets them: compose reads ``$$`` as a
    literal ``$`` (``sh -c "echo $$TASK"`` runs ``echo $TASK`` in the container's shell);
    written unchanged into a shell script, ``$$`` would be the PID."""
    if argv is None or not svc.compose_form:
        return argv
    return [w.replace("$$", "$") for w in argv]


_PLACEHOLDER = re.compile(r"^(?:[A-Z_]+=)?\$\{[A-Z_]+:\?[^\"`$\\]*\}$")


def _quote(arg: str) -> str:
    """Shell quoting; a ``${VAR:?message}`` placeholder stays expandable."""
    if _PLACEHOLDER.match(arg):
        return f'"{arg}"'
    return shlex.quote(arg)


def render_script(
    argv: Sequence[str], *, header: Sequence[str], build: Sequence[str] | None = None
) -> str:
    """The script; with ``build``, it builds the hardened image first (paths relative to
    the script's folder, which it changes to)."""
    lines = ["#!/bin/sh", *(f"# {comment(h)}" if h else "#" for h in header), "set -eu"]
    if build:
        lines += ['cd "$(dirname "$0")"', " ".join(_quote(a) for a in build) + " >/dev/null"]
    head, rest = list(argv[:2]), list(argv[2:])
    out = ["exec " + " ".join(_quote(a) for a in head) + " \\"]
    i = 0
    while i < len(rest):
        a = rest[i]
        if a.startswith("--") and a not in ("--rm", "--read-only") and i + 1 < len(rest):
            out.append(f"  {_quote(a)} {_quote(rest[i + 1])} \\")
            i += 2
        else:
            out.append(f"  {_quote(a)} \\")
            i += 1
    out[-1] = out[-1].removesuffix(" \\")
    return "\n".join(lines + out) + "\n"

"""Starting a stdio MCP server the project launches and speaking MCP to it: ``initialize``,
``notifications/initialized``, ``tools/list``; then its process group is killed.

The client is a minimal JSON-RPC one of agentguard's own (newline-delimited messages over
the server's stdin/stdout), not the ``mcp`` client library of the scratch environment:
the library is one of the locked packages under test (mcp 2.x is the incident), so a
broken ``mcp`` would make every server look broken; and agentguard's process parses only
bounded JSON lines, never the server's objects. The server gets the minimal environment
(:mod:`agentguard.smoke.proc`) and none of the variables its configuration declares: a
server that needs a secret and does not start without it is "needs credentials".
"""

from __future__ import annotations

import json
import os
import queue
import re
import select
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from agentguard.facts.agents import McpServer
from agentguard.facts.smoke import FAILED, NEEDS_CREDENTIALS, NOT_IN_REGISTRY, OK, Probe
from agentguard.smoke.install import Options
from agentguard.smoke.proc import Tail, child_env, ended, kill_group, spawn, tail
from agentguard.smoke.tools import snapshot_of

PROTOCOL = "2025-06-18"
MAX_LINE = 4 * 1024 * 1024
_NO_PACKAGE = re.compile(
    r"(E404|404 Not Found|is not in this registry|not found in the package registry|"
    r"No solution found when resolving tool dependencies.*not found|"
    r"Because .* was not found in the (package registry|provided package locations))",
    re.I | re.S,
)
_CREDENTIALS = re.compile(
    r"(api[_ ]?key|token|credential|secret|password|unauthori[sz]ed|not authenticated|"
    r"environment variable .* (is )?(not set|required|missing)|missing .*(key|token))",
    re.I,
)
LAUNCHERS = ("npx", "uvx")


def launch_argv(
    server: McpServer,
    python: str | None,
    project_modules: frozenset[str],
    index: Options | None = None,
) -> list[str] | str:
    """The argv agentguard starts for ``server``, or why it starts none. ``index``: the
    indexes this run resolved the lock with (``lock --index-url/--find-links/--no-index``),
    which a ``uvx`` server is fetched from too: the lock's entry for it was resolved there."""
    command, args = server.command, server.args
    if (
        not isinstance(command, str)
        or not isinstance(args, tuple)
        or not all(isinstance(a, str) for a in args)
    ):
        return "its command or arguments are not known from the files (built at run time)"
    name = os.path.basename(command)
    if name in LAUNCHERS:
        if command != name:  # `./bin/npx`: a file of the project's, not the launcher
            return f"`{command}` is a path, not the `{name}` launcher on PATH"
        flags = _index_flags(index, args) if name == "uvx" else []
        if shutil.which(command):
            return [command, *flags, *args]
        if name == "uvx":  # agentguard's own uv runs it
            from agentguard.lock.backend import uv_binary

            return [uv_binary(), "tool", "run", *flags, *args]
        return f"`{command}` is not on this machine's PATH"
    if name.startswith("python") and len(args) >= 2 and args[0] == "-m":
        if args[1].split(".")[0] in project_modules:
            return f"`python -m {args[1]}` runs the project's own code, which the smoke run does not start"
        if python is None:
            return "it runs in the project's Python environment, which was not installed"
        return [python, *args]
    if name == "docker" or name == "podman":
        return "it starts a container; the smoke run starts no container (use `agentguard harden --verify`)"
    return f"`{name}` is not a package launcher the smoke run starts (npx, uvx, python -m)"


_INDEX_FLAGS = ("--index-url", "--index", "--default-index", "--extra-index-url", "--find-links",
                "-f", "-i", "--no-index")  # fmt: skip


def _index_flags(index: Options | None, args: Sequence[str]) -> list[str]:
    """uv's flags for the run's indexes; none when the launch names its own (then it is
    not in the lock either: another index is the project's choice, AG142)."""
    if index is None or any(a.split("=", 1)[0] in _INDEX_FLAGS for a in args):
        return []
    out = ["--index-url", index.index_url] if index.index_url else []
    for link in index.find_links:
        out += ["--find-links", link]
    return [*out, "--no-index"] if index.no_index else out


class _Lines(threading.Thread):
    def __init__(self, stream: Any) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.lines: queue.Queue[bytes | None] = queue.Queue()

    def run(self) -> None:
        try:
            while True:
                line = self.stream.readline(MAX_LINE)
                if not line:
                    break
                self.lines.put(line)
        except (OSError, ValueError):
            pass
        self.lines.put(None)


def _send(proc: subprocess.Popen[bytes], message: dict[str, Any], ends: float) -> bool:
    """Write ``message`` to the server's stdin by ``ends``; False when it is not all written
    by then (a server that does not read its stdin fills the pipe: a blocking write would
    wait on it past every deadline). The pipe is non-blocking (see :func:`start_server`)."""
    assert proc.stdin is not None
    data = json.dumps(message).encode() + b"\n"
    fd = proc.stdin.fileno()
    while data:
        left = ends - time.monotonic()
        if left <= 0:
            return False
        _, ready, _ = select.select([], [fd], [], left)
        if not ready:
            return False
        try:
            data = data[os.write(fd, data) :]
        except BlockingIOError:
            continue
    return True


def _answer(
    proc: subprocess.Popen[bytes], reader: _Lines, want: int, ends: float
) -> dict[str, Any] | str:
    """The response to request ``want``, or why there is none ("exited", "timeout", ...)."""
    while True:
        left = ends - time.monotonic()
        if left <= 0:
            return "timeout"
        try:
            line = reader.lines.get(timeout=left)
        except queue.Empty:
            return "timeout"
        if line is None:
            return "exited"
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            continue  # a log line on stdout (or nested past reading): not protocol, not fatal
        if not isinstance(msg, dict):
            continue
        if "method" in msg and "id" in msg:  # a request of the server's (roots, sampling)
            refused = {
                "jsonrpc": "2.0",
                "id": msg["id"],
                "error": {"code": -32601, "message": "not supported"},
            }
            if not _send(proc, refused, ends):
                return "timeout"
            continue
        if msg.get("id") == want:
            return msg


def start_server(
    server: McpServer,
    argv: Sequence[str],
    scratch: str,
    cwd: str,
    timeout: float,
    ends: float | None = None,
) -> Probe:
    """Start ``server`` and ask it for its tools, by ``ends`` (time.monotonic(); fixed when
    the server was queued, not when a thread got to it) or ``timeout`` seconds from now."""
    env = child_env(
        scratch,
        {"UV_CACHE_DIR": os.path.join(scratch, "uv-cache"), "npm_config_update_notifier": "false"},
    )
    declared = tuple(k for k, _ in server.env)
    base = Probe(
        "stdio", server.name, FAILED, "start", server.path, server.line, package=_package(argv),
        lock_key=lock_key(server),
    )  # fmt: skip
    try:
        proc = spawn(argv, cwd=cwd, env=env, stdin=subprocess.PIPE)
    except OSError as exc:
        return replace(
            base, status=FAILED, stage="start", detail=f"cannot start `{argv[0]}`: {exc}"
        )
    assert proc.stdin is not None and proc.stderr is not None
    os.set_blocking(proc.stdin.fileno(), False)
    reader = _Lines(proc.stdout)
    reader.start()
    err = Tail(proc.stderr)
    err.start()
    ends = time.monotonic() + timeout if ends is None else ends
    try:
        asked = _send(
            proc,
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": PROTOCOL,
                    "capabilities": {},
                    "clientInfo": {"name": "agentguard-smoke", "version": "1"},
                },
            },
            ends,
        )
        init = _answer(proc, reader, 1, ends) if asked else "timeout"
        tools: dict[str, Any] | str = "not asked"
        if isinstance(init, dict) and "result" in init:
            asked = _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"}, ends)
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
            asked = asked and _send(proc, listing, ends)
            tools = _answer(proc, reader, 2, ends) if asked else "timeout"
    except (BrokenPipeError, OSError):
        init, tools = "exited", "not asked"
    finally:
        kill_group(proc)
        ended(proc)
    err.join(1.0)  # (a child that left the group may hold the pipe: not waited for)
    output = tail(err.text())
    return _verdict(base, init, tools, output, declared, proc.returncode, timeout)


def lock_key(server: McpServer) -> tuple[str, str, str, str] | None:
    """The key of the ``mcp.lock.json`` entry this launch matches (None: the launch takes
    nothing from a registry, or its package is not a name the lock records)."""
    from agentguard.facts.mcp_pins import ServerLaunch, launch_of

    got = launch_of(server)
    return got.key if isinstance(got, ServerLaunch) else None


def _package(argv: Sequence[str]) -> str | None:
    if os.path.basename(argv[0]) not in LAUNCHERS:
        if argv[1:3] != ["tool", "run"]:
            return None
        argv = argv[2:]
    flags_with_value = {
        "-p",
        "--package",
        "--from",
        "--with",
        "--python",
        "--index-url",
        "--index",
        "--extra-index-url",
        "--default-index",
        "--find-links",
        "-f",
        "--registry",
    }
    skip = False
    for a in argv[1:]:
        if skip:
            skip = False
            continue
        if a in flags_with_value:
            skip = True
            continue
        if not a.startswith("-"):
            return a
    return None


def _verdict(
    base: Probe,
    init: dict[str, Any] | str,
    tools: dict[str, Any] | str,
    output: tuple[str, ...],
    declared: tuple[str, ...],
    code: int | None,
    timeout: float,
) -> Probe:
    text = "\n".join(output)
    if isinstance(init, dict) and "result" in init:
        if isinstance(tools, dict) and isinstance(tools.get("result"), dict):
            listed = tools["result"].get("tools")
            names = (
                tuple(str(t.get("name")) for t in listed if isinstance(t, dict))
                if isinstance(listed, list)
                else ()
            )
            info = init["result"].get("serverInfo") if isinstance(init["result"], dict) else None
            version = (
                str(info.get("version")) if isinstance(info, dict) and info.get("version") else None
            )
            try:
                snapshot = snapshot_of(
                    listed, info.get("version") if isinstance(info, dict) else None
                )
            except RecursionError:  # (nested past what the encoder writes: not recorded)
                snapshot = None
            return replace(
                base,
                version=version,
                status=OK,
                stage="list-tools",
                tools=names,
                detail=f"initialized and listed {len(names)} tool(s)",
                output=output,
                snapshot=snapshot,
            )
        why = _why(tools, timeout, "tools/list")
        return replace(
            base, status=FAILED, stage="list-tools", detail=why, output=output,
            timed_out=tools == "timeout",
        )  # fmt: skip
    if isinstance(init, str) and init == "exited" and _NO_PACKAGE.search(text):
        return replace(
            base,
            status=NOT_IN_REGISTRY,
            stage="start",
            output=output,
            detail=f"no registry holds the package {base.package or '(unknown)'}",
        )
    if declared or _CREDENTIALS.search(text):
        what = (
            f"its configuration declares {', '.join(declared)}"
            if declared
            else "it asks for a credential"
        )
        return replace(
            base,
            status=NEEDS_CREDENTIALS,
            stage="initialize",
            output=output,
            detail=f"{what}; the smoke run passes no secret, and it did not start without one",
            timed_out=init == "timeout",  # (it hung: the run's deadline may be why)
        )
    why = _why(init, timeout, "initialize")
    if init == "timeout" and base.package is not None:
        why += " (the time includes the launcher's download of the package)"
    if init == "exited" and code is not None:
        why = f"it exited with status {code} before answering initialize"
    return replace(
        base, status=FAILED, stage="initialize", detail=why, output=output,
        timed_out=init == "timeout",
    )  # fmt: skip


def _why(answer: dict[str, Any] | str, timeout: float, method: str) -> str:
    if answer == "timeout":
        return f"it did not answer {method} within {timeout:g} s"
    if answer == "exited":
        return f"it exited before answering {method}"
    if isinstance(answer, dict) and "error" in answer:
        error = answer["error"]
        message = error.get("message") if isinstance(error, dict) else error
        return f"{method} answered an error: {str(message)[:200]}"
    return f"{method} gave no answer"

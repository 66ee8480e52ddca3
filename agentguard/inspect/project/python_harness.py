"""Code that starts a container for scripts of its own package (a benchmark harness).

agbench (microsoft/autogen) copies a task's template folder into a work folder, mounts it
into a container it starts with the Docker SDK (``client.containers.run(image,
command=["sh", "run.sh"], ...)``) and its ``run.sh`` runs ``python scenario.py`` there. An
executor in that ``scenario.py`` runs its code in that container, not on the machine that
runs agbench. What this reader takes is what the harness file shows: where it starts a
container, which scripts its string literals run with Python, and whether it binds the
host's Docker socket into the container or gives it the host's network (a container with
the socket is no boundary: its code can start another with the host's files).
"""

from __future__ import annotations

import ast
import re

from agentguard.inspect.project.model import ContainerHarness
from agentguard.inspect.project.python_prefilter import CONTAINER_START

_SCRIPT = re.compile(r"(?:^|[\s;&|(])python3?(?:\.\d+)?\s+(?:-u\s+)?([\w.-]+\.py)\b")
_SOCKET = "/var/run/docker.sock"


def may_start_containers(data: bytes) -> bool:
    """Whether the file can hold a container start this reader matches (its pre-filter:
    `containers`, then `.run`/`.create`, blanks and line ends around the dot)."""
    return b"containers" in data and CONTAINER_START.search(data) is not None


def _start_line(tree: ast.AST) -> int | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("run", "create")
            and isinstance(node.func.value, ast.Attribute)
            and node.func.value.attr == "containers"
        ):
            return node.lineno
    return None


def _host_network(tree: ast.AST) -> int | None:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.keyword)
            and node.arg in ("network", "network_mode")
            and isinstance(node.value, ast.Constant)
            and node.value.value == "host"
        ):
            return node.value.lineno
    return None


def _socket_bind(tree: ast.AST) -> int | None:
    """A bind of the host's socket: ``{"bind": "/var/run/docker.sock", ...}`` or a
    ``"...:/var/run/docker.sock"`` volume string."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            for k, v in zip(node.keys, node.values, strict=True):
                if (
                    isinstance(k, ast.Constant)
                    and k.value == "bind"
                    and isinstance(v, ast.Constant)
                    and v.value == _SOCKET
                ):
                    return v.lineno
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, str)
            and f":{_SOCKET}" in node.value
        ):
            return node.lineno
    return None


def container_harnesses(path: str, tree: ast.AST) -> list[ContainerHarness]:
    line = _start_line(tree)
    if line is None:
        return []
    scripts: list[tuple[str, int]] = []
    in_fstring = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):  # (its parts do not carry their own lines)
            text = "".join(
                v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "{}"
                for v in node.values
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if id(node) in in_fstring:
                continue
            text = node.value
        else:
            continue
        for m in _SCRIPT.finditer(text):
            # the literal's first line plus the lines before the match (a run.sh text)
            scripts.append((m.group(1), node.lineno + text.count("\n", 0, m.start(1))))
    if not scripts:
        return []
    return [
        ContainerHarness(
            path=path,
            line=line,
            scripts=tuple(sorted(set(scripts), key=lambda s: s[1])),
            socket_line=_socket_bind(tree),
            host_network_line=_host_network(tree),
        )
    ]

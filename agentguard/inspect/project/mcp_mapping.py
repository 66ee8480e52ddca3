"""An MCP server from a configuration mapping (``{"command": ..., "args": [...]}``, the
transports' ``{"type": "http", "url": ...}``, gh-aw's gateway ``{"container": IMAGE}``): one
reading for every reader that finds such a mapping (JSON, TOML, YAML, TS and Python
literals, here-documents)."""

from __future__ import annotations

from typing import Any

from agentguard.inspect.project.model import McpServer, Unknown

# values a literal holds that no launch argument is (an evaluated name, a OneOf, is kept)
_NOT_TEXT = (dict, list, tuple, int, float, bool)


GATEWAY_CONTAINER = " (a container the gateway runs)"  # (said after where it is declared)


def _word(value: Any) -> Any:
    """A string or an unknown as it is; anything else an unknown (never a word read)."""
    return value if isinstance(value, str | Unknown) else Unknown(str(value)[:80], "not a string")


def container_launch(spec: dict[str, Any]) -> dict[str, Any]:
    """gh-aw's MCP gateway form, ``{"container": IMAGE, "mounts": [...], "args": [...],
    "entrypoint": E, "entrypointArgs": [...]}``, as the ``docker run`` the gateway starts
    (``args`` are ``docker run``'s own, before the image). A value that is not what the
    form allows is kept as an unknown argument, so the launch is never read as complete."""
    argv: list[Any] = ["run", "-i", "--rm"]

    def words(key: str) -> list[Any]:
        value = spec.get(key, [])
        if isinstance(value, list):
            return [_word(a) for a in value]
        if isinstance(value, Unknown):
            return [value]
        return [Unknown(str(value)[:80], f"`{key}` is not a list")]

    for mount in words("mounts"):
        argv += ["-v", mount]
    if spec.get("entrypoint") is not None:
        argv += ["--entrypoint", _word(spec["entrypoint"])]
    argv += [*words("args"), _word(spec["container"]), *words("entrypointArgs")]
    return {**spec, "command": "docker", "args": argv}


def mcp_server_from_mapping(
    name: str, spec: dict[str, Any], *, path: str, line: int, declared_in: str
) -> McpServer:
    """An MCP server from a ``{"command": ..., "args": [...]}``-style mapping."""
    kind = spec.get("type", spec.get("transport"))
    if isinstance(kind, str) and kind in ("http", "sse", "streamable-http", "streamable_http"):
        return McpServer(name, path, line, declared_in, "http" if "http" in kind else "sse")
    if kind == "sdk":
        return McpServer(name, path, line, declared_in, "sdk")
    command = spec.get("command")
    if command is None and "url" in spec:
        return McpServer(name, path, line, declared_in, "http")
    if command is None and "container" in spec:
        spec = container_launch(spec)
        command = spec["command"]
        declared_in += GATEWAY_CONTAINER
    args = spec.get("args", ())
    if isinstance(args, list | tuple):  # (JSON and TS literals can hold any value here)
        args = tuple(
            Unknown(str(a)[:80], "not a string") if a is None or isinstance(a, _NOT_TEXT) else a
            for a in args
        )
    if not isinstance(args, tuple | Unknown):
        args = Unknown(str(args)[:80], "not a list")
    transport = "stdio" if command is not None else "unknown"
    if isinstance(kind, Unknown):
        transport = "unknown"
    env_spec = spec.get("env")
    env = (
        tuple((str(k), v) for k, v in env_spec.items() if isinstance(v, str))
        if isinstance(env_spec, dict)
        else ()
    )
    image = spec.get("container") if declared_in.endswith(GATEWAY_CONTAINER) else None
    return McpServer(
        name,
        path,
        line,
        declared_in,
        transport,
        command,
        args,
        image=image if isinstance(image, str) else None,
        env=env,
    )

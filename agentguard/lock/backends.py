"""The resolver backends by name: uv (default) and pip-tools (imported only when asked for)."""

from __future__ import annotations

from collections.abc import Callable

from agentguard.lock.backend import Resolution, ResolveRequest, resolve_uv


def _resolve_pip_tools(req: ResolveRequest) -> Resolution:
    from agentguard.lock.pip_tools import resolve_pip_tools  # (only when asked for)

    return resolve_pip_tools(req)


BACKENDS: dict[str, Callable[[ResolveRequest], Resolution]] = {
    "uv": resolve_uv,
    "pip-tools": _resolve_pip_tools,
}

"""AG310 (MCP servers launched unpinned) and AG320 (silent model fallback): facts only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from agentguard import escape
from agentguard.facts.agents import AgentConfig, FallbackSite, McpServer, ProjectFacts
from agentguard.facts.mcp_pins import (
    DOCKER_VALUE_FLAGS as _DOCKER_VALUE_FLAGS,
)
from agentguard.facts.mcp_pins import (
    IMAGE,
    ServerLaunch,
    ServerLock,
    launch_of,
    pin_for,
    registry_launches,
)
from agentguard.facts.mcp_pins import (
    NODE_VALUE_FLAGS as _NODE_VALUE_FLAGS,
)
from agentguard.facts.values import Unknown, alternatives, describe, redact_text
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.agent_tools import McpServerUnpinned, SilentModelFallback
from agentguard.rules.agent_tools_checks import option_syntax
from agentguard.rules.mcp_pins import drift_findings

_NODE_LAUNCHERS = {"npx", "bunx", "pnpx"}
_NODE_SUBCOMMANDS = {("pnpm", "dlx"), ("yarn", "dlx"), ("npm", "exec"), ("bun", "x")}
_PY_LAUNCHERS = {"uvx"}
_PY_SUBCOMMANDS = {("uv", "tool"), ("pipx", "run")}
_CONTAINER = {"docker", "podman", "nerdctl"}
_UV_VALUE_FLAGS = {"--python", "-p", "--with", "--index", "--index-url", "--extra-index-url"}
_EXACT_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+.][0-9A-Za-z.-]+)?$")


def _base(command: str) -> str:
    return command.rsplit("/", 1)[-1].lower()


def _first_operand(args: Sequence[Any], value_flags: set[str]) -> tuple[Any, int]:
    i = 0
    while i < len(args):
        a = args[i]
        if isinstance(a, Unknown):
            return a, i
        if a.startswith("-"):
            i += 2 if a in value_flags else 1
            continue
        return a, i
    return None, i


def _npm_version(spec: str) -> str | None:
    at = spec.rfind("@")
    return spec[at + 1 :] if at > 0 else None


def _uv_pinned(spec: str) -> bool:
    if "==" in spec:
        return True
    at = spec.rfind("@")
    return at > 0 and spec[at + 1 :] != "latest" and bool(_EXACT_VERSION.match(spec[at + 1 :]))


def unpinned_reason(server: McpServer) -> tuple[str, str, str, Severity] | None:
    """(what is launched, why it is not pinned, the pinned form, severity), or None."""
    command = server.command
    args: Any = server.args
    if server.transport != "stdio" or command is None:
        return None
    if isinstance(command, Unknown):
        return ("a command", f"the command is {command.describe()}", "", Severity.LOW)
    if isinstance(args, Unknown):
        args = (args,)
    base = _base(str(command))
    rest = list(args)
    if base in ("pnpm", "yarn", "npm", "bun", "uv", "pipx") and rest:
        sub = rest[0] if isinstance(rest[0], str) else ""
        if (base, sub) in _NODE_SUBCOMMANDS:
            base, rest = "npx", rest[1:]
        elif (base, sub) in _PY_SUBCOMMANDS:
            rest = rest[1:]
            if base == "uv" and rest and rest[0] == "run":
                rest = rest[1:]
            base = "uvx"
    if base in _NODE_LAUNCHERS:
        spec, _ = _first_operand(rest, _NODE_VALUE_FLAGS)
        if isinstance(spec, Unknown) or spec is None:
            return ("an npm package", "the package could not be read", "", Severity.LOW)
        version = _npm_version(spec)
        if version is None:
            return (spec, "no version: the newest release is fetched on every start",
                    f"{spec}@<version>", Severity.HIGH)  # fmt: skip
        if version == "latest" or not _EXACT_VERSION.match(version):
            name = spec[: spec.rfind("@")]
            return (spec, f"`@{version}` is not an exact version", f"{name}@<version>",
                    Severity.HIGH)  # fmt: skip
        return None
    if base in _PY_LAUNCHERS:
        from_spec = None
        for i, a in enumerate(rest):
            if a == "--from" and i + 1 < len(rest):
                from_spec = rest[i + 1]
            elif isinstance(a, str) and a.startswith("--from="):
                from_spec = a.split("=", 1)[1]
        spec = from_spec
        if spec is None:
            spec, _ = _first_operand(rest, _UV_VALUE_FLAGS | {"--from"})
        if isinstance(spec, Unknown) or spec is None:
            return ("a Python package", "the package could not be read", "", Severity.LOW)
        if _uv_pinned(spec):
            return None
        name = re.split(r"[<>=!~@\[]", spec, maxsplit=1)[0]
        return (spec, "no exact version: the newest release is resolved on every start",
                f"{name}==<version>", Severity.HIGH)  # fmt: skip
    if base in _CONTAINER:
        if not rest or rest[0] != "run":
            return None
        image, _ = _first_operand(rest[1:], _DOCKER_VALUE_FLAGS)
        if isinstance(image, Unknown) or image is None:
            return ("an image", "the image could not be read", "", Severity.LOW)
        if "@sha256:" in image:
            return None
        repo, _, tag = image.rpartition(":") if ":" in image.rsplit("/", 1)[-1] else (image, "", "")
        if not tag or tag == "latest":
            return (image, "no tag or `latest`: whatever the registry serves today runs",
                    f"{repo or image}@sha256:<digest>", Severity.HIGH)  # fmt: skip
        return (image, f"tag `{tag}` can be moved; only a digest is fixed",
                f"{image}@sha256:<digest>", Severity.MEDIUM)  # fmt: skip
    return None


def _fix(server: McpServer, pinned: str, lock: ServerLock | None, project: bool) -> Fix:
    """What AG310 says to do: the version the MCP server lock holds and the command that
    pins it; without one, in a project, the command that resolves and writes it."""
    launch = launch_of(server)
    pin = (
        pin_for(launch, lock.pins)
        if lock is not None and isinstance(launch, ServerLaunch)
        else None
    )
    if pin is not None and isinstance(launch, ServerLaunch):
        command = redact_text(pin.pinned_command(launch.launcher, launch.extras))
        return Fix(
            f"Pin it: launch `{command}` (the version {lock.path if lock else ''} holds); "
            f"`agentguard lock --write-launch` writes it into {server.path}.",
            snippet=escape.snippet(command),
        )
    if not pinned:
        return Fix("Name the server's package with an exact version (or an image digest).")
    if project and isinstance(launch, ServerLaunch) and launch.kind != IMAGE:
        if server.path.endswith((".json", ".jsonc")):
            return Fix(
                f"Pin it: run `agentguard lock --write-launch`, which resolves the version the "
                f"launch gets today, records it in mcp.lock.json and launches `{pinned}` with "
                "it; then update it on purpose.",
                snippet="agentguard lock --write-launch",
            )
        # a launch in code, TOML or YAML: --write-launch lists it, it does not rewrite it
        return Fix(
            f"Pin it: run `agentguard lock`, which resolves the version the launch gets today "
            f"and records it in mcp.lock.json; then launch `{pinned}` with that version in "
            f"{server.path} and update it on purpose.",
            snippet=escape.snippet(pinned),
        )
    return Fix(
        f"Pin it: launch `{pinned}` (an exact version, or an image digest) and update it on "
        "purpose.",
        snippet=escape.snippet(pinned),
    )


def check_mcp_server(
    server: McpServer, lock: ServerLock | None = None, *, project: bool = True
) -> list[Finding]:
    """AG310. ``lock``: the project's MCP server lock; ``project``: the server is in a
    project folder (`agentguard lock` can pin it there), not in an image's files."""
    found = unpinned_reason(server)
    if found is None:
        return []
    what, why, pinned, severity = found
    what, pinned = redact_text(what), redact_text(pinned)
    return [
        McpServerUnpinned.finding(
            f"MCP server {server.name!r} ({server.declared_in}) launches {what}: {why}.",
            locations=[Location(path=server.path, line=server.line, note=server.declared_in)],
            fix=_fix(server, pinned, lock, project),
            evidence={
                "server": server.name,
                "argv": server.safe_argv()[:12],
                "declared_in": server.declared_in,
            },
            severity=severity,
            confidence=Confidence.LOW if severity is Severity.LOW else Confidence.HIGH,
        )
    ]


def check_server_lock(facts: ProjectFacts) -> list[Finding]:
    """AG142 where a project keeps an MCP server lock: a launch of another version than the
    locked one, a launch the lock does not hold, an entry whose launch is gone (an unpinned
    launch is AG310's, which names the locked version)."""
    if facts.server_lock is None:
        return []
    found, _ = registry_launches(facts.mcp_servers)
    lockable = [x for x in found if x.kind != IMAGE or x.digest]
    return drift_findings(lockable, facts.server_lock.pins, unpinned=False)


def check_fallback_option(cfg: AgentConfig) -> list[Finding]:
    opt = cfg.option("fallback_model")
    if opt is None:
        return []
    alts = alternatives(opt.value)
    set_alts = [a for a in alts if a is not None and a != ""]
    if not set_alts:
        return []
    certain = all(isinstance(a, str) for a in set_alts) and len(set_alts) == len(alts)
    # as written where the option is an action's input (`fallback_model:`)
    name = opt.expr.rstrip(":") if opt.expr.endswith(":") else option_syntax(cfg, "fallback_model")
    return [
        SilentModelFallback.finding(
            f"{cfg.engine} configuration sets `{name}` = {describe(opt.value)}: when the "
            "primary model fails or is overloaded, another model answers and the caller is "
            "not told.",
            locations=[Location(path=cfg.path, line=opt.line, note=cfg.label)],
            fix=Fix(
                "Leave a witness: drop the fallback, or log which model answered each request "
                "and why the primary failed."
            ),
            evidence={"engine": cfg.engine, "fallback_model": describe(opt.value)},
            confidence=Confidence.HIGH if certain else Confidence.LOW,
            ambiguous=cfg.ambiguous,
        )
    ]


def check_fallback_site(site: FallbackSite) -> list[Finding]:
    if site.witnessed:
        return []
    message = (
        f"{site.detail}: when the primary model fails, another model answers and the caller "
        "is not told."
        if site.kind == "framework-option"
        else f"{site.detail}, without logging or re-raising: the failure of the primary model "
        "is hidden behind another model's answer."
    )
    return [
        SilentModelFallback.finding(
            message,
            locations=[Location(path=site.path, line=site.line)],
            fix=Fix(
                "Leave a witness: log which model answered and why the primary failed "
                "(or re-raise).",
                snippet='log.warning("primary model failed (%s); answering with %s", exc, '
                "FALLBACK_MODEL)",
            ),
            evidence={"kind": site.kind, "detail": site.detail, "models": list(site.models)},
            confidence=Confidence.MEDIUM if site.certain else Confidence.LOW,
        )
    ]

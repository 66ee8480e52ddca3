"""AG310 (MCP servers launched unpinned) and AG320 (silent model fallback): facts only."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from agentguard import escape
from agentguard.facts.agents import AgentConfig, FallbackSite, McpServer, ProjectFacts
from agentguard.facts.launch_argv import parse_launch, registry_said
from agentguard.facts.mcp_pins import (
    IMAGE,
    NPM,
    REWRITABLE_SUFFIXES,
    ServerLaunch,
    ServerLock,
    launch_of,
    pin_for,
    registry_launches,
)
from agentguard.facts.values import Unknown, alternatives, describe, redact_text
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.agent_tools import McpServerUnpinned, SilentModelFallback
from agentguard.rules.agent_tools_checks import option_syntax
from agentguard.rules.mcp_pins import drift_findings

_EXACT_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+.][0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class _Reason:
    what: str  # what is launched
    why: str  # why it is not (verifiably) pinned
    pinned: str  # the pinned form ("" when there is none to name)
    severity: Severity
    fix: str | None = None  # what to do, when it is not "pin the version"


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
    got = _reason(server)
    return None if got is None else (got.what, got.why, got.pinned, got.severity)


def _reason(server: McpServer) -> _Reason | None:
    command = server.command
    args: Any = server.args
    if server.transport != "stdio" or command is None:
        return None
    if isinstance(command, Unknown):
        return _Reason("a command", f"the command is {command.describe()}", "", Severity.LOW)
    if isinstance(args, Unknown):
        args = (args,)
    line = parse_launch(command, tuple(args), server.env, server.registries)
    if line is None:
        return None
    noun = {NPM: "an npm package", IMAGE: "an image"}.get(line.kind, "a Python package")
    if line.problem is not None:
        return _Reason(
            f"{noun} through `{line.launcher}`",
            f"{line.problem}, so which package it runs cannot be told: it is not verifiably pinned",
            "",
            Severity.HIGH,
            f"Launch the package with the launcher's plain options only (`{line.launcher}` "
            "then an exact version; an image by digest), so that what it runs can be checked.",
        )
    if line.registry is not None:
        return _Reason(
            f"{noun} through `{line.launcher}`",
            f"{registry_said(line.registry)} makes it fetch from a registry, index or package "
            "cache the project chooses, not from the default registry",
            "",
            Severity.HIGH,
            f"Launch from the default registry: drop {registry_said(line.registry)} (from the "
            "launch, its `env` or the project's files); a private registry or index belongs in "
            "CI's own configuration.",
        )
    main = line.text(args, line.spec_at) if line.spec_at is not None else None
    if main is None or isinstance(main, Unknown):
        return _Reason(noun, f"the {noun.split()[-1]} could not be read", "", Severity.LOW)
    found = _spec_reason(line.kind, main)
    for at in line.more:  # the package first; then every further one must be pinned too
        extra = line.text(args, at)
        if found is not None:
            break
        if not isinstance(extra, str):
            return _Reason(noun, f"a further {noun.split()[-1]} could not be read", "",
                           Severity.LOW)  # fmt: skip
        found = _spec_reason(line.kind, extra)
    if found is not None and line.kind == IMAGE and server.pulled_digests:
        return _pulled_first(server, found)
    if found is not None and line.more:  # the lock records one package per launch
        fix = (
            f"Pin it: launch `{found.pinned}` and give every further package of the launch an "
            "exact version too (`agentguard lock` records one package per launch, so it does "
            "not lock this one); then update them on purpose."
        )
        return dataclasses.replace(found, fix=fix)
    return found


def _pulled_first(server: McpServer, found: _Reason) -> _Reason:
    """A gateway container run by name that the same file also names by digest (gh-aw's
    compiled workflows pull each one so before the gateway starts): which image runs
    depends on whether that pull leaves the name on the digest, which the pulling script
    decides and the repository does not hold. Low, and it says so."""
    lines: dict[str, list[int]] = {}
    for ref, at in server.pulled_digests:
        lines.setdefault(ref, []).append(at)
    named = "; ".join(
        f"`{ref}` (line{'s' if len(ats) > 1 else ''} {', '.join(map(str, ats[:5]))})"
        for ref, ats in list(lines.items())[:3]
    )
    pinned = server.pulled_digests[0][0]
    return _Reason(
        found.what,
        f"{found.why.split(':')[0]}; the same file names this image by digest, {named}, "
        "but the gateway runs it by name, so whether that digest is what runs depends on "
        "the step that pulls it",
        pinned,
        Severity.LOW,
        f"Name the digest in the server entry itself (`{pinned}`), so what runs does not "
        "depend on how an earlier step tagged its pull.",
    )


def _spec_reason(kind: str, spec: str) -> _Reason | None:
    if kind == NPM:
        version = _npm_version(spec)
        if version is None:
            return _Reason(spec, "no version: the newest release is fetched on every start",
                           f"{spec}@<version>", Severity.HIGH)  # fmt: skip
        if version == "latest" or not _EXACT_VERSION.match(version):
            name = spec[: spec.rfind("@")]
            return _Reason(spec, f"`@{version}` is not an exact version", f"{name}@<version>",
                           Severity.HIGH)  # fmt: skip
        return None
    if kind == IMAGE:
        if "@sha256:" in spec:
            return None
        repo, _, tag = spec.rpartition(":") if ":" in spec.rsplit("/", 1)[-1] else (spec, "", "")
        if not tag or tag == "latest":
            return _Reason(spec, "no tag or `latest`: whatever the registry serves today runs",
                           f"{repo or spec}@sha256:<digest>", Severity.HIGH)  # fmt: skip
        return _Reason(spec, f"tag `{tag}` can be moved; only a digest is fixed",
                       f"{spec}@sha256:<digest>", Severity.MEDIUM)  # fmt: skip
    if _uv_pinned(spec):
        return None
    name = re.split(r"[<>=!~@\[]", spec, maxsplit=1)[0]
    return _Reason(spec, "no exact version: the newest release is resolved on every start",
                   f"{name}==<version>", Severity.HIGH)  # fmt: skip


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
        if server.path.endswith(REWRITABLE_SUFFIXES):
            return Fix(
                f"Pin it: run `agentguard lock --write-launch`, which resolves the version the "
                f"launch gets today, records it in mcp.lock.json and launches `{pinned}` with "
                "it; then update it on purpose.",
                snippet="agentguard lock --write-launch",
            )
        # a launch in a file --write-launch does not edit: it lists it, with the pin
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
    found = _reason(server)
    if found is None:
        return []
    what, why, severity = redact_text(found.what), redact_text(found.why), found.severity
    pinned = redact_text(found.pinned)
    fix = Fix(redact_text(found.fix)) if found.fix else _fix(server, pinned, lock, project)
    return [
        McpServerUnpinned.finding(
            f"MCP server {server.name!r} ({server.declared_in}) launches {what}: {why}.",
            locations=[Location(path=server.path, line=server.line, note=server.declared_in)],
            fix=fix,
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

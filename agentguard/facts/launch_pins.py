"""Whether an MCP server's launch pins what it runs (an npm or Python package at an exact
version, an image by digest), and if not, why: read from the launch as written. Shared by
the capability model (``McpLink.pinned``) and AG310; no I/O."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from typing import Any

from agentguard.facts.agents import McpServer
from agentguard.facts.launch_argv import parse_launch, registry_said
from agentguard.facts.mcp_pins import IMAGE, NPM
from agentguard.facts.values import Unknown
from agentguard.findings import Severity

_EXACT_VERSION = re.compile(r"^v?\d+(\.\d+)*([-+.][0-9A-Za-z.-]+)?$")


@dataclass(frozen=True)
class Unpinned:
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
    got = unpinned(server)
    return None if got is None else (got.what, got.why, got.pinned, got.severity)


def unpinned(server: McpServer) -> Unpinned | None:
    """Why a stdio launch does not (verifiably) pin what it runs, or None: pinned, or not a
    launch of a package or an image."""
    command = server.command
    args: Any = server.args
    if server.transport != "stdio" or command is None:
        return None
    if isinstance(command, Unknown):
        return Unpinned("a command", f"the command is {command.describe()}", "", Severity.LOW)
    if isinstance(args, Unknown):
        args = (args,)
    line = parse_launch(command, tuple(args), server.env, server.registries)
    if line is None:
        return None
    noun = {NPM: "an npm package", IMAGE: "an image"}.get(line.kind, "a Python package")
    if line.problem is not None:
        return Unpinned(
            f"{noun} through `{line.launcher}`",
            f"{line.problem}, so which package it runs cannot be told: it is not verifiably pinned",
            "",
            Severity.HIGH,
            f"Launch the package with the launcher's plain options only (`{line.launcher}` "
            "then an exact version; an image by digest), so that what it runs can be checked.",
        )
    if line.registry is not None:
        return Unpinned(
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
        return Unpinned(noun, f"the {noun.split()[-1]} could not be read", "", Severity.LOW)
    found = _spec_reason(line.kind, main)
    for at in line.more:  # the package first; then every further one must be pinned too
        extra = line.text(args, at)
        if found is not None:
            break
        if not isinstance(extra, str):
            return Unpinned(noun, f"a further {noun.split()[-1]} could not be read", "",
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


def _pulled_first(server: McpServer, found: Unpinned) -> Unpinned:
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
    return Unpinned(
        found.what,
        f"{found.why.split(':')[0]}; the same file names this image by digest, {named}, "
        "but the gateway runs it by name, so whether that digest is what runs depends on "
        "the step that pulls it",
        pinned,
        Severity.LOW,
        f"Name the digest in the server entry itself (`{pinned}`), so what runs does not "
        "depend on how an earlier step tagged its pull.",
    )


def _spec_reason(kind: str, spec: str) -> Unpinned | None:
    if kind == NPM:
        version = _npm_version(spec)
        if version is None:
            return Unpinned(spec, "no version: the newest release is fetched on every start",
                           f"{spec}@<version>", Severity.HIGH)  # fmt: skip
        if version == "latest" or not _EXACT_VERSION.match(version):
            name = spec[: spec.rfind("@")]
            return Unpinned(spec, f"`@{version}` is not an exact version", f"{name}@<version>",
                           Severity.HIGH)  # fmt: skip
        return None
    if kind == IMAGE:
        if "@sha256:" in spec:
            return None
        repo, _, tag = spec.rpartition(":") if ":" in spec.rsplit("/", 1)[-1] else (spec, "", "")
        if not tag or tag == "latest":
            return Unpinned(spec, "no tag or `latest`: whatever the registry serves today runs",
                           f"{repo or spec}@sha256:<digest>", Severity.HIGH)  # fmt: skip
        return Unpinned(spec, f"tag `{tag}` can be moved; only a digest is fixed",
                       f"{spec}@sha256:<digest>", Severity.MEDIUM)  # fmt: skip
    if _uv_pinned(spec):
        return None
    name = re.split(r"[<>=!~@\[]", spec, maxsplit=1)[0]
    return Unpinned(spec, "no exact version: the newest release is resolved on every start",
                   f"{name}==<version>", Severity.HIGH)  # fmt: skip

"""AG140-AG143: the MCP servers a project launches, against the MCP server lock
(``mcp.lock.json``): facts in, findings out, no I/O. A launch that drifted from the lock
or that it cannot check (AG142's findings) is judged in :mod:`.mcp_drift`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentguard import escape
from agentguard.facts.mcp_pins import (
    IMAGE,
    NPM,
    ServerLaunch,
    ServerPin,
    major_of,
)
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.redact import text as redact_text
from agentguard.rules.base import Rule, register

LOCK_NAME = "mcp.lock.json"
WRITE_LAUNCH = "agentguard lock --write-launch"


@register
class ServerRangeSpansMajors(Rule):
    """An MCP server launch admits more than one released major of its package.

    ## What it does
    `agentguard lock` resolves every MCP server the project launches from a registry
    (`npx`/`pnpm dlx`/`bunx` from the npm registry, `uvx`/`pipx run` from the package
    index) and compares what the launch asks for (no version, a tag such as `latest`, a
    range such as `^1 || ^2` or `>=1.0`) with the package's released versions. A request
    that versions of two or more majors satisfy (before 1.0 each minor counts as a major)
    is reported with the launch (file:line), the majors and the version locked.

    ## Why is this bad?
    The server runs with the agent's access, and which major starts depends on the day:
    a launcher fetches the newest release the request admits on every start. A new major
    is a new API (and mcp 2.0 broke servers launched unbounded overnight).

    ## Example
    ```json
    {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}
    ```

    ## Use instead
    Launch the version the lock holds (`agentguard lock --write-launch` writes it):
    ```json
    {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp@2.0.1"]}}}
    ```
    """

    id = "AG140"
    name = "mcp-server-range-spans-majors"
    title = "MCP server launch admits more than one released major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class ServerMajorCrossedOnRelock(Rule):
    """A re-lock would move an MCP server to another major.

    ## What it does
    When `mcp.lock.json` exists, `agentguard lock` compares each server's new version with
    the locked one; a change of major (or of `0.minor` before 1.0) stops the MCP server
    lock: `mcp.lock.json` is left byte for byte as it was, and the finding names the
    launch, the old and new versions and the command that lets the move through. A
    version still admitted by the launch is kept on a re-lock (no move at all) unless
    `--upgrade` or `--upgrade-package NAME` asks for one.

    ## Why is this bad?
    A new major of a server is a new set of tools, arguments and behaviour running with
    the agent's access; it needs review, not a routine re-lock.

    ## Example
    `agentguard lock --upgrade` where `mcp.lock.json` holds `@acme/tracker-mcp` 1.4.2 and
    the launch (no version) now gets 2.0.1.

    ## Use instead
    Review the new major, then `agentguard lock --allow-major @acme/tracker-mcp`; or stay
    on the locked major: launch `@acme/tracker-mcp@^1`.
    """

    id = "AG141"
    name = "mcp-server-major-crossed-on-relock"
    title = "Re-lock would move an MCP server across a major"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class ServerLaunchDrifts(Rule):
    """An MCP server launch does not match the MCP server lock.

    ## What it does
    `agentguard lock --check` (offline) compares every MCP server launch in the project's
    configurations with `mcp.lock.json`: a launch that names another version than the
    locked one, that is not pinned (no version, a tag, a range) while the lock holds a
    version for it, that the lock does not hold, or an image whose digest differs; and a
    lock entry whose launch is gone. A launch the lock cannot check is reported by `lock`
    and `lock --check` alike, and never pinned or rewritten: an option of the launcher
    agentguard does not read, a registry, index or package cache the project chooses (a
    flag, the server's `env`, the project's `.npmrc`/`uv.toml`), or more than one package.

    ## Why is this bad?
    The lock records what was reviewed; a launch that does not name it starts something
    else (whatever the registry serves that minute, or an edit nobody locked).

    ## Example
    `mcp.lock.json` holds `@acme/tracker-mcp` 2.0.1; `.mcp.json` launches
    `npx -y @acme/tracker-mcp` (edited back to unpinned).

    ## Use instead
    Launch the locked version (`agentguard lock --write-launch` rewrites the launch), or
    re-lock after a deliberate change (`agentguard lock`).
    """

    id = "AG142"
    name = "mcp-launch-drifts-from-lock"
    title = "MCP server launch does not match the MCP server lock"
    default_severity = Severity.HIGH
    family = "dependencies"


@register
class ServerImageByTag(Rule):
    """An MCP server image is launched by tag, not by digest.

    ## What it does
    Reports `docker run` (podman, nerdctl) launches of MCP servers whose image reference
    carries no `@sha256:` digest. The lock records images by digest only: a tag is not
    resolved (no container registry is read), so the launch cannot be locked.

    ## Why is this bad?
    A tag can be moved to another image at any time; `latest` (or no tag) is whatever
    was pushed last. The server runs with the agent's access.

    ## Example
    ```json
    {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/acme/tracker:1.4"]}
    ```

    ## Use instead
    Launch the image by digest (`docker buildx imagetools inspect IMAGE` prints it):
    `ghcr.io/acme/tracker:1.4@sha256:<digest>`; then `agentguard lock` records it.
    """

    id = "AG143"
    name = "mcp-server-image-by-tag"
    title = "MCP server image launched by tag"
    default_severity = Severity.MEDIUM
    family = "dependencies"


def launch_site(path: str, line: int, server: str) -> list[Location]:
    return [Location(path=path, line=line, note=f"MCP server {server!r}")]


def launch_shown(launch: ServerLaunch) -> str:
    return redact_text(launch.spec)


def span_findings(
    items: Iterable[tuple[ServerLaunch, ServerPin, ServerPin | None]],
) -> list[Finding]:
    """(launch, what it resolves to today, what the lock holds after the run: the same pin
    when it was written, the previous one when the lock was left as it was, or None)."""
    out = []
    for launch, pin, held in items:
        if len(pin.majors) < 2:
            continue
        if launch.requested:
            asks = f"`@{launch.requested}`" if pin.kind == NPM else f"`{launch.requested}`"
        else:
            asks = "no version"
        if held is pin:
            holds = f"the lock holds {pin.version}"
        elif held is not None:
            holds = f"the lock still holds {held.version} ({pin.version}, resolved today, was not locked)"
        else:
            holds = f"{pin.version}, resolved today, was not locked"
        pinned = (held or pin).pinned_command(launch.launcher, launch.extras)
        out.append(
            ServerRangeSpansMajors.finding(
                f"MCP server {launch.server!r} launches `{launch_shown(launch)}` ({asks}): it admits "
                f"the released majors {', '.join(pin.majors)}; {holds}.",
                locations=launch_site(launch.path, launch.line, launch.server),
                fix=Fix(
                    f"Launch the locked version: `{pinned}` (`{WRITE_LAUNCH}` rewrites the "
                    "launch), and move it on purpose."
                    if held is not None
                    else f"Pin the launch to one version (`{pinned}` is today's), lock it "
                    f"(`{WRITE_LAUNCH}`), and move it on purpose.",
                    snippet=escape.snippet(pinned),
                ),
                evidence={
                    "server": launch.server,
                    "kind": pin.kind,
                    "package": pin.package,
                    "requested": launch.requested,
                    "majors": list(pin.majors),
                    "locked": held.version if held is not None else None,
                },
            )
        )
    return out


def crossing_findings(
    pairs: Iterable[tuple[ServerLaunch, ServerPin, ServerPin]], allowed: Sequence[str]
) -> list[Finding]:
    """(launch, previous pin, new pin) whose major differs, unless ``allowed``."""
    out = []
    for launch, old, new in pairs:
        was, now = major_of(old.version), major_of(new.version)
        if old.kind == IMAGE or was == now or was is None or now is None:
            continue
        if new.package in allowed or new.package.lower() in allowed:
            continue
        stay = f"{new.package}@^{was}" if new.kind == NPM else f"{new.package}=={was}.*"
        out.append(
            ServerMajorCrossedOnRelock.finding(
                f"A re-lock would move MCP server {launch.server!r} (`{new.package}`) from "
                f"{old.version} to {new.version} (major {was} -> {now}); {LOCK_NAME} was "
                "left as it was.",
                locations=launch_site(launch.path, launch.line, launch.server),
                fix=Fix(
                    f"Review {new.package} {now}, then run `agentguard lock --allow-major "
                    f"{new.package}`; or stay on the locked major: launch `{stay}`.",
                    snippet=escape.snippet(f"agentguard lock --allow-major {new.package}"),
                ),
                evidence={
                    "server": launch.server,
                    "package": new.package,
                    "old": old.version,
                    "new": new.version,
                },
            )
        )
    return out


def image_findings(launches: Iterable[ServerLaunch]) -> list[Finding]:
    out = []
    for launch in launches:
        if launch.kind != IMAGE or launch.digest is not None:
            continue
        moving = launch.requested in (None, "latest")
        if launch.pulled:  # the same file names it by digest: low, and that digest cited
            ref, at = launch.pulled[0]
            out.append(
                ServerImageByTag.finding(
                    f"MCP server {launch.server!r} launches the image `{launch_shown(launch)}` by "
                    + ("no tag or `latest`" if moving else f"the tag `{launch.requested}`")
                    + f"; the same file names it by digest (`{ref}`, line {at}), but the "
                    "launch runs it by name, so whether that digest runs depends on the step "
                    "that pulls it, and the lock records images by digest only.",
                    locations=launch_site(launch.path, launch.line, launch.server),
                    fix=Fix(f"Launch it by digest: `{ref}`; then `agentguard lock` records it."),
                    evidence={"server": launch.server, "image": launch_shown(launch), "named": ref},
                    severity=Severity.LOW,
                )
            )
            continue
        out.append(
            ServerImageByTag.finding(
                f"MCP server {launch.server!r} launches the image `{launch_shown(launch)}` by "
                + ("no tag or `latest`" if moving else f"the tag `{launch.requested}`")
                + ": a tag can be moved, and the lock records images by digest only.",
                locations=launch_site(launch.path, launch.line, launch.server),
                fix=Fix(
                    f"Launch it by digest: `{launch_shown(launch)}@sha256:<digest>` (`docker buildx "
                    "imagetools inspect` prints it); then `agentguard lock` records it."
                ),
                evidence={"server": launch.server, "image": launch_shown(launch)},
                severity=Severity.HIGH if moving else Severity.MEDIUM,
            )
        )
    return out

"""AG142: an MCP server launch that drifted from ``mcp.lock.json`` (not the version, image or
arguments the lock pinned), or that the lock cannot check at all; facts in, findings out,
no I/O (the rule and the other AG14x judgements: :mod:`.mcp_pins`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from agentguard import escape
from agentguard.facts.mcp_pins import (
    IMAGE,
    NPM,
    OTHER_REGISTRY,
    ServerLaunch,
    ServerPin,
    Unreadable,
)
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.redact import text as redact_text
from agentguard.rules.mcp_pins import (
    LOCK_NAME,
    WRITE_LAUNCH,
    ServerLaunchDrifts,
    launch_shown,
    launch_site,
)


def _exact(launch: ServerLaunch) -> str | None:
    """The one version (an image: the digest) the launch names, or None: it is not pinned
    at all (a range, a tag, nothing)."""
    if launch.kind == IMAGE:
        return launch.digest
    req = launch.requested
    if req is None or (launch.kind != NPM and not req.startswith("==")):
        return None
    exact = req.lstrip("=v") if launch.kind == NPM else req.removeprefix("===").removeprefix("==")
    if not exact or any(c in exact for c in "<>^~*|, ") or exact.lower().startswith("x"):
        return None
    if launch.kind == NPM and not exact[0].isdigit():
        return None  # a tag
    return exact


def _matches(launch: ServerLaunch, pin: ServerPin) -> bool | None:
    """True: the launch names exactly the locked version; False: another one; None: it
    is not pinned at all."""
    exact = _exact(launch)
    return None if exact is None else exact == pin.version


def drift_findings(
    launches: Sequence[ServerLaunch], pins: Sequence[ServerPin], *, unpinned: bool = True
) -> list[Finding]:
    """AG142 for each launch that does not match its pin (``unpinned``: also for a launch
    not pinned at all, which `lock --check` reports and AG310 does elsewhere)."""
    out: list[Finding] = []
    used: set[int] = set()
    for launch in launches:
        candidates = [i for i, p in enumerate(pins) if p.key == launch.key]
        if not unpinned and _exact(launch) is None:
            used.update(candidates)  # AG310's: it names the locked version
            continue
        if len(candidates) > 1:  # never take the first: the line decides, or nothing does
            candidates = [i for i in candidates if pins[i].line == launch.line]
        if len(candidates) != 1:
            out.append(_unlocked(launch, ambiguous=len(candidates) > 1))
            continue
        used.add(candidates[0])
        pin = pins[candidates[0]]
        verdict = _matches(launch, pin)
        if verdict is True or (verdict is None and not unpinned):
            continue
        pinned = pin.pinned_command(launch.launcher, launch.extras)
        said = "names another version than" if verdict is False else "is not pinned to"
        out.append(
            ServerLaunchDrifts.finding(
                f"MCP server {launch.server!r} launches `{launch_shown(launch)}`, which {said} the "
                f"locked {pin.package} {pin.version}.",
                locations=launch_site(launch.path, launch.line, launch.server),
                fix=Fix(
                    f"Launch the locked version: `{pinned}` (`{WRITE_LAUNCH}` writes it: a "
                    "re-lock keeps the locked version while the launch admits it).",
                    snippet=escape.snippet(pinned),
                )
                if verdict is None
                else Fix(
                    f"Launch the locked version again: `{pinned}`; or, if the change is "
                    "deliberate, re-lock (`agentguard lock`, with `--allow-major "
                    f"{pin.package}` for another major) so that the lock holds what the "
                    "launch names.",
                    snippet=escape.snippet(pinned),
                ),
                evidence={
                    "server": launch.server,
                    "package": pin.package,
                    "launch": launch_shown(launch),
                    "locked": pin.version,
                },
            )
        )
    launched = {launch.key for launch in launches}
    for i, pin in enumerate(pins):
        if i not in used and pin.key not in launched:
            out.append(
                ServerLaunchDrifts.finding(
                    f"{LOCK_NAME} holds {pin.package} {pin.version} for MCP server "
                    f"{pin.server!r} ({pin.path}:{pin.line}), which the project no longer "
                    "launches.",
                    locations=[Location(path=LOCK_NAME, note=f"MCP server {pin.server!r}")],
                    fix=Fix("Re-lock (`agentguard lock`) to drop the entry."),
                    evidence={"server": pin.server, "package": pin.package},
                    severity=Severity.LOW,
                )
            )
    return out


def _unlocked(launch: ServerLaunch, *, ambiguous: bool) -> Finding:
    why = (
        "the lock holds several entries for it and none on its line"
        if ambiguous
        else f"{LOCK_NAME} holds no entry for it"
    )
    return ServerLaunchDrifts.finding(
        f"MCP server {launch.server!r} launches `{launch_shown(launch)}`, and {why}.",
        locations=launch_site(launch.path, launch.line, launch.server),
        fix=Fix(f"Lock it: run `agentguard lock` (and `{WRITE_LAUNCH}` to pin the launch)."),
        evidence={
            "server": launch.server,
            "package": launch.package,
            "launch": launch_shown(launch),
        },
        confidence=Confidence.MEDIUM if ambiguous else Confidence.HIGH,
    )


def unverified_findings(unread: Iterable[Unreadable]) -> list[Finding]:
    """AG142 for each launch the lock cannot check: a line the parser cannot read (an
    option it does not know), another registry or index (the project's choice), more than
    one package. Never pinned, never rewritten: what it runs is unknown to the lock."""
    out = []
    for u in unread:
        if not u.unverified:
            continue
        fix = (
            "Launch from the default registry: drop the registry or index setting from the "
            "launch and the project's files (a private one belongs in CI's own configuration), "
            f"then `agentguard lock` and `{WRITE_LAUNCH}`."
            if u.code == OTHER_REGISTRY
            else f"Launch one package with `{u.launcher}`'s plain options (an exact version; "
            f"an image by digest), then `agentguard lock` and `{WRITE_LAUNCH}`."
        )
        out.append(
            ServerLaunchDrifts.finding(
                f"MCP server {u.server!r} is launched through `{u.launcher}`, which the lock "
                f"cannot check: {redact_text(u.why)}; it is not locked and not verifiably "
                "pinned.",
                locations=launch_site(u.path, u.line, u.server),
                fix=Fix(fix),
                evidence={"server": u.server, "launcher": u.launcher, "why": u.code},
            )
        )
    return out

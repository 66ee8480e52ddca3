"""What a devcontainer's features and lifecycle scripts do to the container: the
``docker-in-docker`` feature runs it privileged (AG403); ``chmod 666`` on the engine's
socket in a lifecycle command or a script it runs hands the socket to every user (AG203).
One socket reached through a feature and through the devcontainer's compose file is one
AG203 with both places as evidence (:func:`merge_socket_findings`). Pure: facts in."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Sequence

from agentguard.facts.devcontainer import DevcontainerFacts
from agentguard.findings import Finding, Fix, Location
from agentguard.rules.hardening import PrivilegedContainer
from agentguard.rules.mounts import DockerSocketExposed

# Features whose install script starts a Docker engine inside the container: the feature
# declares `"privileged": true`, which the tools apply to the container.
PRIVILEGED_FEATURES = ("docker-in-docker",)
_SOCKET_CHMOD = re.compile(
    r"\bchmod\s+(?:-\S+\s+)*"
    # a mode that lets others write: 666, 0777, a+rw, o+w, +w
    r"(?:[0-7]?[0-7]{2}[2367]|[ugo]*[ao]?[ugo]*[+=][rwxXst]*w[rwxXst]*)"
    r"\s+(?P<path>\S*(?:docker|containerd|podman)[\w.-]*\.sock)\b"
)


def check_privileged_features(dc: DevcontainerFacts) -> list[Finding]:
    """AG403 for a feature that makes the container privileged."""
    out: list[Finding] = []
    for feat in dc.features:
        name = feat.value or ""
        if not any(f"/{p}" in name or name.startswith(p) for p in PRIVILEGED_FEATURES):
            continue
        out.append(
            PrivilegedContainer.finding(
                f"devcontainer {dc.path}: the feature {name} runs the container privileged (it "
                "starts its own Docker engine inside): every capability and every host device.",
                locations=[Location(path=dc.path, line=feat.line, note=f"feature {name}")],
                fix=Fix(
                    f"Remove the feature {name}; if the task must build or run containers, give "
                    "it a rootless engine (rootless Docker or Podman) or a remote builder, not a "
                    "privileged container and not the host's socket."
                ),
                evidence={
                    "subject": f"devcontainer {dc.path}",
                    "feature": name,
                    "privileged": True,
                },
            )
        )
    return out


def _chmods(dc: DevcontainerFacts) -> list[tuple[Location, str, str]]:
    """(where, the command, the lifecycle key) of each chmod that opens a socket."""
    found: list[tuple[Location, str, str]] = []
    for key, script, line in dc.commands:
        for m in _SOCKET_CHMOD.finditer(script):
            found.append((Location(path=dc.path, line=line, note=key), m.group(0), key))
    for key, path, text in dc.scripts:
        for m in _SOCKET_CHMOD.finditer(text):
            at = text.count("\n", 0, m.start()) + 1
            found.append((Location(path=path, line=at, note=f"run by {key}"), m.group(0), key))
    return found


def check_socket_chmod(dc: DevcontainerFacts, socket_findings: Sequence[Finding]) -> list[Finding]:
    """AG203 for `chmod 666 /var/run/docker.sock` in a lifecycle command: joined to the
    socket's own finding when the devcontainer mounts it (one socket, one finding)."""
    chmods = _chmods(dc)
    if not chmods:
        return list(socket_findings)
    said = "; ".join(f"`{cmd}` ({key})" for _, cmd, key in chmods)
    if socket_findings:
        first, *rest = socket_findings
        joined = dataclasses.replace(
            first,
            message=f"{first.message} {said} makes it writable by every user in the container.",
            locations=(*first.locations, *(loc for loc, _, _ in chmods)),
            evidence={**first.evidence, "opened_by": [cmd for _, cmd, _ in chmods]},
        )
        return [joined, *rest]
    return [
        DockerSocketExposed.finding(
            f"devcontainer {dc.path} opens the Docker socket to every user in the container: "
            f"{said}; whoever reaches the socket is root on the host.",
            locations=[loc for loc, _, _ in chmods],
            fix=Fix(
                "Remove the chmod and the socket; if the task must run containers, give it a "
                "rootless engine or an API proxy that allows only the calls it needs."
            ),
            evidence={"subject": f"devcontainer {dc.path}", "opened_by": [c for _, c, _ in chmods]},
        )
    ]


def _listed(value: object) -> list[object]:
    return list(value) if isinstance(value, list) else []


def merge_socket_findings(
    findings: list[Finding], devcontainers: Sequence[DevcontainerFacts]
) -> list[Finding]:
    """One AG203 for a socket a devcontainer's feature mounts into the service its compose
    file also mounts it into: the compose file's finding, with the feature as evidence."""
    out = list(findings)
    for dc in devcontainers:
        if not dc.compose_files:
            continue
        folder = posixpath.dirname(dc.path)
        composes = {posixpath.normpath(posixpath.join(folder, c)) for c in dc.compose_files}
        feature = [
            f for f in out
            if f.rule_id == "AG203" and f.locations and f.locations[0].path == dc.path
            and (f.locations[0].note or "").startswith("feature ")
        ]  # fmt: skip
        service = f"compose service {dc.service} " if dc.service else "compose service "
        mounted = [
            f for f in out
            if f.rule_id == "AG203" and f.locations and f.locations[0].path in composes
            and f.message.startswith(service)
        ]  # fmt: skip
        if not feature or not mounted:
            continue
        target = mounted[0]
        opened = [str(c) for f in feature for c in _listed(f.evidence.get("opened_by"))]
        also = (
            f" {'; '.join(f'`{c}`' for c in opened)} makes it writable by every user in the "
            "container."
            if opened
            else ""
        )
        merged = dataclasses.replace(
            target,
            message=f"{target.message} The devcontainer's feature mounts the same socket.{also}",
            locations=(*target.locations, *(loc for f in feature for loc in f.locations)),
            evidence={
                **target.evidence,
                "also_mounted_by": [dc.path],
                **({"opened_by": opened} if opened else {}),
            },
        )
        out = [merged if f is target else f for f in out if f not in feature]
    return out

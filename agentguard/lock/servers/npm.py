"""An npm server launch resolved from the npm registry: the packument (capped, same-origin
only, parsed as data), the version the launch gets, its ``dist.integrity`` checked against
the tarball the registry names, and the released majors its request admits.

What a registry sends is data: a body over its cap, a redirect to another origin, an answer
that is not a packument of the package asked for, an integrity that is no sha512 or that
the tarball does not hash to: each is a failed source, never a pin."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import urllib.parse
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentguard.facts.mcp_pins import NPM, ServerLaunch, ServerPin
from agentguard.facts.npm_trust import ABSENT, UNCHECKED, ProvenanceCheck
from agentguard.lock.deadline import Deadline
from agentguard.lock.http import Http
from agentguard.lock.pages import IndexError_
from agentguard.lock.servers import attestations, npm_signature, semver, sigstore_parts
from agentguard.lock.servers.npm_run import machine_path
from agentguard.lock.servers.trust_roots import TrustRoots, bundled
from agentguard.lock.urls import UrlPolicy, clean_url, configured_hosts, origin
from agentguard.scratch import scratch_folder

MAX_PACKUMENT_BYTES = 16 * 1024 * 1024  # the abbreviated packument of a long-lived package
MAX_TARBALL_BYTES = 64 * 1024 * 1024
MAX_ATTESTATIONS_BYTES = 4 * 1024 * 1024  # two Sigstore bundles are ~20 KB
_ACCEPT = "application/vnd.npm.install-v1+json; q=1.0, application/json; q=0.8"
_INTEGRITY = re.compile(r"^sha512-([A-Za-z0-9+/]{86}==)\Z")
# (`\Z`: a registry's "1.2.3\n" is no version, though `$` would take it)
_CANONICAL = re.compile(r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]{1,64})?\Z")
_TAG = re.compile(r"^[A-Za-z][A-Za-z0-9._-]{0,63}\Z")


class NpmError(Exception):
    def __init__(self, message: str, code: str, retryable: bool = False) -> None:
        super().__init__(message)
        self.code = code
        self.retryable = retryable


@dataclass(frozen=True)
class SameOrigin(UrlPolicy):
    """Redirects and tarballs on the registry's own origin only (or a host named in
    ``AGENTGUARD_INDEX_HOSTS``): a registry never sends agentguard anywhere else."""

    def refusal(self, url: str, came_from: str) -> str | None:
        target = origin(url)
        if target is None:
            return "names a URL that is not http(s)"
        if target in self.index_origins or target[1] in self.extra_hosts:
            return None
        return f"names another origin ({target[0]}://{target[1]}:{target[2]})"


def default_registry(deadline: Deadline, project: Path | None = None) -> str | None:
    """The registry npm itself uses (asked from npm, run in an empty folder so that no
    ``.npmrc`` of the project under review is read); None when npm is not installed. The
    machine's npm and node (:func:`.npm_run.machine_path`), never ``project``'s."""
    path = machine_path(project)
    npm = shutil.which("npm", path=path)
    if npm is None:
        return None
    with scratch_folder("agentguard-npm-") as tmp:
        # npm takes the nearest folder above it with a `package.json` for the project and
        # reads that folder's `.npmrc`: the scratch folder's parents (`/tmp`) any local user
        # can write. A `package.json` here makes the scratch folder that project.
        (tmp / "package.json").write_text("{}\n", encoding="utf-8")
        try:
            proc = subprocess.run(
                [npm, "config", "get", "registry"],
                cwd=tmp,
                env={**os.environ, "PATH": path},
                capture_output=True,
                text=True,
                timeout=deadline.bound(30),
                check=False,
                stdin=subprocess.DEVNULL,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
    url = proc.stdout.strip()
    return url if proc.returncode == 0 and origin(url) is not None else None


class Registry:
    """Reads packuments and tarballs from one npm registry, within the run's deadline."""

    def __init__(self, base: str, deadline: Deadline, roots: TrustRoots | None = None) -> None:
        self.base = base.rstrip("/") + "/"
        self.roots = roots or bundled()  # tests inject their own CA and keys
        here = origin(self.base)
        if here is None:
            raise NpmError(f"{clean_url(base)}: not an http(s) registry URL", "npm-bad-url")
        self.policy = SameOrigin(frozenset({here}), configured_hosts())
        self.http = Http(policy=self.policy, deadline=deadline)

    @property
    def shown(self) -> str:
        return clean_url(self.base)

    def packument(self, name: str) -> dict[str, Any]:
        url = self.base + urllib.parse.quote(name, safe="@")
        body = self._get(url, _ACCEPT, MAX_PACKUMENT_BYTES)
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            raise NpmError(f"{clean_url(url)}: the answer is not JSON", "npm-garbage") from None
        if not isinstance(data, dict) or data.get("name") != name:
            raise NpmError(
                f"{clean_url(url)}: the answer is not the packument of {name}", "npm-garbage"
            )
        if not isinstance(data.get("versions"), dict) or not isinstance(
            data.get("dist-tags", {}), dict
        ):
            raise NpmError(f"{clean_url(url)}: the packument lists no versions", "npm-garbage")
        return data

    def tarball_digest(self, url: str) -> bytes:
        refusal = self.policy.refusal(url, self.base)
        if refusal is not None:
            raise NpmError(f"the tarball URL is refused: {refusal}", "npm-bad-url")
        return hashlib.sha512(self._get(url, None, MAX_TARBALL_BYTES)).digest()

    def attestations(self, name: str, version: str) -> bytes | None:
        """The attestations document of a version (None: the registry answers 404)."""
        url = f"{self.base}-/npm/v1/attestations/{urllib.parse.quote(name, safe='@')}@{version}"
        try:
            return self._get(url, "application/json", MAX_ATTESTATIONS_BYTES)
        except NpmError as exc:
            if exc.code == "npm-not-found":
                return None
            raise

    def _get(self, url: str, accept: str | None, limit: int) -> bytes:
        try:
            body, _ = self.http.get(url, accept, limit)
        except IndexError_ as exc:
            raise NpmError(str(exc), exc.code.replace("index-", "npm-"), exc.retryable) from None
        return body


def _versions(data: dict[str, Any]) -> dict[semver.Version, str]:
    out: dict[semver.Version, str] = {}
    for text in data["versions"]:
        # only the canonical form: the text is written into a launch as it is
        ok = isinstance(text, str) and _CANONICAL.match(text)
        v = semver.parse_version(text) if ok else None
        if v is not None:
            out[v] = text
    return out


def choose(
    launch: ServerLaunch, data: dict[str, Any], keep: str | None
) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """(the version the launch gets, the majors its request admits, every released major).
    ``keep``: the version locked before, kept while the request still admits it."""
    versions = _versions(data)
    released = tuple(
        semver.admitted_majors(versions, semver.Range(((),)))  # every release
    )
    tags = data.get("dist-tags", {})
    req = launch.requested
    if req is None or (_TAG.match(req) and semver.parse_range(req) is None):
        tag = req or "latest"
        target = tags.get(tag)
        if not isinstance(target, str) or semver.parse_version(target) not in versions:
            raise NpmError(f"{launch.package}: the registry has no `{tag}` release", "npm-no-match")
        admitted = released  # a tag moves to any release: it admits every major
        if keep is not None and semver.parse_version(keep) in versions:
            return keep, admitted, released
        return versions[semver.parse_version(target)], admitted, released  # type: ignore[index]
    rng = semver.parse_range(req)
    if rng is None:
        raise NpmError(f"{launch.package}@{req}: not a range npm reads", "npm-bad-range")
    admitted = semver.admitted_majors(versions, rng)
    kept = semver.parse_version(keep) if keep else None
    if kept is not None and kept in versions and rng.test(kept):
        return versions[kept], admitted, released
    best = semver.max_satisfying(versions, rng)
    if best is None:
        raise NpmError(f"{launch.package}@{req}: no release matches", "npm-no-match")
    return versions[best], admitted, released


def resolve(
    registry: Registry, launch: ServerLaunch, keep: str | None, earlier: str | None = None
) -> ServerPin:
    """The pin of an npm launch; raises :class:`NpmError` (a failed source). ``earlier``:
    the version locked before (whether the registry lists its attestations today)."""
    data = registry.packument(launch.package)
    version, admitted, released = choose(launch, data, keep)
    meta = data["versions"].get(version)
    dist = meta.get("dist") if isinstance(meta, dict) else None
    if not isinstance(dist, dict):
        raise NpmError(f"{launch.package}@{version}: the packument has no dist", "npm-garbage")
    integrity = dist.get("integrity")
    tarball = dist.get("tarball")
    m = _INTEGRITY.match(integrity) if isinstance(integrity, str) else None
    if m is None:
        raise NpmError(
            f"{launch.package}@{version}: no sha512 integrity in the packument",
            "npm-no-integrity",
        )
    if not isinstance(tarball, str):
        raise NpmError(f"{launch.package}@{version}: no tarball URL", "npm-garbage")
    integrity = str(integrity)
    if registry.tarball_digest(tarball) != base64.b64decode(m.group(1)):
        raise NpmError(
            f"{launch.package}@{version}: the tarball does not match the packument's integrity",
            "npm-integrity-mismatch",
        )
    attestations = dist.get("attestations")
    listed = isinstance(attestations, dict) and "provenance" in attestations
    times = data.get("time")
    published = times.get(version) if isinstance(times, dict) else None
    check, doc = _provenance(registry, launch.package, version, integrity, listed)
    signature = npm_signature.verify(
        launch.package, version, integrity, dist, published, registry.roots, check.logged
    )
    before = data["versions"].get(earlier) if earlier and earlier != version else None
    before_dist = before.get("dist") if isinstance(before, dict) else None
    return ServerPin(
        kind=NPM,
        package=launch.package,
        version=version,
        server=launch.server,
        path=launch.path,
        line=launch.line,
        requested=launch.requested,
        integrity=integrity,
        tarball=clean_url(tarball),
        registry=registry.shown,
        majors=admitted,
        released_majors=released,
        # listed: recorded; not listed is unknown, not "none" (a mirror, or an abbreviated
        # answer, may leave attestations out)
        provenance=True if listed else None,
        signature=signature,
        attestation=check,
        earlier_listed=isinstance(before_dist.get("attestations"), dict)
        if isinstance(before_dist, dict)
        else None,
        bundles_json=doc,
    )


def _provenance(
    registry: Registry, name: str, version: str, integrity: str, listed: bool
) -> tuple[ProvenanceCheck, str | None]:
    """The verified attestations of a version and the document as served (kept beside
    the lock); a document that does not parse is a failed source, never a verdict."""
    if not listed:
        return ProvenanceCheck(ABSENT, why="the registry lists no provenance"), None
    body = registry.attestations(name, version)
    if body is None:
        why = "the packument lists provenance, but the registry serves none (404)"
        return ProvenanceCheck(UNCHECKED, why=why), None
    try:
        doc = sigstore_parts.json_of(body, "the attestations")
        check = attestations.verify(name, version, integrity, doc, registry.roots)
    except attestations.Unreadable as exc:
        raise NpmError(
            f"{name}@{version}: the registry's attestations cannot be read: {exc}",
            "npm-attestations-unreadable",
        ) from None
    digest = attestations.digest_of(doc)
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return replace(check, bundles=digest), text

"""AG110-AG113: the Python distributions installed in an image (facts only, no I/O).

Input: :class:`~agentguard.facts.image.InstalledDist` records read from every
``*.dist-info/METADATA`` in the image, the image's platform, and optionally the pins of a
``pylock.toml`` (:class:`~agentguard.facts.lock.LockInput`). Markers are evaluated
against what is known of the image (os, architecture, the Python version in the
site-packages path); a marker that depends on something unknown lowers the confidence
instead of being guessed.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping

from packaging.markers import InvalidMarker, Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard.facts.image import ImageFacts, InstalledDist
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.base import Rule, register


@register
class InstalledDriftsFromLock(Rule):
    """The packages installed in the image are not the ones in the lock.

    ## What it does
    Compares every distribution installed in the image (from `*.dist-info/METADATA`)
    with the `pylock.toml` given with `--lock` (or `./pylock.toml`): a locked package
    that is missing, a package installed at another version, and a package installed
    that the lock does not list. Lock markers are evaluated for the image's platform and
    Python; when a marker depends on something not known from the image, the confidence
    is lowered.

    ## Why is this bad?
    The lock is what was reviewed. An image that installs something else -- because the
    Dockerfile ran `pip install -U`, installed without the lock, or added a package in a
    later layer -- runs code nobody looked at, and a moved major can break the agent or
    make it fall back silently.

    ## Example
    The lock pins `mcp==1.27.0`; the image carries `mcp 2.3.0` because the Dockerfile ran
    `pip install claude-agent-sdk`.

    ## Use instead
    Install exactly the lock, with hashes, and nothing else:
    ```dockerfile
    COPY pylock.toml requirements.lock ./
    RUN pip install --no-deps --require-hashes -r requirements.lock
    ```
    """

    id = "AG110"
    name = "installed-drifts-from-lock"
    title = "Installed packages drift from the lock"
    default_severity = Severity.HIGH
    family = "installed"


@register
class InstalledRequirementsUnsatisfied(Rule):
    """An installed distribution's own `Requires-Dist` is not satisfied in the image.

    ## What it does
    An offline `pip check`: for every installed distribution, evaluates each
    `Requires-Dist` line for the image's platform and Python, and reports a requirement
    that is not installed or is installed at a version outside the declared range.
    Requirements behind an extra are not checked (which extras were asked for is not
    recorded in the image).

    ## Why is this bad?
    The package was never tested with what is installed next to it. This is how an
    agent SDK that declares `mcp<2` ends up beside mcp 2.x: it imports, then fails at
    start, and a fallback quietly changes what the agent does.

    ## Example
    `claude-agent-sdk 0.2.100` (requires `mcp<2.0.0,>=1.23.0`) installed with `mcp 2.3.0`.

    ## Use instead
    Resolve the whole set together (`agentguard lock`) and install it with
    `--require-hashes`; never `pip install` one package on top of a locked set.
    """

    id = "AG111"
    name = "installed-requirements-unsatisfied"
    title = "Installed set does not satisfy its own Requires-Dist"
    default_severity = Severity.HIGH
    family = "installed"


@register
class DistributionInstalledTwice(Rule):
    """The same distribution is installed more than once in the image.

    ## What it does
    Reports a distribution with two or more `*.dist-info` folders (in different
    site-packages folders, or twice in one), once, with every candidate: version, folder
    and the layer that wrote it. The finding is marked ambiguous: which one Python
    imports depends on `sys.path` at run time.

    ## Why is this bad?
    Two copies mean two possible behaviours. Checks that look at one copy (a lock
    comparison, a vulnerability scan) can vouch for the one that is never imported.

    ## Example
    `mcp 1.27.0` in `/usr/local/lib/python3.12/site-packages` and `mcp 2.3.0` in
    `/opt/venv/lib/python3.12/site-packages`.

    ## Use instead
    Install into one environment only (a virtual environment), and remove the other copy
    in the same layer that installed it.
    """

    id = "AG112"
    name = "distribution-installed-twice"
    title = "Same distribution installed twice"
    default_severity = Severity.MEDIUM
    family = "installed"


@register
class AgentStackInventory(Rule):
    """Which agent-stack packages the image carries, and at which versions.

    ## What it does
    Lists, as information, every installed package of the policy's agent stack
    (`deps.watched`: agent SDKs, mcp, model clients) with its version, major and folder,
    so a reader sees at a glance which mcp major the image really carries.

    ## Why is this bad?
    It is not bad by itself; it is the inventory the other findings are read against. An
    image whose mcp major differs from the one you reviewed deserves a second look.

    ## Example
    `mcp 2.3.0 (major 2) in /usr/local/lib/python3.12/site-packages`.

    ## Use instead
    Nothing to change. Pin the agent stack in the lock and compare with `--lock`.
    """

    id = "AG113"
    name = "agent-stack-inventory"
    title = "Agent-stack packages installed"
    default_severity = Severity.INFO
    family = "installed"


# ---------------------------------------------------------------------------------------
# Marker environment of an image
# ---------------------------------------------------------------------------------------

_MACHINE = {
    "amd64": "x86_64",
    "arm64": "aarch64",
    "386": "i686",
    "arm": "armv7l",
    "ppc64le": "ppc64le",
    "s390x": "s390x",
    "riscv64": "riscv64",
}
_PY_IN_PATH = re.compile(r"/python(\d+)\.(\d+)t?/")
_QUOTED = re.compile(r"\"[^\"]*\"|'[^']*'")
_IDENT = re.compile(r"[a-z_]+")


def python_version_of(location: str) -> str | None:
    m = _PY_IN_PATH.search(location.rstrip("/") + "/")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def marker_environment(
    image: ImageFacts, python_version: str | None
) -> dict[str, str | frozenset[str]]:
    """What is known of the image for marker evaluation; unknown variables are left out."""
    env: dict[str, str | frozenset[str]] = {"extra": "", "extras": frozenset()}
    env["dependency_groups"] = frozenset()
    os_ = image.config.os
    if os_ == "linux":
        env.update(sys_platform="linux", platform_system="Linux", os_name="posix")
    elif os_ == "windows":
        env.update(sys_platform="win32", platform_system="Windows", os_name="nt")
    arch = image.config.architecture
    if arch in _MACHINE and os_ == "linux":
        env["platform_machine"] = _MACHINE[arch]
    if python_version is not None:
        env["python_version"] = python_version
    return env


def evaluate_marker(
    marker: str | None, env: Mapping[str, str | frozenset[str]], *, context: str = "metadata"
) -> bool | None:
    """True/False when decidable from ``env``; None when the marker needs an unknown value."""
    if not marker:
        return True
    try:
        parsed = Marker(marker)
    except InvalidMarker:
        return None
    names = set(_IDENT.findall(_QUOTED.sub("", str(parsed)))) - {"and", "or", "in", "not"}
    full = dict(env)
    if (
        "python_full_version" in names
        and "python_full_version" not in env
        and "python_version" in env
    ):
        # uv writes python_full_version; knowing X.Y decides it when X.Y.0 and the last
        # X.Y patch agree (python_full_version < '3.11' on 3.12, say)
        low, high = (
            _evaluate(
                parsed, {**full, "python_full_version": f"{env['python_version']}.{p}"}, context
            )
            for p in ("0", "999")
        )
        return low if low == high and set(names) - {"python_full_version"} <= set(env) else None
    if not names <= set(env):
        return None
    return _evaluate(parsed, full, context)


def _evaluate(parsed: Marker, env: Mapping[str, str | frozenset[str]], context: str) -> bool | None:
    try:
        return parsed.evaluate(dict(env), context)  # type: ignore[arg-type]
    except Exception:  # an unknown comparison (e.g. a version op on a non-version)
        return None


# ---------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------


def where_of(dist: InstalledDist) -> Location:
    return Location(layer=dist.layer_digest, path=dist.metadata_path)


def candidate_json(dist: InstalledDist) -> dict[str, JSONValue]:
    return {
        "version": dist.version,
        "location": dist.location,
        "metadata_path": dist.metadata_path,
        "layer": dist.layer_digest,
    }


def by_name(installed: Iterable[InstalledDist]) -> dict[str, list[InstalledDist]]:
    out: dict[str, list[InstalledDist]] = {}
    for d in installed:
        out.setdefault(canonicalize_name(d.name), []).append(d)
    for dists in out.values():
        dists.sort(key=lambda d: (d.location, d.metadata_path))
    return out


def check_duplicates(image: ImageFacts) -> list[Finding]:
    """AG112: one finding per distribution with two or more dist-info folders."""
    findings: list[Finding] = []
    for name, dists in sorted(by_name(image.installed).items()):
        if len(dists) < 2:
            continue
        listed = "; ".join(f"{d.version} in {d.location}" for d in dists)
        findings.append(
            DistributionInstalledTwice.finding(
                f"{name} is installed {len(dists)} times in image {image.target}: {listed}. "
                "Which one is imported depends on sys.path.",
                locations=[where_of(d) for d in dists],
                fix=Fix(
                    f"Install {name} into one environment only and remove the other "
                    f"cop{'y' if len(dists) == 2 else 'ies'} in the layer that installed "
                    f"{'it' if len(dists) == 2 else 'them'}."
                ),
                evidence={"package": name, "candidates": [candidate_json(d) for d in dists]},
                ambiguous=True,
            )
        )
    return findings


def check_inventory(image: ImageFacts, watched: Collection[str]) -> list[Finding]:
    """AG113: the agent-stack packages present, with version and major."""
    findings: list[Finding] = []
    watched_names = {canonicalize_name(w) for w in watched}
    for name, dists in sorted(by_name(image.installed).items()):
        if name not in watched_names:
            continue
        parts = [f"{d.version} (major {_major(d.version)}) in {d.location}" for d in dists]
        findings.append(
            AgentStackInventory.finding(
                f"Image {image.target} carries {name} " + "; ".join(parts) + ".",
                locations=[where_of(d) for d in dists],
                fix=Fix(f"Nothing to change; pin {name} in the lock and inspect with --lock."),
                evidence={
                    "package": name,
                    "versions": [d.version for d in dists],
                    "majors": [_major(d.version) for d in dists],
                    "candidates": [candidate_json(d) for d in dists],
                },
                ambiguous=len(dists) > 1,
            )
        )
    return findings


def _major(version: str) -> str:
    try:
        v = Version(version)
    except InvalidVersion:
        return "unknown"
    return f"0.{v.minor}" if v.major == 0 else str(v.major)


def check_requirements(image: ImageFacts) -> list[Finding]:
    """AG111: an offline `pip check` per Python version found in the image."""
    findings: list[Finding] = []
    by_python: dict[str | None, list[InstalledDist]] = {}
    for d in image.installed:
        by_python.setdefault(python_version_of(d.location), []).append(d)
    for python, dists in sorted(by_python.items(), key=lambda kv: kv[0] or ""):
        env = marker_environment(image, python)
        present = by_name(dists)
        for dist in sorted(dists, key=lambda d: (canonicalize_name(d.name), d.metadata_path)):
            for line in dist.requires:
                f = _check_requirement(image, dist, line, env, present)
                if f is not None:
                    findings.append(f)
    return findings


def _check_requirement(
    image: ImageFacts,
    dist: InstalledDist,
    line: str,
    env: Mapping[str, str | frozenset[str]],
    present: Mapping[str, list[InstalledDist]],
) -> Finding | None:
    try:
        req = Requirement(line)
    except InvalidRequirement:
        return None
    applies = evaluate_marker(str(req.marker) if req.marker else None, env)
    if applies is False:
        return None
    child = canonicalize_name(req.name)
    candidates = present.get(child, [])
    ok = [c for c in candidates if _satisfies(c.version, req)]
    if ok and len(ok) == len(candidates):
        return None
    owner = f"{canonicalize_name(dist.name)} {dist.version}"
    if not candidates:
        problem = f"{req.name} is not installed"
    elif ok:
        problem = "only some installed copies satisfy it: " + "; ".join(
            f"{c.version} in {c.location}" for c in candidates
        )
    else:
        problem = "installed: " + "; ".join(f"{c.version} in {c.location}" for c in candidates)
    return InstalledRequirementsUnsatisfied.finding(
        f"{owner} requires {line.strip()} but {problem} (image {image.target}).",
        locations=[where_of(dist), *(where_of(c) for c in candidates)],
        fix=Fix(
            f"Resolve {canonicalize_name(dist.name)} and {child} together (`agentguard lock`) "
            f"and install the lock, so {child} satisfies `{req.specifier or 'any version'}`."
        ),
        evidence={
            "package": canonicalize_name(dist.name),
            "version": dist.version,
            "requires": line.strip(),
            "child": child,
            "installed": [candidate_json(c) for c in candidates],
            "marker_decided": applies is not None,
        },
        confidence=Confidence.HIGH if applies is True else Confidence.LOW,
        ambiguous=bool(ok),
    )


def _satisfies(version: str, req: Requirement) -> bool:
    try:
        return req.specifier.contains(Version(version), prereleases=True)
    except InvalidVersion:
        return False

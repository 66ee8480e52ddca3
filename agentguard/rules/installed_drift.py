"""AG110 over image facts: the installed distributions compared with a `pylock.toml`.

The rule class is :class:`agentguard.rules.installed.InstalledDriftsFromLock`. Pure
functions only: the lock is read by :mod:`agentguard.inspect.lock_input`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from packaging.utils import canonicalize_name

from agentguard import escape
from agentguard.facts.image import ImageFacts, InstalledDist
from agentguard.facts.lock import LockInput
from agentguard.facts.pins import LockedPackage
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.installed import (
    InstalledDriftsFromLock,
    by_name,
    candidate_json,
    evaluate_marker,
    marker_environment,
    python_version_of,
    where_of,
)

_INSTALLER_TOOLS = frozenset({"pip", "setuptools", "wheel", "distribute"})


@dataclass(frozen=True)
class _Want:
    pin: LockedPackage
    applies: bool | None  # marker result for the image; None: depends on something unknown


def _locked_env(image: ImageFacts, lock: LockInput) -> list[InstalledDist]:
    """The installed dists of the environment(s) the lock describes.

    Folders that hold at least one locked package; all folders when none does (then
    every locked package is missing, and every installed one is extra).
    """
    locked_names = {p.name for p in lock.pins}
    folders = {d.location for d in image.installed if canonicalize_name(d.name) in locked_names}
    if not folders:
        return list(image.installed)
    return [d for d in image.installed if d.location in folders]


def check_drift(image: ImageFacts, lock: LockInput) -> list[Finding]:
    """AG110: missing, extra and other-version packages, one finding per package."""
    env_dists = _locked_env(image, lock)
    pythons = {python_version_of(d.location) for d in env_dists} - {None}
    python = next(iter(pythons)) if len(pythons) == 1 else None
    env = marker_environment(image, python)
    wants: dict[str, list[_Want]] = {}
    for pin in lock.pins:
        wants.setdefault(pin.name, []).append(
            _Want(pin, evaluate_marker(pin.marker, env, context="lock_file"))
        )
    have = by_name(env_dists)
    findings: list[Finding] = []
    lock_loc = Location(path=lock.path)
    for name in sorted(set(wants) | set(have)):
        applicable = [w for w in wants.get(name, []) if w.applies is not False]
        dists = have.get(name, [])
        if not applicable and not dists:
            continue
        if not applicable:
            findings.append(_extra(image, lock, name, dists, ruled_out=name in wants))
        elif not dists:
            findings.append(_missing(image, lock, name, applicable, lock_loc))
        else:
            versions = {w.pin.version for w in applicable}
            off = [d for d in dists if d.version not in versions]
            if off:
                findings.append(_other_version(image, lock, name, applicable, dists, lock_loc))
    return findings


def _install_step(lock: LockInput) -> str:
    """How an image installs this lock as written: the project's own tool for its lock."""
    name = lock.path.replace("\\", "/").rsplit("/", 1)[-1]
    if name == "uv.lock":
        return "with `uv sync --locked` from uv.lock"
    if name == "poetry.lock":
        return "with `poetry sync` (Poetry 1: `poetry install --sync`) from poetry.lock"
    return "installing the lock with `--require-hashes`"


def _confidence(wants: Sequence[_Want]) -> Confidence:
    return Confidence.HIGH if all(w.applies is True for w in wants) else Confidence.MEDIUM


def _pins_text(wants: Sequence[_Want]) -> str:
    return " or ".join(
        f"{w.pin.version or '(no version)'}" + (f" ; {w.pin.marker}" if w.pin.marker else "")
        for w in wants
    )


def _missing(
    image: ImageFacts, lock: LockInput, name: str, wants: Sequence[_Want], where: Location
) -> Finding:
    unknown = any(w.applies is None for w in wants)
    return InstalledDriftsFromLock.finding(
        f"{name} {_pins_text(wants)} is in the lock {lock.path} but not installed in image "
        f"{image.target}"
        + (" (its marker could not be decided for this image)." if unknown else "."),
        locations=[where],
        fix=Fix(
            f"Install the lock as written (it pins {name}): "
            + (
                f"rebuild the image {_install_step(lock)}."
                if lock.path.endswith(("uv.lock", "poetry.lock"))
                else "`pip install -r` the lock."
            )
        ),
        evidence={
            "package": name,
            "drift": "missing",
            "locked": [w.pin.version or None for w in wants],
            "markers": [w.pin.marker for w in wants],
            "installed": [],
        },
        severity=Severity.MEDIUM,
        confidence=Confidence.LOW if unknown else Confidence.HIGH,
    )


def _extra(
    image: ImageFacts,
    lock: LockInput,
    name: str,
    dists: Sequence[InstalledDist],
    *,
    ruled_out: bool,
) -> Finding:
    tooling = name in _INSTALLER_TOOLS
    listed = "; ".join(f"{d.version} in {d.location}" for d in dists)
    why = (
        "the lock lists it only for other platforms"
        if ruled_out
        else "the lock does not list it"
        + (" (installer tooling, usually left out of locks)" if tooling else "")
    )
    return InstalledDriftsFromLock.finding(
        f"{name} is installed in image {image.target} ({listed}) but {why}.",
        locations=[where_of(d) for d in dists],
        fix=Fix(
            f"Remove {name} from the image, or add it to the project's requirements and "
            "re-run `agentguard lock`."
        ),
        evidence={
            "package": name,
            "drift": "extra",
            "locked": [],
            "installed": [candidate_json(d) for d in dists],
            "installer_tooling": tooling,
        },
        severity=Severity.INFO if tooling else Severity.MEDIUM,
        ambiguous=len(dists) > 1,
    )


def _other_version(
    image: ImageFacts,
    lock: LockInput,
    name: str,
    wants: Sequence[_Want],
    dists: Sequence[InstalledDist],
    where: Location,
) -> Finding:
    listed = "; ".join(f"{d.version} in {d.location}" for d in dists)
    # Every pin that may apply to this image, each with its marker (one per fork): the
    # image is held to whichever its environment selects, never to the first.
    wants = sorted(wants, key=lambda w: (w.pin.version or "", w.pin.marker or ""))
    locked = [w.pin.version or "(no version)" for w in wants]
    lines = [
        f"{name}=={w.pin.version}" + (f" ; {w.pin.marker}" if w.pin.marker else "") for w in wants
    ]
    return InstalledDriftsFromLock.finding(
        f"{name} is locked at {_pins_text(wants)} in {lock.path} but image {image.target} "
        f"has {listed}.",
        locations=[*(where_of(d) for d in dists), where],
        fix=Fix(
            f"Rebuild the image {_install_step(lock)} so {name} is "
            f"{' or '.join(locked)} (as its marker selects); if the new version is wanted, "
            "re-run `agentguard lock` and review it."
            if len(wants) > 1
            else f"Rebuild the image {_install_step(lock)} so {name} is {locked[0]}; if the new version is wanted, re-run `agentguard lock` and review it.",
            snippet=escape.snippet(*lines),
        ),
        evidence={
            "package": name,
            "drift": "other-version",
            "locked": locked,
            "markers": [w.pin.marker for w in wants],
            "installed": [candidate_json(d) for d in dists],
        },
        confidence=_confidence(wants),
        ambiguous=len(dists) > 1,
    )

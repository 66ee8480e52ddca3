"""A hash-pinned requirements file read back: the resolver's output, and the
``requirements.lock`` agentguard wrote (:func:`parse_requirements_lock`).

Most lines are ``name==version`` or ``name==version ; marker`` and are read without the
requirement parser; a marker is parsed once per text (a forked lock repeats a few markers
over hundreds of pins: 31 texts over 175 lines of a 272-pin stack), as the parser reads
it inside a requirement. Any other line goes through ``packaging``'s parser whole.
"""

from __future__ import annotations

import functools
import re

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version

from agentguard import redact
from agentguard.lock.graph import LockedPackage
from agentguard.lock.resolver_errors import ResolverError

_PLAIN_PIN = re.compile(r"([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)==([A-Za-z0-9.!+_-]+)")
MARKER_SEPARATOR = " ; "  # as the resolver and agentguard write a pin's marker


def _valid_version(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


@functools.lru_cache(maxsize=1024)
def pin_marker(text: str) -> str | None:
    """The marker of the pin ``NAME==VERSION ; text`` as the requirement parser writes it
    (``str(Requirement(...).marker)``), or None when that line does not parse (then the
    whole line goes to the parser, which says why). Parsed after the same pin head as the
    line's, so the parser reads ``text`` in the very state it would."""
    try:
        req = Requirement(f"p==0{MARKER_SEPARATOR}{text}")
    except InvalidRequirement:
        return None
    return str(req.marker) if req.marker is not None else None


def _quick_pin(spec: str, hashes: tuple[str, ...]) -> LockedPackage | None:
    """``spec`` read without the requirement parser, when it is a plain pin with or without
    a marker (None: the parser reads it)."""
    head, sep, marker_text = spec.partition(MARKER_SEPARATOR)
    plain = _PLAIN_PIN.fullmatch(head)
    if plain is None or not _valid_version(plain.group(2)):
        return None
    marker = pin_marker(marker_text) if sep else None
    if sep and marker is None:
        return None
    return LockedPackage(canonicalize_name(plain.group(1)), plain.group(2), marker, hashes)


def parse_requirements_lock(text: str) -> tuple[list[LockedPackage], list[str], list[str]]:
    """Parse a hash-pinned requirements file: pins, index urls, find-links."""
    pins: list[LockedPackage] = []
    index_urls: list[str] = []
    find_links: list[str] = []
    logical: list[str] = []
    for raw in [*text.splitlines(), ""]:
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.endswith("\\"):
            logical.append(line[:-1].strip())
            continue
        logical.append(line)
        entry = " ".join(x for x in logical if x).strip()
        logical = []
        if not entry:
            continue
        if entry.startswith(("--index-url", "-i ")):
            index_urls.insert(
                0, entry.split(None, 1)[1].strip() if " " in entry else entry.split("=", 1)[1]
            )
            continue
        if entry.startswith("--extra-index-url"):
            index_urls.append(re.split(r"[ =]", entry, maxsplit=1)[1].strip())
            continue
        if entry.startswith(("--find-links", "-f ")):
            find_links.append(re.split(r"[ =]", entry, maxsplit=1)[1].strip())
            continue
        if entry.startswith("-"):
            continue
        parts = entry.split(" --hash=")
        spec = parts[0].strip()
        hashes = tuple(sorted(h.strip() for h in parts[1:]))
        quick = _quick_pin(spec, hashes)  # most lines: no parser needed
        if quick is not None:
            pins.append(quick)
            continue
        pins.append(_parsed_pin(spec, hashes))
    return pins, index_urls, find_links


def _parsed_pin(spec: str, hashes: tuple[str, ...]) -> LockedPackage:
    """``spec`` through the requirement parser (the way every line was once read)."""
    try:
        req = Requirement(spec)
    except InvalidRequirement as exc:
        raise ResolverError(
            f"resolver output has an unreadable line {redact.quote(spec)}: "
            f"{redact.quote(str(exc).splitlines()[0] if str(exc) else '')}",
            code="resolver-garbage",
            retryable=False,
        ) from None
    pinned = [s for s in req.specifier if s.operator == "=="]
    version = "" if len(pinned) != 1 else pinned[0].version
    return LockedPackage(
        name=canonicalize_name(req.name),
        version=version,
        marker=str(req.marker) if req.marker else None,
        hashes=hashes,
    )

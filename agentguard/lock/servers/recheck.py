"""``lock --check``'s offline re-verification of what ``mcp.lock.json`` records of each npm
server: the registry signature from the lock itself, the attestations from the sibling
``mcp.attestations.json`` (tied to the lock by their digest). A sibling that is missing
or does not parse is a failed source: what the lock claims is then not re-verified, and
never reported as if it were."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_trust import FAILED, UNCHECKED, VERIFIED
from agentguard.findings import Source
from agentguard.lock.servers import trust_record
from agentguard.lock.servers.lockfile import MCP_LOCK
from agentguard.lock.servers.trust_record import ATTESTATIONS_FILE, RecordError
from agentguard.lock.servers.trust_roots import TrustRoots, bundled


@dataclass(frozen=True)
class Rechecked:
    pins: tuple[ServerPin, ...] = ()  # the npm pins, with what re-verification found
    sources: tuple[Source, ...] = ()


def recorded(root: Path, pins: Sequence[ServerPin], trust: TrustRoots | None) -> Rechecked:
    npm_pins = [p for p in pins if p.kind == NPM]
    wants_docs = [p for p in npm_pins if p.attestation is not None and p.attestation.bundles]
    if not npm_pins or not any(p.signature or p.attestation for p in npm_pins):
        return Rechecked()
    roots = trust or bundled()
    docs: dict[str, Any] | None = None
    sources: list[Source] = []
    docs_read = True  # (else a failed source says why no attestation was re-verified)
    if wants_docs:
        try:
            docs = trust_record.read_sidecar(root)
        except (RecordError, OSError) as exc:
            sources.append(_failed(f"{ATTESTATIONS_FILE} could not be read: {exc}"))
            wants_docs, docs_read = [], False
        else:
            if docs is None:
                why = f"{ATTESTATIONS_FILE} is missing: the attestations the lock records are not re-verified"
                sources.append(_failed(why))
                wants_docs, docs_read = [], False
    again: list[ServerPin] = []
    counts = {VERIFIED: 0, FAILED: 0, UNCHECKED: 0}
    for pin in npm_pins:
        att, said = None, not docs_read
        if pin in wants_docs:
            try:
                att = trust_record.recheck_attestation(pin, docs, roots)
            except RecordError as exc:
                sources.append(_failed(f"{pin.package}@{pin.version}: {exc}"))
                said = True
        sig = trust_record.recheck_signature(pin, roots, att.logged if att else None)
        was_verified = pin.signature is not None and pin.signature.status == VERIFIED
        if was_verified and (sig is None or sig.status == UNCHECKED):
            said_sig = sig.why if sig else "the lock records no keyid, sig or integrity for it"
            sources.append(_not_again(pin, "registry signature", str(said_sig)))
        if pin.attestation is not None and pin.attestation.status == VERIFIED and not said:
            if att is None:
                why = "the lock records no document digest or integrity for it"
                sources.append(_not_again(pin, "attestation", why))
            elif att.status == UNCHECKED:
                sources.append(_failed(f"{pin.package}@{pin.version}: {att.why}"))
        for got in (sig, att):
            if got is not None:
                counts[got.status] = counts.get(got.status, 0) + 1
        again.append(replace(pin, signature=sig, attestation=att))
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    if summary:
        sources.append(
            Source.ok(
                "npm-trust",
                "mcp.lock.json",
                f"signatures and attestations re-verified offline: {summary}",
            )
        )
    return Rechecked(tuple(again), tuple(sources))


def _not_again(pin: ServerPin, what: str, why: str) -> Source:
    """A claim of the lock (the pull request's file) that is not verified again is never
    dropped from what `lock --check` reports: a claim is only as good as its re-check."""
    return Source.failed(
        "npm-trust",
        MCP_LOCK,
        f"{pin.package}@{pin.version}: the lock records a verified {what} that is not "
        f"verified again: {why}",
        error_code="mcp-trust-not-reverified",
        retryable=False,
        remedy=f"Run `agentguard lock` again: it verifies {pin.package} {pin.version} from "
        "the registry and records what it verified.",
    )


def _failed(why: str) -> Source:
    return Source.failed(
        "npm-trust",
        ATTESTATIONS_FILE,
        why,
        error_code="mcp-attestations-unreadable",
        retryable=False,
        remedy=f"Run `agentguard lock` again: it writes {ATTESTATIONS_FILE} beside mcp.lock.json.",
    )

"""How the lock records what was verified of an npm version, and ``lock --check``'s
offline re-verification of it.

``mcp.lock.json`` holds, per npm entry, ``signature`` (keyid, sig, publish time, status)
and ``attestation`` (status, every step and its outcome, the identity read from the
certificate, the log index, the sha256 of the attestations document). The documents
themselves (two Sigstore bundles, ~20 KB of base64 each version) live in the sibling
``mcp.attestations.json``: the lock stays one reviewable line per fact, and the digest in
the lock ties the sibling to it, so an edited sibling is caught, never trusted."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agentguard import escape, safeio
from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_trust import (
    STATUSES,
    UNCHECKED,
    ProvenanceCheck,
    RegistrySignature,
)
from agentguard.lock.servers import attestations, npm_signature, sigstore_parts
from agentguard.lock.servers.trust_roots import TrustRoots, parse_time

ATTESTATIONS_FILE = "mcp.attestations.json"
MAX_SIDECAR_BYTES = 32 * 1024 * 1024
_CHECK_FIELDS = ("predicate_type", "repository", "workflow", "ref", "commit", "builder")


class RecordError(Exception):
    """A lock entry's record, or the sibling file, that cannot be read."""


def signature_json(sig: RegistrySignature) -> dict[str, Any]:
    return {k: v for k, v in vars(sig).items() if v is not None}


def attestation_json(check: ProvenanceCheck) -> dict[str, Any]:
    out: dict[str, Any] = {"status": check.status, "checks": dict(check.checks)}
    for key in ("why", *_CHECK_FIELDS, "log_index", "bundles", "logged"):
        value = getattr(check, key)
        if value is not None:
            out[key.replace("_", "-")] = value
    return out


def _s(value: object, what: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or len(value) > 4096:
        raise RecordError(f"{what}: not a string")
    return value


def signature_of(data: object, where: str) -> RegistrySignature | None:
    if data is None:
        return None
    if not isinstance(data, dict) or data.get("status") not in STATUSES:
        raise RecordError(f"{where}.signature: not a signature record")
    return RegistrySignature(
        str(data["status"]),
        *(_s(data.get(k), f"{where}.signature.{k}") for k in ("keyid", "sig", "published", "why")),
    )


def attestation_of(data: object, where: str) -> ProvenanceCheck | None:
    if data is None:
        return None
    checks = data.get("checks") if isinstance(data, dict) else None
    if (
        not isinstance(data, dict)
        or data.get("status") not in STATUSES
        or not isinstance(checks, dict)
    ):
        raise RecordError(f"{where}.attestation: not an attestation record")
    index = data.get("log-index")
    if index is not None and (not isinstance(index, int) or isinstance(index, bool)):
        raise RecordError(f"{where}.attestation.log-index: not a number")
    named = {
        k: _s(data.get(k.replace("_", "-")), f"{where}.attestation.{k}") for k in _CHECK_FIELDS
    }
    return ProvenanceCheck(
        str(data["status"]),
        tuple((str(k), str(_s(v, f"{where}.attestation.checks"))) for k, v in checks.items()),
        _s(data.get("why"), f"{where}.attestation.why"),
        log_index=index,
        bundles=_s(data.get("bundles"), f"{where}.attestation.bundles"),
        logged=_s(data.get("logged"), f"{where}.attestation.logged"),
        **named,
    )


def render_sidecar(pins: Sequence[ServerPin]) -> str | None:
    """The sibling file's text (None: no pin has a document to keep)."""
    docs = {
        f"{p.package}@{p.version}": json.loads(p.bundles_json)
        for p in pins
        if p.kind == NPM and p.bundles_json is not None
    }
    if not docs:
        return None
    data = {"attestations-version": 1, "attestations": dict(sorted(docs.items()))}
    return escape.json_hidden(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


def read_sidecar(root: Path) -> dict[str, Any] | None:
    """The documents kept beside the lock (None: there is no sibling file). Raises
    :class:`RecordError` or OSError."""
    path = root / ATTESTATIONS_FILE
    if not path.exists() and not path.is_symlink():
        return None
    text = safeio.read_text(path, root=root, cap=MAX_SIDECAR_BYTES)
    try:
        data = sigstore_parts.json_of(text.encode(), ATTESTATIONS_FILE)
    except sigstore_parts.Unreadable as exc:
        raise RecordError(str(exc)) from None
    docs = data.get("attestations") if isinstance(data, dict) else None
    if not isinstance(docs, dict) or data.get("attestations-version") != 1:
        raise RecordError(f"{ATTESTATIONS_FILE}: not an attestations file of version 1")
    return docs


def recheck_signature(
    pin: ServerPin, roots: TrustRoots, logged: str | None
) -> RegistrySignature | None:
    """The recorded registry signature verified again (None: nothing to re-verify).
    ``logged``: the publish time Rekor signed, from the attestations verified again (the
    lock's own ``published`` is the pull request's word)."""
    sig = pin.signature
    if sig is None or sig.keyid is None or sig.sig is None or pin.integrity is None:
        return None
    message = f"{pin.package}@{pin.version}:{pin.integrity}".encode()
    return npm_signature.check_one(
        message, sig.keyid, sig.sig, parse_time(sig.published), roots, parse_time(logged)
    )


def recheck_attestation(
    pin: ServerPin, docs: dict[str, Any] | None, roots: TrustRoots
) -> ProvenanceCheck | None:
    """The recorded attestations verified again from the sibling file (None: nothing was
    recorded to re-verify). A missing or edited document is UNCHECKED with why, or raises
    :class:`RecordError` when it does not parse."""
    rec = pin.attestation
    if rec is None or rec.bundles is None or pin.integrity is None:
        return None
    doc = (docs or {}).get(f"{pin.package}@{pin.version}")
    if doc is None:
        why = f"{ATTESTATIONS_FILE} does not hold the attestations the lock records"
        return ProvenanceCheck(UNCHECKED, why=why)
    if attestations.digest_of(doc) != rec.bundles:
        why = f"the attestations in {ATTESTATIONS_FILE} are not the ones the lock records"
        return ProvenanceCheck("failed", (("bundle", f"failed: {why}"),), f"bundle: {why}")
    try:
        got = attestations.verify(pin.package, pin.version, pin.integrity, doc, roots)
    except attestations.Unreadable as exc:
        raise RecordError(f"{ATTESTATIONS_FILE}: {exc}") from None
    return replace(got, bundles=rec.bundles)

"""The npm registry's signature of a version (``dist.signatures``), what ``npm audit
signatures`` checks first: ECDSA P-256 with SHA-256 over ``NAME@VERSION:INTEGRITY``,
verified with the registry key of that keyid from the bundled trust roots.

A version that lists no signature is ABSENT (no finding: a mirror or a private registry
may sign nothing); a keyid no bundled key has, or a key whose validity cannot be placed
against the publish time, is UNCHECKED with why; a signature that does not verify, a key
that had expired when the version was published, or a signature field that is not
base64 DER is FAILED (AG144)."""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

from agentguard.facts.npm_trust import ABSENT, FAILED, UNCHECKED, VERIFIED, RegistrySignature
from agentguard.lock.servers.trust_roots import SIGNATURES, TrustRoots, parse_time

MAX_SIGNATURES = 8


def _b64(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)


def ecdsa_verifies(pem: bytes, sig: bytes, message: bytes) -> bool | str:
    """True/False; a string says why the key could not be used (not a P-256/P-384 key,
    not PEM)."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError) as exc:
        return f"the key is not a PEM public key ({exc})"
    if not isinstance(key, ec.EllipticCurvePublicKey):
        return "the key is not an ECDSA key"
    algo = hashes.SHA384() if key.curve.name == "secp384r1" else hashes.SHA256()
    try:
        key.verify(sig, message, ec.ECDSA(algo))
    except InvalidSignature:
        return False
    return True


def verify(
    name: str, version: str, integrity: str, dist: dict[str, Any], published: object,
    roots: TrustRoots, logged: str | None = None,
) -> RegistrySignature:  # fmt: skip
    """``published``: the packument's ``time`` of the version (the registry's word);
    ``logged``: the provenance's integratedTime Rekor signed, when there is one."""
    sigs = dist.get("signatures")
    when = parse_time(published)
    shown = when.isoformat() if when else None
    if sigs is None or sigs == []:
        return RegistrySignature(ABSENT, published=shown)
    if not isinstance(sigs, list) or len(sigs) > MAX_SIGNATURES:
        return RegistrySignature(FAILED, published=shown, why="dist.signatures is not a list")
    message = f"{name}@{version}:{integrity}".encode()
    # every one is checked: one that fails fails the version (as npm does), whatever its
    # place in the list; one with a key the roots do not hold stands beside a verified one
    got: list[RegistrySignature] = []
    for entry in sigs:
        keyid, sig = (entry.get("keyid"), entry.get("sig")) if isinstance(entry, dict) else (0, 0)
        # (ASCII: an unknown keyid is recorded in the lock, and a file holds only UTF-8)
        if not (isinstance(keyid, str) and isinstance(sig, str) and keyid.isascii()) or (
            len(sig) > 512 or not sig.isascii()
        ):
            return RegistrySignature(FAILED, why="a signature is not {keyid, sig} ASCII strings")
        got.append(check_one(message, keyid[:128], sig, when, roots, parse_time(logged)))
    return min(got, key=lambda g: (FAILED, VERIFIED, UNCHECKED).index(g.status))


def check_one(
    message: bytes, keyid: str, sig: str, when: datetime | None, roots: TrustRoots,
    logged: datetime | None = None,
) -> RegistrySignature:  # fmt: skip
    """One ``{keyid, sig}`` against the trust roots (also what ``lock --check`` re-runs).
    ``when``: the publish time stated (the packument's, or the lock's); ``logged``: the
    one Rekor signed. The registry signs what it receives after the provenance is logged,
    so the later of the two bounds when the signature was made."""
    out = {"keyid": keyid, "sig": sig, "published": when.isoformat() if when else None}
    shown: str | None = when.isoformat() if when is not None else None
    if logged is not None and (when is None or logged > when):
        when, shown = logged, f"{logged.isoformat()}, logged by Rekor"
    key = roots.npm_key(keyid, SIGNATURES)
    if key is None:
        why = f"signed with key {keyid}, which agentguard's trust roots do not hold"
        return RegistrySignature(UNCHECKED, why=why, **out)
    try:
        raw = _b64(sig)
    except (binascii.Error, ValueError):
        return RegistrySignature(FAILED, why="the signature is not base64", **out)
    if key.end is not None:
        if when is None:
            why = f"key {keyid} expired {key.end.date()}, and the publish time is unknown"
            return RegistrySignature(UNCHECKED, why=why, **out)
        # only the end counts: the registry signs old versions again with a new key
        if when >= key.end:
            why = f"key {keyid} had expired ({key.end.date()}) when the version was published ({shown})"
            return RegistrySignature(FAILED, why=why, **out)
    ok = ecdsa_verifies(key.pem, raw, message)
    if ok is True:
        return RegistrySignature(VERIFIED, **out)
    why = "the signature does not verify" if ok is False else str(ok)
    return RegistrySignature(FAILED, why=f"{why} (key {keyid})", **out)

"""The provenance attestations of an npm version (``GET <registry>/-/npm/v1/attestations/
NAME@VERSION``), verified offline against the trust roots given (production: the bundled
ones, :func:`agentguard.lock.servers.trust_roots.bundled`).

Two Sigstore bundles: the SLSA provenance (a DSSE envelope signed by a Fulcio leaf
certificate that names the source repository and workflow) and npm's publish attestation
(signed by the registry's attestation key). For each: the in-toto subject is
``pkg:npm/NAME@VERSION`` with the sha512 of ``dist.integrity``; the envelope's signature
(over the PAE) verifies with the leaf's key (npm's key); the leaf chains to the bundled
Fulcio intermediate and root; the Rekor entry's body is this envelope, its signed entry
timestamp verifies with the bundled Rekor key, and its integratedTime lies inside the
leaf's validity (the npm key's). Not done, and recorded as not checked: the Merkle
inclusion proof and the certificate's SCTs."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from agentguard.facts.npm_trust import (
    FAILED,
    NOT_DONE,
    STEPS,
    UNCHECKED,
    VERIFIED,
    ProvenanceCheck,
)
from agentguard.lock.servers import sigstore_parts as sp
from agentguard.lock.servers.npm_signature import ecdsa_verifies
from agentguard.lock.servers.sigstore_parts import StepFailed, Unreadable
from agentguard.lock.servers.trust_roots import ATTESTATIONS, TrustRoots

SLSA = "https://slsa.dev/provenance/"
PUBLISH = "https://github.com/npm/attestation/tree/main/specs/publish/v0.1"
MAX_ATTESTATIONS = 8
_IN_TOTO = "application/vnd.in-toto+json"
_STATEMENTS = ("https://in-toto.io/Statement/v0.1", "https://in-toto.io/Statement/v1")

__all__ = ["Unreadable", "digest_of", "purl", "verify"]


def purl(name: str, version: str) -> str:
    """The package URL npm names a version by (the scope's ``@`` percent-encoded)."""
    return f"pkg:npm/{name.replace('@', '%40', 1) if name.startswith('@') else name}@{version}"


def digest_of(doc: object) -> str:
    """The digest the lock records of an attestations document (canonical JSON)."""
    text = json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class _Bundle:
    statement: dict[str, Any]
    log_index: int
    cert: Any  # the Fulcio leaf (None: signed with a key)
    logged: datetime | None  # integratedTime, when the signed entry timestamp verified


def _pick(doc: object) -> tuple[dict[str, Any] | None, dict[str, Any] | None, str | None]:
    items = sp.field(doc, "attestations")
    if not isinstance(items, list) or not items or len(items) > MAX_ATTESTATIONS:
        raise Unreadable("the answer lists no attestations (or too many)")
    slsa = [a for a in items if str(sp.field(a, "predicateType")).startswith(SLSA)]
    publish = [a for a in items if sp.field(a, "predicateType") == PUBLISH]
    if len(slsa) > 1 or len(publish) > 1:  # two candidates: never the first
        raise StepFailed("bundle", "the registry serves more than one attestation of a kind")
    prov = sp.field(slsa[0], "bundle") if slsa else None
    pub = sp.field(publish[0], "bundle") if publish else None
    ptype = str(slsa[0]["predicateType"])[:128] if slsa else None
    for b in (prov, pub):
        if b is not None and not isinstance(b, dict):
            raise Unreadable("an attestation's bundle is not an object")
    return prov, pub, ptype


def _envelope(bundle: dict[str, Any]) -> tuple[str, bytes, str, bytes]:
    env = sp.field(bundle, "dsseEnvelope")
    if not str(sp.field(bundle, "mediaType")).startswith("application/vnd.dev.sigstore.bundle"):
        raise Unreadable("not a Sigstore bundle")
    sigs = sp.field(env, "signatures")
    if sp.field(env, "payloadType") != _IN_TOTO or not isinstance(sigs, list) or len(sigs) != 1:
        raise Unreadable("the bundle's envelope is not one signed in-toto statement")
    sig_text = sp.field(sigs[0], "sig")
    payload = sp.b64(sp.field(env, "payload"), "the envelope's payload")
    return _IN_TOTO, payload, str(sig_text), sp.b64(sig_text, "the envelope's signature")


def _leaf_der(material: object) -> bytes:
    """The leaf certificate (bundle 0.3: ``certificate``; 0.1/0.2: the chain's first)."""
    raw = sp.field(material, "certificate", "rawBytes")
    chain = sp.field(material, "x509CertificateChain", "certificates")
    if raw is None and isinstance(chain, list) and chain:
        raw = sp.field(chain[0], "rawBytes")
    return sp.b64(raw, "the leaf certificate")


def _tlog(bundle: dict[str, Any]) -> tuple[dict[str, Any], datetime]:
    """The bundle's one log entry, and its integratedTime as a time."""
    entries = sp.field(bundle, "verificationMaterial", "tlogEntries")
    if not isinstance(entries, list) or len(entries) != 1 or not isinstance(entries[0], dict):
        raise Unreadable("the bundle does not hold one transparency-log entry")
    entry = entries[0]
    for key in ("logIndex", "integratedTime"):
        if not str(entry.get(key, "")).isdigit() or len(str(entry[key])) > 20:
            raise Unreadable(f"the log entry's {key} is not a number")
    try:  # (twenty digits are a number, not a time any clock holds)
        when = datetime.fromtimestamp(int(entry["integratedTime"]), timezone.utc)
    except (OverflowError, OSError, ValueError):
        raise Unreadable("the log entry's integratedTime is not a time") from None
    return entry, when


def _check(
    bundle: dict[str, Any], name: str, version: str, integrity: str, roots: TrustRoots,
    checks: dict[str, str], *, leaf: bool, filed_as: str,
) -> _Bundle:  # fmt: skip
    ptype, payload, sig_text, sig = _envelope(bundle)
    entry, when = _tlog(bundle)
    statement = sp.json_of(payload, "the in-toto statement")
    # what the statement is, signed; what it is listed as is the registry's unsigned label
    if sp.field(statement, "_type") not in _STATEMENTS:
        raise StepFailed("bundle", "the envelope does not hold an in-toto statement")
    kind = sp.field(statement, "predicateType")
    if kind != filed_as:
        raise StepFailed(
            "bundle", f"the statement filed as {filed_as} is a {str(kind)[:128]} statement"
        )
    wanted = sp.b64(integrity.removeprefix("sha512-"), "dist.integrity").hex()
    subjects = sp.field(statement, "subject")
    if not isinstance(subjects, list) or not any(
        sp.field(s, "name") == purl(name, version) and sp.field(s, "digest", "sha512") == wanted
        for s in subjects
    ):
        raise StepFailed("subject", f"no subject is {purl(name, version)} with its sha512")
    checks["subject"] = "ok"
    material = sp.field(bundle, "verificationMaterial")
    cert, leaf_der = None, None
    if leaf:
        cert = sp.load_cert(_leaf_der(material), "the leaf certificate")
        leaf_der = sp.cert_der(cert)
        sp.check_chain(cert, roots.fulcio_intermediate, roots.fulcio_root)
        checks["certificate-chain"] = "ok"
        key_pem = sp.spki_pem(cert)
        start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    else:
        hint = str(sp.field(material, "publicKey", "hint"))[:128]
        npm_key = roots.npm_key(hint, ATTESTATIONS)
        if npm_key is None:
            raise StepFailed(
                "publish-attestation", f"signed with key {hint}, which the trust roots do not hold"
            )
        key_pem, start, end = npm_key.pem, npm_key.start, npm_key.end
    ok = ecdsa_verifies(key_pem, sig, sp.pae(ptype, payload))
    if ok is not True:
        raise StepFailed(
            "dsse-signature", "the envelope's signature does not verify" if ok is False else str(ok)
        )
    checks["dsse-signature"] = "ok"
    sp.entry_matches(
        sp.json_of(sp.b64(entry.get("canonicalizedBody"), "the log entry's body"), "the log entry's body"),
        payload, sig_text, sp.spki_der_of_pem(key_pem) or b"", leaf_der,
    )  # fmt: skip
    checks["tlog-entry"] = "ok"
    _promise(entry, roots, checks)
    if (start is not None and when < start) or (end is not None and when > end):
        raise StepFailed(
            "tlog-time",
            f"the log entry's time {when.isoformat()} is outside the signing key's validity",
        )
    checks["tlog-time"] = "ok"
    logged = when if checks.get("tlog-promise") == "ok" else None
    return _Bundle(statement, int(entry["logIndex"]), cert, logged)


def _promise(entry: dict[str, Any], roots: TrustRoots, checks: dict[str, str]) -> None:
    log_id = sp.b64(sp.field(entry, "logId", "keyId"), "the log id")
    set_b64 = sp.field(entry, "inclusionPromise", "signedEntryTimestamp")
    rekor = [
        k
        for k in roots.rekor_keys
        if hashlib.sha256(sp.spki_der_of_pem(k) or b"").digest() == log_id
    ]
    if not rekor:
        checks["tlog-promise"] = (
            "not checked: the entry is in a log whose key the trust roots do not hold"
        )
        return
    if set_b64 is None:
        checks["tlog-promise"] = "not checked: the entry carries no signed entry timestamp"
        return
    ok = ecdsa_verifies(
        rekor[0], sp.b64(set_b64, "the signed entry timestamp"), sp.promise_message(entry, log_id)
    )
    if ok is not True:
        raise StepFailed(
            "tlog-promise", "the signed entry timestamp does not verify with the Rekor key"
        )
    checks["tlog-promise"] = "ok"


def verify(
    name: str, version: str, integrity: str, doc: object, roots: TrustRoots
) -> ProvenanceCheck:
    """The check of one version's attestations document. Raises :class:`Unreadable` when
    a field does not parse (a failed source: never a verdict)."""
    if not sp.depth_ok(doc):
        raise Unreadable(f"the attestations are nested deeper than {sp.MAX_DEPTH}")
    checks: dict[str, str] = {}
    extra: dict[str, Any] = {}
    try:
        prov, pub, ptype = _pick(doc)
        checks["bundle"] = "ok"
        extra["predicate_type"] = ptype
        if prov is None:
            return _result(UNCHECKED, checks, "the registry serves no SLSA provenance", extra)
        assert ptype is not None
        got = _check(prov, name, version, integrity, roots, checks, leaf=True, filed_as=ptype)
        extra |= _identity(got)
        if pub is None:
            checks["publish-attestation"] = "not checked: the registry serves none"
        else:
            inner: dict[str, str] = {}
            try:
                _check(pub, name, version, integrity, roots, inner, leaf=False, filed_as=PUBLISH)
            except StepFailed as exc:
                raise StepFailed("publish-attestation", f"{exc.step}: {exc.why}") from None
            bad = [f"{s} {o}" for s, o in inner.items() if o != "ok"]
            checks["publish-attestation"] = "ok" if not bad else f"not checked: {'; '.join(bad)}"
    except StepFailed as exc:
        checks[exc.step] = f"failed: {exc.why}"
        return _result(FAILED, checks, f"{exc.step}: {exc.why}", extra)
    except (KeyError, TypeError, AttributeError, IndexError, ValueError) as exc:
        raise Unreadable(
            f"the attestations are not Sigstore bundles ({type(exc).__name__})"
        ) from None
    missing = [s for s in STEPS if checks.get(s) != "ok"]
    status = VERIFIED if not missing else UNCHECKED
    why = None if not missing else f"not checked: {', '.join(missing)}"
    return _result(status, checks, why, extra)


def _identity(got: _Bundle) -> dict[str, Any]:
    pred = sp.field(got.statement, "predicate")
    builder = sp.field(pred, "runDetails", "builder", "id") or sp.field(pred, "builder", "id")
    return {
        "repository": sp.extension(got.cert, sp.REPOSITORY),
        "workflow": sp.extension(got.cert, sp.WORKFLOW) or sp.san_uri(got.cert),
        "ref": sp.extension(got.cert, sp.REF),
        "commit": sp.extension(got.cert, sp.COMMIT),
        "builder": str(builder)[:512] if isinstance(builder, str) else None,
        "log_index": got.log_index,
        "logged": got.logged.isoformat() if got.logged is not None else None,
    }


def _result(
    status: str, checks: dict[str, str], why: str | None, extra: dict[str, Any]
) -> ProvenanceCheck:
    done = [(s, checks.get(s, "not checked")) for s in STEPS]
    done += [(s, "not checked: not implemented offline") for s in NOT_DONE]
    return ProvenanceCheck(status, tuple(done), why, **extra)

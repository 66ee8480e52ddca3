"""The parts of a Sigstore bundle the provenance check reads, each from hostile bytes:
the base64 fields, the Fulcio leaf certificate and its extensions, the DSSE
pre-authentication encoding, the Rekor entry's body and its signed entry timestamp.

A field that does not parse raises :class:`Unreadable` (a failed source, never a
verdict); a field that parses but does not hold raises :class:`StepFailed` with the step
(one of :data:`agentguard.facts.npm_trust.STEPS`) and why. ``cryptography`` is imported
here only, and only when a bundle is checked."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from typing import Any

MAX_DEPTH = 32
_OID = "1.3.6.1.4.1.57264.1."
# Fulcio's extensions: the current ones (DER UTF8String), then the deprecated raw ones
REPOSITORY, WORKFLOW, REF, COMMIT = ("12", "5"), ("9",), ("14", "6"), ("13", "3")


class Unreadable(Exception):
    """A field of the registry's answer that is not what it must be to be read at all."""


class StepFailed(Exception):
    def __init__(self, step: str, why: str) -> None:
        super().__init__(f"{step}: {why}")
        self.step = step
        self.why = why


def b64(value: object, what: str, *, limit: int = 1 << 20) -> bytes:
    if not isinstance(value, str) or len(value) > limit:
        raise Unreadable(f"{what} is not a base64 string")
    try:
        return base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise Unreadable(f"{what} is not base64") from None


def depth_ok(value: object, limit: int = MAX_DEPTH) -> bool:
    """Every list and object nested at most ``limit`` deep (walked without recursion)."""
    stack = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return True


def json_of(raw: bytes, what: str) -> Any:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise Unreadable(f"{what} is not JSON") from None
    if not depth_ok(data):
        raise Unreadable(f"{what} is nested deeper than {MAX_DEPTH}")
    try:  # JSON's "\\ud800" parses into text no file holds (the lock and its digests)
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise Unreadable(f"{what}: a string is not UTF-8 (a lone surrogate)") from None
    return data


def field(obj: object, *path: str) -> Any:
    for key in path:
        obj = obj.get(key) if isinstance(obj, dict) else None
    return obj


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE's pre-authentication encoding: what the envelope's signature signs."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def load_cert(der: bytes, what: str) -> Any:
    from cryptography import x509

    try:
        return x509.load_der_x509_certificate(der)
    except ValueError as exc:
        raise Unreadable(f"{what} is not a DER certificate ({exc})") from None


def load_pem_cert(pem: bytes, what: str) -> Any:
    from cryptography import x509

    try:
        return x509.load_pem_x509_certificate(pem)
    except ValueError as exc:
        raise Unreadable(f"{what} is not a PEM certificate ({exc})") from None


def spki_pem(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(
        cert.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def spki_der_of_pem(pem: bytes) -> bytes | None:
    from cryptography.hazmat.primitives import serialization

    try:
        key = serialization.load_pem_public_key(pem)
    except (ValueError, TypeError):
        return None
    return bytes(
        key.public_bytes(
            serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )


def check_chain(leaf: Any, intermediate_pem: bytes, root_pem: bytes) -> None:
    """The leaf is issued by the bundled intermediate, which the bundled root issued; the
    leaf is a code-signing certificate. Raises :class:`StepFailed`."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.x509.oid import ExtendedKeyUsageOID

    inter = load_pem_cert(intermediate_pem, "the bundled Fulcio intermediate")
    root = load_pem_cert(root_pem, "the bundled Fulcio root")
    for child, parent, what in ((leaf, inter, "leaf"), (inter, root, "intermediate")):
        try:
            child.verify_directly_issued_by(parent)
        except (ValueError, TypeError, InvalidSignature) as exc:
            why = f"the {what} certificate is not issued by the bundled Fulcio CA ({exc or 'bad signature'})"
            raise StepFailed("certificate-chain", why) from None
    try:
        eku = leaf.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except x509.ExtensionNotFound:
        eku = ()
    if ExtendedKeyUsageOID.CODE_SIGNING not in eku:
        raise StepFailed("certificate-chain", "the leaf certificate is not for code signing")


def _der_string(raw: bytes) -> str | None:
    """A DER UTF8String (Fulcio's newer extensions); None when it is not one."""
    if len(raw) < 2 or raw[0] != 0x0C:
        return None
    size, at = raw[1], 2
    if size & 0x80:
        n = size & 0x7F
        if n == 0 or n > 2 or len(raw) < 2 + n:
            return None
        size, at = int.from_bytes(raw[2 : 2 + n], "big"), 2 + n
    if len(raw) != at + size:
        return None
    try:
        return raw[at:].decode("utf-8")
    except UnicodeDecodeError:
        return None


def extension(cert: Any, numbers: tuple[str, ...]) -> str | None:
    """The first of Fulcio's extensions ``1.3.6.1.4.1.57264.1.<n>`` the certificate has."""
    from cryptography import x509

    for n in numbers:
        oid = x509.ObjectIdentifier(_OID + n)
        try:
            value = cert.extensions.get_extension_for_oid(oid).value
        except x509.ExtensionNotFound:
            continue
        raw = getattr(value, "value", b"")
        text = _der_string(raw) if int(n) >= 8 else raw.decode("utf-8", "replace")
        if text:
            return text[:512]
    return None


def san_uri(cert: Any) -> str | None:
    from cryptography import x509

    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return None
    uris = san.get_values_for_type(x509.UniformResourceIdentifier)
    return str(uris[0])[:512] if len(uris) == 1 else None


def entry_matches(
    body: Any, payload: bytes, sig_b64: str, key_der: bytes, cert_der: bytes | None
) -> None:
    """The Rekor entry's body is this envelope: its payload hash, its signature and the
    key that made it, and (``cert_der``: a Fulcio leaf signed it) that very certificate,
    not another one for the same key (Fulcio certifies any key its holder proves, under
    any identity the holder has). Raises :class:`StepFailed` (or Unreadable)."""
    kind, spec = field(body, "kind"), field(body, "spec")
    digest = hashlib.sha256(payload).hexdigest()
    if kind == "intoto" and field(body, "apiVersion") == "0.0.2":
        sigs = field(spec, "content", "envelope", "signatures")
        wanted = field(spec, "content", "payloadHash", "value")
        # (intoto 0.0.2 keeps the envelope's base64 signature base64-encoded once more)
        pairs = [
            (b64(s.get("sig"), "a log signature").decode("ascii", "replace"), s.get("publicKey"))
            for s in sigs or []
        ]
    elif kind == "dsse" and field(body, "apiVersion") == "0.0.1":
        sigs = field(spec, "signatures")
        wanted = field(spec, "payloadHash", "value")
        pairs = [(s.get("signature"), s.get("verifier")) for s in sigs or []]
    else:
        raise StepFailed("tlog-entry", f"a log entry of kind {kind!r} is not read")
    if wanted != digest:
        raise StepFailed("tlog-entry", "the log entry is for another payload")
    for sig, key in pairs:
        pem = b64(key, "a log entry's key") if sig == sig_b64 else b""
        if not pem or _key_der(pem) != key_der:
            continue
        if cert_der is not None and _cert_der(pem) != cert_der:
            why = "the log entry holds another certificate than the bundle's"
            raise StepFailed("tlog-entry", why)
        return
    raise StepFailed("tlog-entry", "the log entry holds another signature or key")


def cert_der(cert: Any) -> bytes:
    from cryptography.hazmat.primitives import serialization

    return bytes(cert.public_bytes(serialization.Encoding.DER))


def _cert_der(pem: bytes) -> bytes | None:
    if b"CERTIFICATE" not in pem:
        return None
    return cert_der(load_pem_cert(pem, "a log entry's certificate"))


def _key_der(pem: bytes) -> bytes | None:
    if b"CERTIFICATE" in pem:
        from cryptography.hazmat.primitives import serialization

        cert = load_pem_cert(pem, "a log entry's certificate")
        return bytes(
            cert.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
    return spki_der_of_pem(pem)


def promise_message(entry: dict[str, Any], log_id: bytes) -> bytes:
    """What Rekor's signed entry timestamp signs: the canonical JSON of the entry."""
    doc = {
        "body": entry["canonicalizedBody"],
        "integratedTime": int(entry["integratedTime"]),
        "logID": log_id.hex(),
        "logIndex": int(entry["logIndex"]),
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()

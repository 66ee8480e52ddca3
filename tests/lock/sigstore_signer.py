"""A test's own Sigstore: a Fulcio-like CA (root, intermediate, a code-signing leaf with
GitHub's extensions), a Rekor key and an npm registry key, all made with real
cryptography, and the attestations document and ``dist.signatures`` a registry would
serve, signed with them. :attr:`Signer.roots` is what the verifier is given instead of
the bundled roots."""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from agentguard.lock.servers.attestations import PUBLISH, purl
from agentguard.lock.servers.sigstore_parts import pae, promise_message
from agentguard.lock.servers.trust_roots import ATTESTATIONS, SIGNATURES, NpmKey, TrustRoots

KEYID = "SHA256:test-registry-key"
REPO, WORKFLOW = (
    "https://github.com/acme/tracker",
    "https://github.com/acme/tracker/.github/workflows/release.yml@refs/tags/v2.0.1",
)
NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _utf8(text: str) -> bytes:
    raw = text.encode()
    return bytes([0x0C, len(raw)]) + raw


def _cert(subject: str, key: Any, issuer: str, signer: Any, *, ca: bool, start: datetime,
          days: float, leaf_ext: bool = False, repo: str = REPO,
          eku: tuple[x509.ObjectIdentifier, ...] = (ExtendedKeyUsageOID.CODE_SIGNING,),
          ) -> x509.Certificate:  # fmt: skip
    b = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(start)
        .not_valid_after(start + timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if leaf_ext:
        b = b.add_extension(x509.ExtendedKeyUsage(list(eku)), False)
        b = b.add_extension(
            x509.SubjectAlternativeName([x509.UniformResourceIdentifier(WORKFLOW)]), False
        )
        for n, value in (
            ("9", WORKFLOW),
            ("12", repo),
            ("13", "ab" * 20),
            ("14", "refs/tags/v2.0.1"),
        ):
            oid = x509.ObjectIdentifier(f"1.3.6.1.4.1.57264.1.{n}")
            b = b.add_extension(x509.UnrecognizedExtension(oid, _utf8(value)), False)
    return b.sign(signer, hashes.SHA384() if ca else hashes.SHA256())


@dataclass
class Signer:
    root_key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP384R1()))
    inter_key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP384R1()))
    rekor_key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    npm_key: Any = field(default_factory=lambda: ec.generate_private_key(ec.SECP256R1()))
    npm_key_end: datetime | None = None
    leaf_eku: tuple[x509.ObjectIdentifier, ...] = (ExtendedKeyUsageOID.CODE_SIGNING,)

    def __post_init__(self) -> None:
        start = NOW - timedelta(days=365)
        self.root = _cert(
            "test-root", self.root_key, "test-root", self.root_key, ca=True, start=start, days=3650
        )
        self.inter = _cert(
            "test-intermediate",
            self.inter_key,
            "test-root",
            self.root_key,
            ca=True,
            start=start,
            days=3650,
        )

    @property
    def roots(self) -> TrustRoots:
        pem = _pem_key(self.npm_key)
        return TrustRoots(
            fulcio_root=self.root.public_bytes(serialization.Encoding.PEM),
            fulcio_intermediate=self.inter.public_bytes(serialization.Encoding.PEM),
            rekor_keys=(_pem_key(self.rekor_key),),
            npm_keys=(
                NpmKey(KEYID, SIGNATURES, pem, None, self.npm_key_end),
                NpmKey(KEYID, ATTESTATIONS, pem, None, self.npm_key_end),
            ),
            origin="test",
        )

    def signature(self, name: str, version: str, integrity: str) -> list[dict[str, str]]:
        sig = self.npm_key.sign(f"{name}@{version}:{integrity}".encode(), ec.ECDSA(hashes.SHA256()))
        return [{"keyid": KEYID, "sig": _b64(sig)}]

    def leaf(self, key: Any, when: datetime, repo: str = REPO) -> x509.Certificate:
        """A code-signing leaf for ``key``, valid ten minutes around ``when``."""
        return _cert(
            "leaf",
            key,
            "test-intermediate",
            self.inter_key,
            ca=False,
            start=when - timedelta(minutes=1),
            days=10 / 1440,
            leaf_ext=True,
            repo=repo,
            eku=self.leaf_eku,
        )

    def bundle(self, statement: dict[str, Any], *, leaf: bool, when: datetime,
               logged_repo: str | None = None) -> dict[str, Any]:  # fmt: skip
        """A Sigstore bundle of ``statement`` (``logged_repo``: the log entry holds another
        certificate, for the same key, naming that repository)."""
        payload = json.dumps(statement).encode()
        ptype = "application/vnd.in-toto+json"
        if leaf:
            key = ec.generate_private_key(ec.SECP256R1())
            cert = self.leaf(key, when)
            material: dict[str, Any] = {
                "certificate": {"rawBytes": _b64(cert.public_bytes(serialization.Encoding.DER))}
            }
            logged = cert if logged_repo is None else self.leaf(key, when, logged_repo)
            verifier = logged.public_bytes(serialization.Encoding.PEM)
        else:
            key = self.npm_key
            material = {"publicKey": {"hint": KEYID}}
            verifier = _pem_key(key)
        sig = _b64(key.sign(pae(ptype, payload), ec.ECDSA(hashes.SHA256())))
        body = {
            "apiVersion": "0.0.1",
            "kind": "dsse",
            "spec": {
                "payloadHash": {
                    "algorithm": "sha256",
                    "value": hashlib.sha256(payload).hexdigest(),
                },
                "signatures": [{"signature": sig, "verifier": _b64(verifier)}],
            },
        }
        log_id = hashlib.sha256(
            self.rekor_key.public_key().public_bytes(
                serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        ).digest()
        entry: dict[str, Any] = {
            "logIndex": "4242",
            "logId": {"keyId": _b64(log_id)},
            "kindVersion": {"kind": "dsse", "version": "0.0.1"},
            "integratedTime": str(int(when.timestamp())),
            "canonicalizedBody": _b64(json.dumps(body).encode()),
        }
        promise = self.rekor_key.sign(promise_message(entry, log_id), ec.ECDSA(hashes.SHA256()))
        entry["inclusionPromise"] = {"signedEntryTimestamp": _b64(promise)}
        material["tlogEntries"] = [entry]
        return {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": material,
            "dsseEnvelope": {
                "payload": _b64(payload),
                "payloadType": ptype,
                "signatures": [{"sig": sig, "keyid": ""}],
            },
        }

    def statements(self, name: str, version: str, integrity: str,
                   subject: str | None = None) -> tuple[dict[str, Any], dict[str, Any]]:  # fmt: skip
        """The SLSA provenance and npm publish statements of a version."""
        digest = base64.b64decode(integrity.removeprefix("sha512-")).hex()
        subj = [{"name": subject or purl(name, version), "digest": {"sha512": digest}}]
        slsa = {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": subj,
            "predicateType": "https://slsa.dev/provenance/v1",
            "predicate": {
                "runDetails": {"builder": {"id": "https://github.com/actions/runner/github-hosted"}}
            },
        }
        publish = {
            "_type": "https://in-toto.io/Statement/v1",
            "subject": subj,
            "predicateType": PUBLISH,
            "predicate": {},
        }
        return slsa, publish

    def document(self, slsa: dict[str, Any], publish: dict[str, Any], *, when: datetime = NOW,
                 logged_repo: str | None = None) -> dict[str, Any]:  # fmt: skip
        """The attestations document of two statements, filed as the registry files them."""
        return {
            "attestations": [
                {
                    "predicateType": "https://slsa.dev/provenance/v1",
                    "bundle": self.bundle(slsa, leaf=True, when=when, logged_repo=logged_repo),
                },
                {"predicateType": PUBLISH, "bundle": self.bundle(publish, leaf=False, when=when)},
            ]
        }

    def attestations(self, name: str, version: str, integrity: str, *, when: datetime = NOW,
                     subject: str | None = None) -> dict[str, Any]:  # fmt: skip
        return self.document(*self.statements(name, version, integrity, subject), when=when)

    def sign_again(self, entry: dict[str, Any]) -> None:
        """Sign a log entry's timestamp again with the test's Rekor key, after a test edited
        it (the entry then holds a promise the bundled-roots stand-in accepts)."""
        log_id = base64.b64decode(entry["logId"]["keyId"])
        promise = self.rekor_key.sign(promise_message(entry, log_id), ec.ECDSA(hashes.SHA256()))
        entry["inclusionPromise"] = {"signedEntryTimestamp": _b64(promise)}

"""The provenance and registry-signature checks attacked: each answer here is one a hostile
registry (or a pull request that edits mcp.lock.json and mcp.attestations.json) could
serve, built with real cryptography on npm's real bundles or the test's own CA. Each must
end as a failed step, a failed source or a failed re-verification: never `verified`,
never a crash."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from agentguard.engine.lock.servers import check_servers
from agentguard.facts.npm_trust import RegistrySignature
from agentguard.findings import Source
from agentguard.lock.servers import attestations, npm_signature
from agentguard.lock.servers.trust_roots import bundled
from tests.lock.npm_registry import NpmRegistry, integrity, serve, tarball
from tests.lock.servers.test_provenance import (
    NAME,
    REAL_INTEGRITY,
    _finding,
    _lock,
    _Server,
    real,
)
from tests.lock.sigstore_signer import KEYID, NOW, Signer

DIGEST = integrity(tarball(NAME, "2.0.1"))


@pytest.fixture()
def signer() -> Signer:
    return Signer()


@pytest.fixture()
def registry(signer: Signer) -> Iterator[NpmRegistry]:
    reg = NpmRegistry({NAME: ["2.0.1"]}, times={"2.0.1": NOW.isoformat()})
    reg.signatures[(NAME, "2.0.1")] = signer.signature(NAME, "2.0.1", DIGEST)
    reg.provenance.add((NAME, "2.0.1"))
    reg.attestations[(NAME, "2.0.1")] = json.dumps(
        signer.attestations(NAME, "2.0.1", DIGEST)
    ).encode()
    with serve(reg):
        yield reg


def _failed(sources: tuple[Source, ...]) -> list[tuple[str | None, str]]:
    return [(s.error_code, s.reason) for s in sources if s.status.value == "failed"]


def _entry(doc: dict[str, Any], which: int = 0) -> dict[str, Any]:
    entry: dict[str, Any] = doc["attestations"][which]["bundle"]["verificationMaterial"][
        "tlogEntries"
    ][0]
    return entry


# --- integratedTime no clock can hold ---------------------------------------------------


def test_an_integrated_time_no_clock_holds_is_unreadable_never_a_crash(signer: Signer) -> None:
    """Twenty digits pass "a number": the SET (here signed again over it) does not make it
    a time. It was an OverflowError out of the verifier (and out of `lock --check`)."""
    doc = real()
    _entry(doc)["integratedTime"] = "9" * 20
    with pytest.raises(attestations.Unreadable, match="integratedTime is not a time"):
        attestations.verify("sigstore", "1.0.0", REAL_INTEGRITY, doc, bundled())
    own = signer.attestations(NAME, "2.0.1", DIGEST)
    _entry(own)["integratedTime"] = "9" * 20
    signer.sign_again(_entry(own))
    with pytest.raises(attestations.Unreadable, match="integratedTime is not a time"):
        attestations.verify(NAME, "2.0.1", DIGEST, own, signer.roots)


# --- text that is not UTF-8 (a lone surrogate, legal in JSON) ---------------------------


def test_a_lone_surrogate_in_the_attestations_is_a_failed_source_never_a_crash(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    """`"\\ud800"` parses (JSON allows the escape) into text no file can hold: the digest
    of the document and the sibling file could not be written (a UnicodeEncodeError out
    of `lock`, after the sibling was written and before the lock)."""
    doc = signer.attestations(NAME, "2.0.1", DIGEST)
    doc["note"] = "\ud800"
    registry.attestations[(NAME, "2.0.1")] = json.dumps(doc).encode()
    result = _lock(tmp_path, registry, signer)
    assert _failed(result.sources) == [
        (
            "npm-attestations-unreadable",
            f"{NAME}@2.0.1: the registry's attestations cannot be read: the attestations: "
            "a string is not UTF-8 (a lone surrogate)",
        )
    ]
    assert not (tmp_path / "mcp.lock.json").exists()
    assert not (tmp_path / "mcp.attestations.json").exists()


def test_a_lone_surrogate_in_a_registry_signature_is_failed_never_a_crash(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    """An unknown keyid is recorded (unchecked) in the lock: one that is not text a file
    holds crashed the lock's write."""
    registry.signatures[(NAME, "2.0.1")] = [{"keyid": "SHA256:\ud800", "sig": "AAAA"}]
    result = _lock(tmp_path, registry, signer)
    why = "a signature is not {keyid, sig} ASCII strings"
    assert result.findings == (_finding(why, "registry-signature"),)
    assert not (tmp_path / "mcp.lock.json").exists()


def test_a_lone_surrogate_in_the_checkouts_sibling_is_a_failed_source_never_a_crash(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    assert _lock(tmp_path, registry, signer).written
    side = tmp_path / "mcp.attestations.json"
    data = json.loads(side.read_text())
    data["attestations"][f"{NAME}@2.0.1"]["note"] = "\ud800"
    side.write_text(json.dumps(data))  # (ASCII: the escape, as a pull request commits it)
    checked = check_servers([_Server()], tmp_path, signer.roots)  # type: ignore[list-item]
    assert _failed(checked.sources) == [
        (
            "mcp-attestations-unreadable",
            "mcp.attestations.json could not be read: mcp.attestations.json: a string is not "
            "UTF-8 (a lone surrogate)",
        )
    ]


# --- what the registry files a statement as, and what the statement says it is -------


@pytest.mark.parametrize(
    ("which", "key", "value", "why"),
    [
        (0, "predicateType", "https://in-toto.io/attestation/test-result/v0.1",
         "the statement filed as https://slsa.dev/provenance/v1 is a "
         "https://in-toto.io/attestation/test-result/v0.1 statement"),
        (1, "predicateType", "https://slsa.dev/provenance/v1",
         "the statement filed as https://github.com/npm/attestation/tree/main/specs/publish/v0.1 "
         "is a https://slsa.dev/provenance/v1 statement"),
        (0, "_type", "https://example.com/Statement/v1",
         "the envelope does not hold an in-toto statement"),
    ],
    ids=["test-result-filed-as-provenance", "provenance-filed-as-publish", "not-in-toto"],
)  # fmt: skip
def test_a_statement_is_what_it_says_it_is_not_what_the_registry_files_it_as(
    signer: Signer, which: int, key: str, value: str, why: str
) -> None:
    """The label an attestation is listed under is the registry's unsigned text: a
    statement of another kind (a test result the project's CI attested for the same
    tarball, signed by the same workflow) listed as provenance was `verified` provenance,
    with the registry's label recorded as its predicate type."""
    statements = signer.statements(NAME, "2.0.1", DIGEST)
    statements[which][key] = value
    got = attestations.verify(NAME, "2.0.1", DIGEST, signer.document(*statements), signer.roots)
    step = "bundle" if which == 0 else "publish-attestation"
    said = why if which == 0 else f"bundle: {why}"
    assert (got.status, got.failed_step, got.why) == ("failed", step, f"{step}: {said}")


# --- dist.signatures: every one listed is checked, in any order ------------------------


@pytest.mark.parametrize("order", [1, -1], ids=["good-first", "bad-first"])
def test_every_registry_signature_is_checked_not_the_first_that_holds(
    signer: Signer, order: int
) -> None:
    """Two signatures of one keyid, one by the key and one not: the verdict was the first
    one's (verified when the good one came first); npm fails a version any of whose
    signatures does not verify. One the roots hold no key for stays beside a verified one."""
    good = signer.signature(NAME, "2.0.1", DIGEST)[0]
    bad = Signer().signature(NAME, "2.0.1", DIGEST)[0]
    unknown = {"keyid": "SHA256:another", "sig": good["sig"]}
    dist = {"signatures": [unknown, good, bad][::order]}
    got = npm_signature.verify(NAME, "2.0.1", DIGEST, dist, NOW.isoformat(), signer.roots)
    assert got == RegistrySignature(
        "failed", KEYID, bad["sig"], NOW.isoformat(),
        f"the signature does not verify (key {KEYID})",
    )  # fmt: skip
    dist = {"signatures": [unknown, good][::order]}
    assert npm_signature.verify(
        NAME, "2.0.1", DIGEST, dist, NOW.isoformat(), signer.roots
    ) == RegistrySignature("verified", KEYID, good["sig"], NOW.isoformat())


# --- lock --check: what the pull request's lock claims ---------------------------------


def _edit_lock(root: Path, edit: Any) -> None:
    path = root / "mcp.lock.json"
    data = json.loads(path.read_text())
    edit(data["servers"][0])
    path.write_text(json.dumps(data, indent=2))


@pytest.mark.parametrize(
    ("edit", "reasons"),
    [
        (
            lambda e: (e["signature"].pop("sig"), e["attestation"].pop("bundles")),
            [
                f"{NAME}@2.0.1: the lock records a verified registry signature that is not "
                "verified again: the lock records no keyid, sig or integrity for it",
                f"{NAME}@2.0.1: the lock records a verified attestation that is not verified "
                "again: the lock records no document digest or integrity for it",
            ],
        ),
        (
            lambda e: e["signature"].update(keyid="SHA256:not-a-bundled-key"),
            [
                f"{NAME}@2.0.1: the lock records a verified registry signature that is not "
                "verified again: signed with key SHA256:not-a-bundled-key, which agentguard's "
                "trust roots do not hold",
            ],
        ),
    ],
    ids=["material-removed", "keyid-changed"],
)
def test_lock_check_never_drops_a_verified_claim_it_cannot_verify_again(
    tmp_path: Path, registry: NpmRegistry, signer: Signer, edit: Any, reasons: list[str]
) -> None:
    """A pull request that keeps `"status": "verified"` and removes what would re-verify it
    (or names a key no root holds) made `lock --check` re-verify nothing and say nothing:
    the claim silently left the count."""
    assert _lock(tmp_path, registry, signer).written
    _edit_lock(tmp_path, edit)
    checked = check_servers([_Server()], tmp_path, signer.roots)  # type: ignore[list-item]
    assert _failed(checked.sources) == [("mcp-trust-not-reverified", r) for r in reasons]


# --- the log entry holds the certificate the bundle presents ---------------------------


def test_the_log_entry_holds_the_bundles_certificate_not_only_its_key(signer: Signer) -> None:
    """Fulcio certifies any key its holder proves: two leaves for one key, naming two
    repositories. The log entry held one (acme/other), the bundle presented the other
    (acme/tracker), and the identity recorded was one the log never held."""
    statements = signer.statements(NAME, "2.0.1", DIGEST)
    doc = signer.document(*statements, logged_repo="https://github.com/acme/other")
    got = attestations.verify(NAME, "2.0.1", DIGEST, doc, signer.roots)
    why = "the log entry holds another certificate than the bundle's"
    assert (got.status, got.failed_step, got.why) == (
        "failed",
        "tlog-entry",
        f"tlog-entry: {why}",
    )


# --- the publish time a registry (or a lock) states, and the one Rekor signed ---------


def _provenance_only(signer: Signer) -> bytes:
    doc = signer.attestations(NAME, "2.0.1", DIGEST)
    doc["attestations"].pop()  # npm's publish attestation left out: the check is unchecked
    return json.dumps(doc).encode()


def test_a_moved_publish_time_does_not_fit_a_signature_to_a_key_that_had_ended(
    tmp_path: Path, signer: Signer
) -> None:
    """The registry key ended a day before the release; the registry moves the version's
    `time` before the end (and leaves the publish attestation, which the key's end would
    fail, out). The provenance's log entry, whose time Rekor signed, says when it was
    published: the signature was verified on the registry's word alone."""
    signer.npm_key_end = NOW - timedelta(days=1)
    reg = NpmRegistry({NAME: ["2.0.1"]}, times={"2.0.1": "2026-05-01T00:00:00Z"})
    reg.signatures[(NAME, "2.0.1")] = signer.signature(NAME, "2.0.1", DIGEST)
    reg.provenance.add((NAME, "2.0.1"))
    reg.attestations[(NAME, "2.0.1")] = _provenance_only(signer)
    with serve(reg):
        result = _lock(tmp_path, reg, signer)
    why = (
        f"key {KEYID} had expired (2026-05-31) when the version was published "
        f"({NOW.isoformat()}, logged by Rekor)"
    )
    assert result.findings == (_finding(why, "registry-signature"),)


def test_lock_check_reads_the_publish_time_rekor_signed_not_the_one_the_lock_states(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    """Locked while the key was current; the roots then end it before the release. A pull
    request that moves the lock's `published` before the end made the signature verify."""
    registry.attestations[(NAME, "2.0.1")] = _provenance_only(signer)
    assert _lock(tmp_path, registry, signer).written
    _edit_lock(tmp_path, lambda e: e["signature"].update(published="2026-05-01T00:00:00+00:00"))
    signer.npm_key_end = NOW - timedelta(days=1)
    checked = check_servers([_Server()], tmp_path, signer.roots)  # type: ignore[list-item]
    why = (
        f"key {KEYID} had expired (2026-05-31) when the version was published "
        f"({NOW.isoformat()}, logged by Rekor)"
    )
    assert checked.findings == (_finding(why, "registry-signature", recorded=True),)


# --- attacks that hold: each ends at its step, or as unreadable ------------------------


def _bundle_of(doc: dict[str, Any], which: int = 0) -> dict[str, Any]:
    bundle: dict[str, Any] = doc["attestations"][which]["bundle"]
    return bundle


def _body(doc: dict[str, Any], signer: Signer, edit: Any) -> None:
    entry = _entry(doc)
    body = json.loads(base64.b64decode(entry["canonicalizedBody"]))
    edit(body)
    entry["canonicalizedBody"] = base64.b64encode(json.dumps(body).encode()).decode()
    signer.sign_again(entry)  # (a log that signs anything: the body is what fails)


def _sig(doc: dict[str, Any], edit: Any) -> None:
    env = _bundle_of(doc)["dsseEnvelope"]["signatures"][0]
    env["sig"] = base64.b64encode(edit(base64.b64decode(env["sig"]))).decode()


def _high_s(der: bytes) -> bytes:
    from cryptography.hazmat.primitives.asymmetric import utils

    r, s = utils.decode_dss_signature(der)
    n = 0xFFFFFFFF00000000FFFFFFFFFFFFFFFFBCE6FAADA7179E84F3B9CAC2FC632551  # P-256's order
    return utils.encode_dss_signature(r, n - s)


def _statements(edit: Any) -> Any:
    def make(signer: Signer) -> dict[str, Any]:
        slsa, publish = signer.statements(NAME, "2.0.1", DIGEST)
        edit(slsa)
        return signer.document(slsa, publish)

    return make


def _doc(edit: Any) -> Any:
    def make(signer: Signer) -> dict[str, Any]:
        doc = signer.attestations(NAME, "2.0.1", DIGEST)
        edit(doc, signer)
        return doc

    return make


_SHA512 = base64.b64decode(DIGEST.removeprefix("sha512-")).hex()
HELD = {
    "replayed-other-name": (
        _statements(lambda s: s["subject"][0].update(name="pkg:npm/left-pad@2.0.1")), "subject"),
    "replayed-other-version": (
        _statements(lambda s: s["subject"][0].update(name=f"pkg:npm/{NAME}@2.0.0")), "subject"),
    "unencoded-scope": (
        _statements(lambda s: s["subject"][0].update(name=f"pkg:npm/{NAME}@2.0.1")), "subject"),
    "other-digest": (
        _statements(lambda s: s["subject"][0]["digest"].update(sha512="00" * 64)), "subject"),
    "digest-in-sha256-only": (
        _statements(lambda s: s["subject"][0].update(digest={"sha256": _SHA512[:64]})), "subject"),
    "leaf-without-code-signing": ("no-eku", "certificate-chain"),
    "time-outside-the-leaf-signed-by-the-log": (
        _doc(lambda d, s: (_entry(d).update(integratedTime=str(int(NOW.timestamp()) + 3600)),
                           s.sign_again(_entry(d)))), "tlog-time"),
    "set-over-another-log-index": (
        _doc(lambda d, s: _entry(d).update(logIndex="4243")), "tlog-promise"),
    "body-hashes-another-payload": (
        _doc(lambda d, s: _body(d, s, lambda b: b["spec"]["payloadHash"].update(value="0" * 64))),
        "tlog-entry"),
    "envelope-sig-high-s": (_doc(lambda d, s: _sig(d, _high_s)), "tlog-entry"),
    "envelope-sig-trailing-byte": (_doc(lambda d, s: _sig(d, lambda b: b + b"\0")), "dsse-signature"),
    "two-provenance-attestations": (
        _doc(lambda d, s: d["attestations"].insert(0, d["attestations"][0])), "bundle"),
    "other-ca-same-names": ("other-ca", "certificate-chain"),
    "payload-type-changed": (
        _doc(lambda d, s: _bundle_of(d)["dsseEnvelope"].update(payloadType="text/plain")), None),
    "payload-url-safe-base64": (
        _doc(lambda d, s: _bundle_of(d)["dsseEnvelope"].update(
            payload=_bundle_of(d)["dsseEnvelope"]["payload"].replace("+", "-").replace("/", "_")
            + "-")), None),
    "payload-with-newlines": (
        _doc(lambda d, s: _bundle_of(d)["dsseEnvelope"].update(
            payload="\n".join(_bundle_of(d)["dsseEnvelope"]["payload"]))), None),
}  # fmt: skip


@pytest.mark.parametrize("attack", list(HELD))
def test_an_attack_that_holds_ends_at_its_step_or_unreadable(signer: Signer, attack: str) -> None:
    make, step = HELD[attack]
    roots = signer.roots
    if make == "no-eku":
        from cryptography.x509.oid import ExtendedKeyUsageOID

        signer.leaf_eku = (ExtendedKeyUsageOID.CLIENT_AUTH,)
        doc = signer.attestations(NAME, "2.0.1", DIGEST)
    elif make == "other-ca":
        doc = Signer().attestations(NAME, "2.0.1", DIGEST)  # its root and intermediate: same names
    else:
        doc = make(signer)
    if step is None:
        with pytest.raises(attestations.Unreadable):
            attestations.verify(NAME, "2.0.1", DIGEST, doc, roots)
        return
    got = attestations.verify(NAME, "2.0.1", DIGEST, doc, roots)
    assert (got.status, got.failed_step) == ("failed", step), got.why

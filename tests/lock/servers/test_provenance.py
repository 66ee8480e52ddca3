"""npm registry signatures and Sigstore provenance of MCP servers, verified with real
cryptography: real bundles npm published (sigstore@1.0.0, against the bundled public-good
roots), and bundles a test signs with its own CA and keys, served by the 127.0.0.1
registry, locked, re-verified offline by `lock --check`, and tampered with."""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.engine.lock.servers import check_servers, lock_servers
from agentguard.facts.mcp_pins import ServerPin
from agentguard.facts.npm_trust import ProvenanceCheck, RegistrySignature
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.lock.deadline import Deadline
from agentguard.lock.servers import attestations, npm, npm_signature
from agentguard.lock.servers.resolve import ServerOptions
from agentguard.lock.servers.trust_roots import bundled
from agentguard.rules.mcp_provenance import NpmServerProvenanceFails
from tests.lock.npm_registry import NpmRegistry, integrity, serve, tarball
from tests.lock.servers.test_registry import NAME, launch
from tests.lock.sigstore_signer import KEYID, NOW, REPO, WORKFLOW, Signer

REAL = Path(__file__).parents[2] / "fixtures" / "npm-attestations" / "sigstore-1.0.0.json"
# sigstore@1.0.0 as the public registry lists it (its bundles: npm/cli's test fixtures,
# Rekor entries 12988397 and 12988399 of rekor.sigstore.dev)
REAL_INTEGRITY = "sha512-e+qfbn/zf1+rCza/BhIA//Awmf0v1pa5HQS8Xk8iXrn9bgytytVLqYD0P7NSqZ6IELTgq+tcDvLPkQjNHyWLNg=="
REAL_SIG = "MEQCIBlpcHT68iWOpx8pJr3WUzD1EqQ7tb0CmY36ebbceR6IAiAVGRaxrFoyh0/5B7H1o4VFhfsHw9F8G+AxOZQq87q+lg=="
OLD_KEY = "SHA256:jl3bwswu80PjjokCgh0o2w5c2U4LhQAE57gj9cz1kzA"
STEPS_OK = tuple(
    (s, "ok")
    for s in ("bundle", "subject", "certificate-chain", "dsse-signature", "tlog-entry",
              "tlog-promise", "tlog-time", "publish-attestation")
)  # fmt: skip
ALL_OK = (
    *STEPS_OK,
    ("tlog-inclusion-proof", "not checked: not implemented offline"),
    ("certificate-sct", "not checked: not implemented offline"),
)


def real() -> dict[str, Any]:
    return json.loads(REAL.read_text())


def test_npms_real_bundles_verify_fully_with_the_bundled_roots() -> None:
    got = attestations.verify("sigstore", "1.0.0", REAL_INTEGRITY, real(), bundled())
    assert got == ProvenanceCheck(
        "verified",
        ALL_OK,
        None,
        predicate_type="https://slsa.dev/provenance/v0.2",
        repository="sigstore/sigstore-js",
        workflow="https://github.com/sigstore/sigstore-js/.github/workflows/publish.yml@refs/tags/v1.0.0",
        ref="refs/tags/v1.0.0",
        commit="06528997c3c8ab9f864fad9a3658446aca7fd86d",
        builder="https://github.com/npm/cli@9.4.2",
        log_index=12988397,
        logged="2023-02-09T17:56:00+00:00",  # (Rekor's integratedTime, its promise verified)
    )
    dist = {"signatures": [{"keyid": OLD_KEY, "sig": REAL_SIG}]}
    when = "2023-02-09T18:00:00Z"
    assert npm_signature.verify("sigstore", "1.0.0", REAL_INTEGRITY, dist, when, bundled()) == (
        RegistrySignature("verified", OLD_KEY, REAL_SIG, "2023-02-09T18:00:00+00:00")
    )


def _tamper(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = real()
    obj: Any = doc
    for key in path[:-1]:
        obj = obj[key]
    obj[path[-1]] = value(obj[path[-1]]) if callable(value) else value
    return doc


def _flip(text: str) -> str:
    raw = bytearray(base64.b64decode(text))
    raw[len(raw) // 2] ^= 1
    return base64.b64encode(bytes(raw)).decode()


@pytest.mark.parametrize(
    ("doc", "step", "why"),
    [
        (real(), "subject", "no subject is pkg:npm/sigstore@1.0.0 with its sha512"),  # integrity
        (
            _tamper(("attestations", 0, "bundle", "dsseEnvelope", "payload"), lambda p: base64.b64encode(base64.b64decode(p).replace(b"sigstore-js", b"sigstore-jz")).decode()),
            "dsse-signature",
            "the envelope's signature does not verify",
        ),
        (
            _tamper(("attestations", 0, "bundle", "verificationMaterial", "tlogEntries", 0, "inclusionPromise", "signedEntryTimestamp"), _flip),
            "tlog-promise",
            "the signed entry timestamp does not verify with the Rekor key",
        ),
        (
            _tamper(("attestations", 0, "bundle", "verificationMaterial", "tlogEntries", 0, "integratedTime"), "1675965960"),
            "tlog-promise",
            "the signed entry timestamp does not verify with the Rekor key",
        ),
    ],
    ids=["other-integrity", "edited-payload", "edited-promise", "moved-time"],
)  # fmt: skip
def test_a_tampered_real_bundle_fails_at_its_step(doc: dict[str, Any], step: str, why: str) -> None:
    wanted = REAL_INTEGRITY if step != "subject" else integrity(b"another tarball")
    got = attestations.verify("sigstore", "1.0.0", wanted, doc, bundled())
    assert (got.status, got.failed_step, got.why) == ("failed", step, f"{step}: {why}")


def test_a_real_signature_by_an_expired_key_fails_after_its_end_and_is_unknown_without_a_time() -> (
    None
):
    dist = {"signatures": [{"keyid": OLD_KEY, "sig": REAL_SIG}]}
    late = npm_signature.verify(
        "sigstore", "1.0.0", REAL_INTEGRITY, dist, "2025-02-01T00:00:00Z", bundled()
    )
    unknown = npm_signature.verify("sigstore", "1.0.0", REAL_INTEGRITY, dist, None, bundled())
    assert late == RegistrySignature(
        "failed", OLD_KEY, REAL_SIG, "2025-02-01T00:00:00+00:00",
        f"key {OLD_KEY} had expired (2025-01-29) when the version was published (2025-02-01T00:00:00+00:00)",
    )  # fmt: skip
    assert unknown == RegistrySignature(
        "unchecked", OLD_KEY, REAL_SIG, None,
        f"key {OLD_KEY} expired 2025-01-29, and the publish time is unknown",
    )  # fmt: skip


@pytest.mark.parametrize(
    "doc",
    [
        {"attestations": [{"predicateType": "https://slsa.dev/provenance/v1", "bundle": "x"}]},
        _tamper(("attestations", 0, "bundle", "dsseEnvelope", "payload"), "not base64!"),
        _tamper(("attestations", 0, "bundle", "verificationMaterial", "x509CertificateChain", "certificates", 0, "rawBytes"), "AAAA"),
        {"attestations": []},
        json.loads("[" * 40 + "]" * 40),
    ],
    ids=["bundle-not-object", "bad-base64", "not-a-certificate", "empty", "deep"],
)  # fmt: skip
def test_an_unreadable_document_is_unreadable_never_a_verdict(doc: object) -> None:
    with pytest.raises(attestations.Unreadable):
        attestations.verify("sigstore", "1.0.0", REAL_INTEGRITY, doc, bundled())


# --- the test's own CA and keys, served by the 127.0.0.1 registry ----------------------


@pytest.fixture()
def signer() -> Signer:
    return Signer()


@pytest.fixture()
def registry(signer: Signer) -> Iterator[NpmRegistry]:
    reg = NpmRegistry(
        {NAME: ["2.0.0", "2.0.1"]},
        times={"2.0.0": "2026-05-01T00:00:00Z", "2.0.1": NOW.isoformat()},
    )
    for v in ("2.0.0", "2.0.1"):
        digest = integrity(tarball(NAME, v))
        reg.signatures[(NAME, v)] = signer.signature(NAME, v, digest)
        reg.provenance.add((NAME, v))
        reg.attestations[(NAME, v)] = json.dumps(signer.attestations(NAME, v, digest)).encode()
    with serve(reg):
        yield reg


def test_a_good_answer_is_locked_as_verified_with_its_identity(
    registry: NpmRegistry, signer: Signer
) -> None:
    pin = npm.resolve(npm.Registry(registry.url, Deadline.start(30), signer.roots), launch(), None)
    assert pin.signature == RegistrySignature(
        "verified", KEYID, registry.signatures[(NAME, "2.0.1")][0]["sig"], NOW.isoformat()
    )
    assert pin.attestation is not None
    assert pin.attestation == ProvenanceCheck(
        "verified", ALL_OK, None, "https://slsa.dev/provenance/v1", REPO, WORKFLOW,
        "refs/tags/v2.0.1", "ab" * 20, "https://github.com/actions/runner/github-hosted", 4242,
        attestations.digest_of(json.loads(registry.attestations[(NAME, "2.0.1")])),
        NOW.isoformat(),
    )  # fmt: skip


def _finding(why: str, check: str, *, recorded: bool = False) -> Finding:
    said = "as recorded in the lock, " if recorded else ""
    return NpmServerProvenanceFails.finding(
        f"MCP server 'tracker': {said}{NAME} 2.0.1 fails its {check} check: {why}.",
        locations=[Location(path=".mcp.json", line=3, note="MCP server 'tracker'")],
        fix=Fix(
            f"Do not launch {NAME} 2.0.1: keep the version locked before, compare the package "
            "with its source, and lock again from the public registry once a release verifies."
        ),
        evidence={
            "server": "tracker",
            "package": NAME,
            "version": "2.0.1",
            "check": check,
            "why": why,
        },
    )


class _Server:
    def __init__(self) -> None:
        self.name, self.path, self.line, self.declared_in = "tracker", ".mcp.json", 3, ".mcp.json"
        self.transport, self.command, self.args = "stdio", "npx", ("-y", f"{NAME}@2.0.1")
        self.env: tuple[tuple[str, str], ...] = ()
        self.registries: tuple[tuple[str, str], ...] = ()


def _lock(tmp_path: Path, registry: NpmRegistry, signer: Signer) -> Any:
    opts = ServerOptions(root=tmp_path, npm_registry=registry.url, trust=signer.roots)
    return lock_servers([_Server()], opts)  # type: ignore[list-item]


def test_lock_writes_the_bundles_beside_it_and_check_reverifies_them(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    result = _lock(tmp_path, registry, signer)
    assert result.findings == () and result.written
    entry = json.loads((tmp_path / "mcp.lock.json").read_text())["servers"][0]
    assert (entry["signature"]["status"], entry["attestation"]["status"]) == (
        "verified",
        "verified",
    )
    assert entry["attestation"]["repository"] == REPO and entry["attestation"]["log-index"] == 4242
    side = json.loads((tmp_path / "mcp.attestations.json").read_text())
    assert list(side["attestations"]) == [f"{NAME}@2.0.1"]

    checked = check_servers([_Server()], tmp_path, signer.roots)  # type: ignore[list-item]
    assert checked.findings == ()
    assert [
        (s.kind, s.status.value, s.reason) for s in checked.sources if s.kind == "npm-trust"
    ] == [("npm-trust", "ok", "signatures and attestations re-verified offline: 2 verified")]
    # the sibling edited: caught by its digest in the lock
    side["attestations"][f"{NAME}@2.0.1"]["attestations"].reverse()
    (tmp_path / "mcp.attestations.json").write_text(json.dumps(side))
    why = "bundle: the attestations in mcp.attestations.json are not the ones the lock records"
    assert check_servers([_Server()], tmp_path, signer.roots).findings == (  # type: ignore[list-item]
        _finding(why, "provenance bundle", recorded=True),
    )
    # another CA's roots (the bundled ones): the recorded signature no longer verifies
    (tmp_path / "mcp.attestations.json").unlink()
    other = check_servers([_Server()], tmp_path, Signer().roots)  # type: ignore[list-item]
    assert [f.evidence["check"] for f in other.findings] == ["registry-signature"]
    assert [(s.status.value, s.reason) for s in other.sources if s.kind == "npm-trust"] == [
        (
            "failed",
            "mcp.attestations.json is missing: the attestations the lock records are not re-verified",
        ),
        ("ok", "signatures and attestations re-verified offline: 1 failed"),
    ]


def test_a_bad_signature_or_subject_is_high_and_the_lock_is_not_written(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    digest = integrity(tarball(NAME, "2.0.1"))
    registry.signatures[(NAME, "2.0.1")] = Signer().signature(
        NAME, "2.0.1", digest
    )  # another key, same id
    registry.attestations[(NAME, "2.0.1")] = json.dumps(
        signer.attestations(NAME, "2.0.1", digest, subject="pkg:npm/left-pad@2.0.1")
    ).encode()
    result = _lock(tmp_path, registry, signer)
    assert result.findings == (
        _finding(f"the signature does not verify (key {KEYID})", "registry-signature"),
        _finding(
            "subject: no subject is pkg:npm/%40acme/tracker-mcp@2.0.1 with its sha512",
            "provenance subject",
        ),
    )
    assert not (tmp_path / "mcp.lock.json").exists() and not result.written


def test_garbage_attestations_are_a_failed_source_never_verified(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    registry.attestations[(NAME, "2.0.1")] = (
        b'{"attestations": [{"predicateType": "https://slsa.dev/provenance/v1", "bundle": {"mediaType": "application/vnd.dev.sigstore.bundle+json", "dsseEnvelope": {"payloadType": "application/vnd.in-toto+json", "payload": "%%%", "signatures": [{"sig": "x"}]}}}]}'
    )
    result = _lock(tmp_path, registry, signer)
    failed = [(s.error_code, s.reason) for s in result.sources if s.status.value == "failed"]
    assert failed == [
        (
            "npm-attestations-unreadable",
            f"{NAME}@2.0.1: the registry's attestations cannot be read: the envelope's payload is not base64",
        )
    ]
    assert not (tmp_path / "mcp.lock.json").exists()


def test_a_release_without_provenance_after_one_with_it_is_a_medium_downgrade(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    server = _Server()
    server.args = ("-y", NAME)
    registry.packages[NAME] = ["2.0.0"]
    opts = ServerOptions(root=tmp_path, npm_registry=registry.url, trust=signer.roots)
    assert lock_servers([server], opts).findings == ()  # type: ignore[list-item]
    registry.packages[NAME] = ["2.0.0", "2.0.1"]
    registry.provenance.discard((NAME, "2.0.1"))
    result = lock_servers(
        [server],
        ServerOptions(root=tmp_path, npm_registry=registry.url, trust=signer.roots, upgrade=True),
    )  # type: ignore[list-item]
    assert result.findings == (
        NpmServerProvenanceFails.finding(
            f"MCP server 'tracker': {NAME} 2.0.1 has no provenance, while the locked 2.0.0 had it "
            f"(built from {REPO}) and the registry still serves it: the new release may not come from the project's CI.",
            locations=[Location(path=".mcp.json", line=3, note="MCP server 'tracker'")],
            fix=Fix(
                f"Stay on {NAME} 2.0.0 (launch `{NAME}@2.0.0`) until the publisher confirms the release; lock it once a release with provenance is out."
            ),
            evidence={
                "server": "tracker",
                "package": NAME,
                "version": "2.0.1",
                "earlier": "2.0.0",
                "check": "provenance downgrade",
            },
            severity=Severity.MEDIUM,
        ),
    )
    # a registry that lists no provenance for any version (a mirror): unknown, no finding
    registry.provenance.clear()
    (tmp_path / "mcp.lock.json").unlink()
    assert lock_servers([server], opts).findings == ()  # type: ignore[list-item]


def test_no_signature_and_no_provenance_are_recorded_absent_without_a_finding(
    tmp_path: Path, registry: NpmRegistry, signer: Signer
) -> None:
    registry.signatures.clear()
    registry.provenance.clear()
    pin: ServerPin = npm.resolve(
        npm.Registry(registry.url, Deadline.start(30), signer.roots), launch(), None
    )
    assert (pin.signature, pin.attestation) == (
        RegistrySignature("absent", published=NOW.isoformat()),
        ProvenanceCheck("absent", why="the registry lists no provenance"),
    )
    assert _lock(tmp_path, registry, signer).findings == ()


@pytest.mark.network
def test_the_real_registry_sigstore_1_0_0_is_verified_or_said_absent() -> None:
    """The real registry: sigstore@1.0.0 resolved through the whole npm path. Its integrity
    is the one npm's bundles name, and they verify with the bundled roots (fetched from
    the registry when it serves them, else the copy kept here). Where the registry's
    answer carries no `dist.signatures` or attestations (a mirror strips them), the pin
    records them absent or unchecked, never verified, and no finding."""
    reg = npm.Registry("https://registry.npmjs.org/", Deadline.start(120))
    spec = ServerLaunchFor("sigstore", "1.0.0")
    pin = npm.resolve(reg, spec, None)
    assert pin.integrity == REAL_INTEGRITY
    dist = reg.packument("sigstore")["versions"]["1.0.0"]["dist"]
    served = reg.attestations("sigstore", "1.0.0")
    doc = real() if served is None else json.loads(served)
    assert (
        attestations.verify("sigstore", "1.0.0", REAL_INTEGRITY, doc, bundled()).status
        == "verified"
    )
    assert pin.signature is not None and pin.attestation is not None
    if "signatures" in dist:
        assert pin.signature.status == "verified"
    else:
        assert pin.signature == RegistrySignature("absent", published=pin.signature.published)
    if "attestations" in dist:
        assert pin.attestation.status == "verified"
        assert pin.attestation.repository == "sigstore/sigstore-js"
    else:
        assert pin.attestation == ProvenanceCheck("absent", why="the registry lists no provenance")


def ServerLaunchFor(name: str, version: str) -> Any:
    from agentguard.facts.mcp_pins import ServerLaunch

    return ServerLaunch(
        "npm", name, version, f"{name}@{version}", "s", ".mcp.json", 1, ".mcp.json", "npx", 1
    )

"""What the MCP server lock verified of an npm version: the registry's signature over
``name@version:integrity`` (:class:`RegistrySignature`) and the Sigstore provenance
attestations the registry serves for it (:class:`ProvenanceCheck`).

Statuses say what was looked at, never more: ``verified`` (every step below held),
``failed`` (a step did not hold: the finding AG144), ``absent`` (the registry lists
none), ``unchecked`` (it could not be checked: no trusted key for it, or a step this
verifier does not do; the why says which). ``checks`` names every step and its outcome,
so "verified" is never claimed for a step that was not run."""

from __future__ import annotations

from dataclasses import dataclass

VERIFIED, FAILED, ABSENT, UNCHECKED = "verified", "failed", "absent", "unchecked"
STATUSES = (VERIFIED, FAILED, ABSENT, UNCHECKED)

# The steps of a provenance check, in the order they run (``checks`` keys).
STEPS = (
    "bundle",  # the attestations document and its Sigstore bundles parse
    "subject",  # the in-toto subject is pkg:npm/NAME@VERSION with sha512 = dist.integrity
    "certificate-chain",  # the leaf chains to the bundled Fulcio intermediate and root
    "dsse-signature",  # the envelope's signature (PAE) with the leaf's (or npm's) key
    "tlog-entry",  # the log entry's body is this envelope (payload hash, signature, key)
    "tlog-promise",  # the signed entry timestamp verifies with the bundled Rekor key
    "tlog-time",  # the entry's integratedTime is inside the certificate's (key's) validity
    "publish-attestation",  # npm's own publish attestation, signed by the registry key
)
# Not done (said in ``checks`` as not checked): the Merkle inclusion proof against a
# signed checkpoint, and the certificate's SCTs against the CT log keys.
NOT_DONE = ("tlog-inclusion-proof", "certificate-sct")


@dataclass(frozen=True)
class RegistrySignature:
    """``dist.signatures`` of one version, and what became of it."""

    status: str  # VERIFIED | FAILED | ABSENT | UNCHECKED
    keyid: str | None = None
    sig: str | None = None  # base64 DER ECDSA signature, as the registry sent it
    published: str | None = None  # the packument's `time` of the version (key validity)
    why: str | None = None  # FAILED/UNCHECKED: what did not hold, or why not checked


@dataclass(frozen=True)
class ProvenanceCheck:
    """The provenance attestations of one version, verified offline against bundled
    trust roots (:mod:`agentguard.lock.servers.trust`)."""

    status: str  # VERIFIED | FAILED | ABSENT | UNCHECKED
    checks: tuple[tuple[str, str], ...] = ()  # (step, "ok" | "failed: why" | "not checked: why")
    why: str | None = None  # FAILED: the step that failed and why; UNCHECKED: why not
    predicate_type: str | None = None
    repository: str | None = None  # from the Fulcio certificate (OID 1.3.6.1.4.1.57264.1.*)
    workflow: str | None = None  # the build signer (workflow file @ ref)
    ref: str | None = None
    commit: str | None = None
    builder: str | None = None  # the SLSA predicate's builder id
    log_index: int | None = None  # the Rekor entry of the provenance bundle
    bundles: str | None = None  # sha256 of the attestations document kept beside the lock
    # the provenance's Rekor integratedTime, when its signed entry timestamp verified: a
    # publish time the registry cannot move (npm logs the provenance before it publishes)
    logged: str | None = None

    @property
    def failed_step(self) -> str | None:
        return next((s for s, out in self.checks if out.startswith("failed")), None)

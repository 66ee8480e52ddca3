"""AG144: an npm MCP server whose registry signature or provenance attestation does not
verify, or whose new version dropped the provenance an earlier locked one had. Facts in
(:class:`~agentguard.facts.npm_trust.RegistrySignature`,
:class:`~agentguard.facts.npm_trust.ProvenanceCheck`), findings out, no I/O."""

from __future__ import annotations

from collections.abc import Iterable

from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_trust import ABSENT, FAILED, VERIFIED
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.redact import text as redact_text
from agentguard.rules.base import Rule, register


@register
class NpmServerProvenanceFails(Rule):
    """An npm MCP server's registry signature or provenance does not hold.

    ## What it does
    `agentguard lock` verifies each npm server version it pins, offline, against trust
    roots bundled with agentguard: the registry's signature over
    `NAME@VERSION:INTEGRITY` (`dist.signatures`, ECDSA P-256, the npm registry's keys),
    and, where the registry lists provenance, its Sigstore attestations (the SLSA
    provenance and npm's publish attestation: the in-toto subject is the package and its
    sha512, the envelope's signature, the Fulcio certificate chain, the Rekor entry and
    its signed timestamp). `lock --check` verifies again what `mcp.lock.json` and
    `mcp.attestations.json` record. A check that fails is reported (high) with the
    package, the version and the step that failed; the lock is not written with it. A
    version without provenance where the version locked before had it, while the
    registry still serves the earlier one's, is reported too (medium). A package that
    has no provenance at all is not a finding (most have none); the lock records it as
    absent.

    ## Why is this bad?
    A signature or attestation that does not verify means the package, its integrity
    or its attestations were changed after the registry signed them: a tampered mirror,
    a re-published tarball, an edited lock. A release that suddenly lacks the provenance
    its predecessors had may have been published from somewhere else than the project's
    CI (a stolen token).

    ## Example
    `mcp.lock.json` pins `@acme/tracker-mcp` 2.0.1 from a registry whose attestations
    name another sha512 than `dist.integrity`.

    ## Use instead
    Do not launch the version: stay on the locked one, and compare the package with its
    source (the repository and workflow the lock recorded). Lock again from the public
    registry once the publisher has re-released it with provenance.
    """

    id = "AG144"
    name = "mcp-server-provenance-fails"
    title = "npm MCP server's registry signature or provenance does not verify"
    default_severity = Severity.HIGH
    family = "dependencies"


def _where(pin: ServerPin) -> list[Location]:
    return [Location(path=pin.path, line=pin.line, note=f"MCP server {pin.server!r}")]


def failure_findings(pins: Iterable[ServerPin], *, recorded: bool = False) -> list[Finding]:
    """AG144 (high) for each npm pin whose signature or attestations failed verification
    (``recorded``: re-verified from the lock by ``lock --check``)."""
    out = []
    for pin in pins:
        if pin.kind != NPM:
            continue
        failed = []
        if pin.signature is not None and pin.signature.status == FAILED:
            failed.append(("registry-signature", pin.signature.why or "failed"))
        if pin.attestation is not None and pin.attestation.status == FAILED:
            step = pin.attestation.failed_step or "attestation"
            failed.append((f"provenance {step}", pin.attestation.why or "failed"))
        for check, why in failed:
            said = "as recorded in the lock, " if recorded else ""
            out.append(
                NpmServerProvenanceFails.finding(
                    f"MCP server {pin.server!r}: {said}{pin.package} {pin.version} fails "
                    f"its {check} check: {redact_text(why)}.",
                    locations=_where(pin),
                    fix=Fix(
                        f"Do not launch {pin.package} {pin.version}: keep the version locked "
                        "before, compare the package with its source, and lock again from "
                        "the public registry once a release verifies."
                    ),
                    evidence={
                        "server": pin.server,
                        "package": pin.package,
                        "version": pin.version,
                        "check": check,
                        "why": redact_text(why),
                    },
                )
            )
    return out


def downgrade_findings(pairs: Iterable[tuple[ServerPin, ServerPin]]) -> list[Finding]:
    """AG144 (medium) for (locked before, pinned now) where the earlier version had
    provenance, the new one has none, and the registry still serves the earlier one's (so
    it is the release that lacks it, not a registry that strips them all)."""
    out = []
    for old, new in pairs:
        had = old.attestation is not None and old.attestation.status == VERIFIED
        had = had or (old.attestation is None and old.provenance is True)
        lacks = new.attestation is not None and new.attestation.status == ABSENT
        if new.kind != NPM or not had or not lacks or old.version == new.version:
            continue
        if new.earlier_listed is not True:
            continue
        source = old.attestation.repository if old.attestation else None
        from_ = f" (built from {redact_text(source)})" if source else ""
        out.append(
            NpmServerProvenanceFails.finding(
                f"MCP server {new.server!r}: {new.package} {new.version} has no provenance, "
                f"while the locked {old.version} had it{from_} and the registry still "
                "serves it: the new release may not come from the project's CI.",
                locations=_where(new),
                fix=Fix(
                    f"Stay on {new.package} {old.version} (launch `{old.pinned_spec()}`) "
                    "until the publisher confirms the release; lock it once a release with "
                    "provenance is out."
                ),
                evidence={
                    "server": new.server,
                    "package": new.package,
                    "version": new.version,
                    "earlier": old.version,
                    "check": "provenance downgrade",
                },
                severity=Severity.MEDIUM,
            )
        )
    return out

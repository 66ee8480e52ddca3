"""AG402 over facts: literal secrets in environment assignments and build steps.

The recognisers (pure string functions) live in :mod:`agentguard.secret_text`; they are
re-exported here for the callers that import them from this module.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentguard import escape
from agentguard.findings import Finding, Fix, Location, Severity
from agentguard.rules.hardening_rules import LiteralSecret
from agentguard.secret_text import SecretHit as SecretHit
from agentguard.secret_text import assignments as assignments
from agentguard.secret_text import classify as classify
from agentguard.secret_text import is_fill_in as is_fill_in
from agentguard.secret_text import is_pass_through as is_pass_through
from agentguard.secret_text import name_says_secret as name_says_secret
from agentguard.secret_text import redact as redact
from agentguard.secret_text import redact_step as redact_step
from agentguard.secret_text import scan_text as scan_text
from agentguard.secret_text import value_fingerprint as value_fingerprint
from agentguard.secret_text import value_format as value_format

if TYPE_CHECKING:  # (an agent's secrets are judged without the image records)
    from agentguard.facts.image import ImageFacts

# AG402 over facts -----------------------------------------------------------------


def check_env_secrets(
    env: Sequence[tuple[str, str]], *, subject: str, location: Location, set_where: str
) -> list[Finding]:
    """AG402 for each variable holding a literal secret. The value never leaves here."""
    findings: list[Finding] = []
    for name, value in env:
        hit = classify(name, value)
        if hit is None:
            continue
        findings.append(_secret_finding(hit, subject=subject, location=location, where=set_where))
    return findings


def _why(reason: str) -> str:
    if reason.startswith("default:"):
        return "it defaults to a literal when the variable is unset, and " + _why(
            reason.removeprefix("default:")
        )
    if reason == "name":
        return "its name says it is a secret"
    if reason == "placeholder":
        return "a well-known default value: a weak credential anyone can guess, not a leak"
    return f"its value has a known key format: {reason.replace('-', ' ')}"


def _secret_finding(hit: SecretHit, *, subject: str, location: Location, where: str) -> Finding:
    why = _why(hit.reason)
    weak = hit.reason.endswith("placeholder")
    return LiteralSecret.finding(
        f"{subject} sets {hit.name} to a literal value in {where} ({why}); value redacted, "
        f"sha256 prefix {hit.value_sha256_prefix}.",
        locations=[location],
        fix=Fix(
            f"Remove the literal {hit.name} from {where}, pass it at run time from a secret "
            f"store (`--env {hit.name}` passes the caller's value through), and rotate it: "
            "anyone who can read the image or the config has it.",
            snippet=escape.snippet(f"--env {hit.name}"),
        ),
        evidence={
            "subject": subject,
            "variable": hit.name,
            "set_where": where,
            "detected_by": hit.reason,
            "value": "redacted",
            "value_sha256_prefix": hit.value_sha256_prefix,
        },
        severity=Severity.MEDIUM if weak else None,
    )


def check_history_secrets(image: ImageFacts) -> list[Finding]:
    """AG402 for secrets in build steps (`ENV`, `ARG`, `RUN export X=...`, build args).

    A step that sets the same variable to the same value as the image config's ``Env``
    is not reported twice: the config finding cites it.
    """
    config_hits = {
        (h.name, h.value_sha256_prefix)
        for h in (classify(n, v) for n, v in image.config.env)
        if h is not None
    }
    layer_of = _layer_for_history(image)
    findings: list[Finding] = []
    for index, entry in enumerate(image.config.history):
        if not entry.created_by:
            continue
        hits = scan_text(entry.created_by)
        seen: set[tuple[str, str]] = set()
        for hit, _span in hits:
            key = (hit.name, hit.value_sha256_prefix)
            if key in config_hits or key in seen:
                continue
            seen.add(key)
            step = redact_step(entry.created_by)
            findings.append(
                _secret_finding(
                    hit,
                    subject=f"image {image.target}",
                    location=Location(layer=layer_of.get(index), note=f"history step {index}"),
                    where=f"build history step {index} ({_shorten(step)})",
                )
            )
    return findings


def _layer_for_history(image: ImageFacts) -> dict[int, str]:
    """History index -> layer digest, pairing non-empty history entries with layers in order."""
    out: dict[int, str] = {}
    layers = iter(image.layers)
    for index, entry in enumerate(image.config.history):
        if entry.empty_layer:
            continue
        layer = next(layers, None)
        if layer is None:
            break
        out[index] = layer.digest
    return out


def _shorten(text: str, limit: int = 120) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."

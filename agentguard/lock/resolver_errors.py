"""What a resolver's failure was, read from its messages: a stable code, whether trying again
may help, and what to do instead."""

from __future__ import annotations

from agentguard import redact


class ResolverError(Exception):
    def __init__(
        self, message: str, *, code: str, retryable: bool, remedy: str | None = None
    ) -> None:
        super().__init__(redact.url(message))
        self.code = code
        self.retryable = retryable
        self.remedy = remedy


def classify(stderr: str) -> ResolverError:
    text = stderr.strip()
    lines = [ln for ln in text.splitlines() if ln.strip()]
    summary = (
        " ".join(ln.strip() for ln in lines[:6])[:600] or "the resolver failed without a message"
    )
    low = text.lower()
    if any(k in low for k in ("401 unauthorized", "403 forbidden", "lack of valid authentication")):
        # uv files a page it may not read as "not found", and says why in a hint
        return ResolverError(
            summary,
            code="index-auth-failed",
            retryable=False,
            remedy="Give the index's login: in the --index-url (user:password@), in netrc, "
            "or in the keyring (UV_KEYRING_PROVIDER=subprocess); then re-run.",
        )
    if (
        "not found in the package registry" in low
        or "no matching distribution" in low
        or ("could not find a version that satisfies" in low and "no versions" in low)
    ):
        return ResolverError(
            summary,
            code="unknown-package",
            retryable=False,
            remedy="Check the package name and the index; fix the requirement.",
        )
    if any(
        k in low
        for k in (
            "failed to fetch",
            "error sending request",
            "dns error",
            "connection refused",
            "timed out",
            "failed to connect",
            "network is unreachable",
            "connection reset",
            "server error",
            "500 internal",
            "502 bad gateway",
            "503 service",
        )
    ):
        return ResolverError(
            summary,
            code="index-unreachable",
            retryable=True,
            remedy="Check network access to the index (or --index-url), then re-run.",
        )
    if "no usable wheels" in low:  # uv with --only-binary and an sdist-only requirement
        return ResolverError(
            summary,
            code="sdist-only",
            retryable=False,
            remedy="A requirement is published only as an sdist, and building it would run "
            "its code: pick a version that ships wheels, or review the sdist and re-run "
            "without --only-binary.",
        )
    if "received some unexpected" in low:  # uv: the index answered, but not an index page
        return ResolverError(
            summary,
            code="index-garbage",
            retryable=True,
            remedy="Check that the index URL points at a package index (it answered "
            "something else), then re-run.",
        )
    if (
        "no solution found" in low
        or "resolutionimpossible" in low
        or "could not find a version" in low
    ):
        return ResolverError(
            summary,
            code="unresolvable",
            retryable=False,
            remedy="Loosen or correct the conflicting requirements named above.",
        )
    if "failed to build" in low or "build backend" in low:
        return ResolverError(
            summary,
            code="sdist-build-failed",
            retryable=False,
            remedy="Resolve with --only-binary, or pick a version that ships wheels.",
        )
    return ResolverError(summary, code="resolver-failed", retryable=False)

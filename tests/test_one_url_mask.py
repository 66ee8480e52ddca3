"""One URL redactor: every path a URL leaves the process by masks it the same way.

The paths: a report (:func:`redact.text`, :func:`redact.scrub`), the lock code's messages
(resolver and index errors), what the lock files write of an index (:func:`clean_url`,
the login taken out), install facts and the findings built from them. Each is compared
with :func:`redact.url` on generated URLs: a second masker (another mask, another idea of
a secret query name) makes one of them differ.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import redact
from agentguard.inspect.project.install_facts import find_installs
from agentguard.lock.configured import Configured, key
from agentguard.lock.pages import IndexError_
from agentguard.lock.resolver_errors import ResolverError
from agentguard.lock.urls import clean_url, split_userinfo
from agentguard.rules.buildfiles import check_unlocked_installs

# Secrets are told apart from the rest of a URL: they start "Z9" (hosts and paths are
# lower case letters).
_SECRET = st.text(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.~!$*+@%",
    min_size=4,
    max_size=20,
).map(lambda s: "Z9" + s)
_WORD = st.text("abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
_SECRET_QUERY = st.sampled_from(
    [
        "token",
        "access_token",
        "api_key",
        "apiKey",
        "sig",
        "X-Amz-Signature",
        "pwd",
        "session",
        "key",
    ]
)
_PLAIN_QUERY = st.sampled_from(["page", "format", "name", "v"])


@st.composite
def secret_urls(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A URL holding secrets (in its userinfo and/or query), and those secrets."""
    secrets: list[str] = []
    scheme = draw(st.sampled_from(["https", "http", "git+https"]))
    info = ""
    shape = draw(st.sampled_from(["user:pass", "token", "none"]))
    if shape == "user:pass":
        password = draw(_SECRET)
        info = f"{draw(_WORD)}:{password}@"
        secrets.append(password)
    elif shape == "token":
        token = draw(_SECRET.filter(lambda s: ":" not in s))
        info = f"{token}@"
        secrets.append(token)
    url = f"{scheme}://{info}{draw(_WORD)}.example/{draw(_WORD)}/simple"
    params = []
    for _ in range(draw(st.integers(0 if secrets else 1, 3))):
        if draw(st.booleans()) or not secrets:
            value = draw(_SECRET.filter(lambda s: not set(s) & set("&#@%")))
            params.append(f"{draw(_SECRET_QUERY)}={value}")
            secrets.append(value)
        else:
            params.append(f"{draw(_PLAIN_QUERY)}={draw(_WORD)}")
    if params:
        url += "?" + "&".join(params)
    return url, secrets


@settings(max_examples=300, deadline=None)
@given(secret_urls())
def test_every_path_masks_a_url_the_one_way(case: tuple[str, list[str]]) -> None:
    url, secrets = case
    shown = redact.url(url)
    for secret in secrets:
        assert secret not in shown, (url, shown)
    assert redact.MASK in shown and "***" not in shown
    assert redact.url(shown) == shown  # masked once is masked for good

    # reports, logs, error text
    assert redact.text(url) == shown
    assert redact.scrub({"index": url, "argv": ["uv", "--index-url", url]}) == {
        "index": shown,
        "argv": ["uv", "--index-url", shown],
    }
    # the lock code's messages
    assert str(ResolverError(f"resolving failed at {url} (503)", code="x", retryable=True)) == (
        f"resolving failed at {shown} (503)"
    )
    assert str(IndexError_(f"{url}: not found", code="x", retryable=False)) == f"{shown}: not found"
    # what the lock files write of an index: the login out, the rest masked the one way
    written = clean_url(url)
    assert written == redact.url(split_userinfo(url)[0])
    assert "@" not in written.split("?")[0]
    for secret in secrets:
        assert secret not in written
    if "@" not in url.split("?")[0]:
        assert written == shown
    # install facts, and the finding built from them
    [install] = find_installs(
        f"pip install --index-url '{url}' anthropic==0.40.0",
        path="Dockerfile",
        line=3,
        phase="build",
    )
    assert install.text == f"pip install --index-url {shown} anthropic==0.40.0"
    [finding] = check_unlocked_installs([install], {}, frozenset({"anthropic"}))
    assert finding.evidence["command"] == install.text
    assert redact.scrub(finding.to_json())["evidence"]["command"] == install.text  # type: ignore[index]


def test_a_lock_an_older_version_wrote_with_stars_still_reads_as_the_same_index() -> None:
    """Older locks masked with ``***``; the header is compared, never contacted, and the
    same index reads as the same index whatever mask it was written with."""
    configured = Configured(("https://alice:pw@corp.example/simple/?token=Tk-123",))
    assert key("https://corp.example/simple?token=***") == key(
        "https://corp.example/simple?token=REDACTED"
    )
    assert configured.skipped(["https://corp.example/simple?token=***"], "requirements.lock") == []
    assert configured.skipped(["https://corp.example/simple?token=REDACTED"], "x") == []
    [other] = configured.skipped(["https://evil.example/simple"], "requirements.lock")
    assert (other.kind, other.name, other.status.value) == (
        "index",
        "https://evil.example/simple",
        "skipped",
    )

"""Recognising literal secrets in assignments, and redacting build steps."""

from __future__ import annotations

from agentguard.rules.secret_values import assignments, classify, redact_step, value_fingerprint


def test_secret_by_name_by_value_format_and_not_secret() -> None:
    cases = {
        ("ANTHROPIC_API_KEY", "sk-ant-api03-" + "a" * 30): "anthropic-or-openai-key",
        ("WHATEVER", "ghp_" + "a" * 36): "github-token",
        ("AWS_KEY_ID", "AKIA" + "A" * 16): "aws-access-key-id",
        ("DATABASE_URL", "postgres://app:s3cret@db:5432/app"): "credentials-in-url",
        ("DB_PASSWORD", "hunter2"): "name",
        ("GITHUB_PAT", "abc123def"): "name",
        ("AWS_SECRET_ACCESS_KEY", "wJalrXUtnFEMI"): "name",
    }
    for (name, value), reason in cases.items():
        hit = classify(name, value)
        assert hit is not None and hit.reason == reason, (name, hit)
        assert hit.value_sha256_prefix == value_fingerprint(value)
    for name, value in [
        ("ANTHROPIC_API_KEY", ""),
        ("ANTHROPIC_API_KEY", "$ANTHROPIC_API_KEY"),
        ("ANTHROPIC_API_KEY", "${ANTHROPIC_API_KEY:-}"),
        ("GPG_KEY", "7169605F62C751356D054A26A821E680E5FA6305"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("HF_HUB_DISABLE_TOKEN", "1"),
        ("DB_PASSWORD_FILE", "/run/secrets/db"),
        ("AUTH_HEADER_TOKEN", "Bearer ${TOKEN}"),
        ("PATH", "/usr/bin"),
        ("PWD", "/app"),
    ]:
        assert classify(name, value) is None, name


def test_a_placeholder_to_fill_in_is_no_secret() -> None:
    """Seen in the field as AG402 critical: values that stand for a secret still to be
    filled in (a README's `<YOUR_TOKEN>`, a compose file's `xxx`) work as no credential."""
    for name, value in [
        ("GITHUB_TOKEN", "<YOUR_TOKEN>"),
        ("OPENAI_API_KEY", "xxx"),
        ("OPENAI_API_KEY", "sk-xxxxxxxxxxxx"),
        ("ANTHROPIC_API_KEY", "your-api-key-here"),
        ("API_KEY", "YOUR_API_KEY"),
        ("SECRET_KEY", "replace_me"),
        ("TAVILY_API_KEY", "[your tavily key]"),
        ("DB_PASSWORD", "****"),
    ]:
        assert classify(name, value) is None, (name, value)
    # real values and weak ones stay findings
    assert classify("DB_PASSWORD", "hunter2") is not None
    assert classify("DB_PASSWORD", "postgres") is not None
    assert classify("TOKEN", "ghp_" + "a1B2" * 9) is not None
    assert classify("API_KEY", "fakeAPIkey9f8e7d") is not None


def test_assignments_in_build_steps() -> None:
    assert [(n, v) for n, v, _ in assignments("ENV A=1 B=\"two words\" C='x'")] == [
        ("A", "1"),
        ("B", "two words"),
        ("C", "x"),
    ]
    assert [(n, v) for n, v, _ in assignments("/bin/sh -c #(nop)  ENV API_TOKEN abc123")] == [
        ("API_TOKEN", "abc123")
    ]
    assert [(n, v) for n, v, _ in assignments("RUN |2 A=1 B=2 /bin/sh -c make")] == [
        ("A", "1"),
        ("B", "2"),
    ]


def test_redacted_step_keeps_the_command_and_hides_every_secret() -> None:
    step = "RUN |1 HF_TOKEN=hf_abcdefghijklmnopqrstuvwx /bin/sh -c export DB_PASSWORD=x9 && run"
    assert (
        redact_step(step)
        == "RUN |1 HF_TOKEN=REDACTED /bin/sh -c export DB_PASSWORD=REDACTED && run"
    )
    assert redact_step("COPY . /app") == "COPY . /app"

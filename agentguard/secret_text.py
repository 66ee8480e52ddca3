"""Recognising literal secrets in environment assignments, and redacting them.

Pure string functions used by AG402 (image config, build history, container and compose
environments), by the facts' JSON forms and by the gatherers' summaries. A value is never
returned or logged: callers get the variable's name, why it looks secret, and a short hash
prefix to correlate the same value across places.
"""

from __future__ import annotations

import hashlib
import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from agentguard.redact import mask_value

# Name parts (split on "_") that say "this holds a secret".
_SECRET_PARTS = frozenset(
    {
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "APIKEY",
        "CREDENTIAL",
        "CREDENTIALS",
        "PAT",
    }
)
# Two consecutive parts that say it ("ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY").
_SECRET_PAIRS = frozenset(
    {
        ("API", "KEY"),
        ("ACCESS", "KEY"),
        ("SECRET", "KEY"),
        ("PRIVATE", "KEY"),
        ("SIGNING", "KEY"),
        ("ENCRYPTION", "KEY"),
        ("MASTER", "KEY"),
        ("AUTH", "KEY"),
        ("DB", "PASS"),
    }
)
# Suffixes naming a reference to a secret, not the secret ("..._PASSWORD_FILE=/run/secrets/x").
_REFERENCE_SUFFIXES = ("_FILE", "_PATH", "_DIR", "_ENV", "_NAME", "_ID_FILE")
# Well-known public values that only look secret by name (official images set GPG_KEY).
_NOT_SECRET_NAMES = frozenset({"GPG_KEY", "PWD", "OLDPWD", "TOKENIZERS_PARALLELISM"})
_NOT_SECRET_VALUES = frozenset(
    {"0", "1", "true", "false", "yes", "no", "none", "null", "on", "off"}
)

# Value formats of real keys, whatever the variable is called.
_VALUE_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("anthropic-or-openai-key", re.compile(r"^sk-[A-Za-z0-9_\-]{16,}$")),
    ("github-token", re.compile(r"^(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}$|^github_pat_\w{20,}$")),
    ("gitlab-token", re.compile(r"^glpat-[A-Za-z0-9_\-]{16,}$")),
    ("aws-access-key-id", re.compile(r"^(AKIA|ASIA)[0-9A-Z]{16}$")),
    ("google-api-key", re.compile(r"^AIza[0-9A-Za-z_\-]{30,}$")),
    ("huggingface-token", re.compile(r"^hf_[A-Za-z0-9]{20,}$")),
    ("slack-token", re.compile(r"^xox[abprs]-[A-Za-z0-9\-]{10,}$")),
    ("credentials-in-url", re.compile(r"^[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s@]+@")),
)

_PASS_THROUGH = re.compile(
    r"^\$(\{[A-Za-z_][A-Za-z0-9_]*([:?+\-=][^}]*)?\}|[A-Za-z_][A-Za-z0-9_]*)$"
)


@dataclass(frozen=True)
class SecretHit:
    """A variable that holds a literal secret. Carries no value, only a hash prefix."""

    name: str
    reason: str  # "name" (the variable is called like a secret) or a value-format name
    value_sha256_prefix: str


def value_fingerprint(value: str) -> str:
    """First 8 hex digits of the value's SHA-256: enough to correlate, not to recover."""
    return hashlib.sha256(value.encode("utf-8", "surrogateescape")).hexdigest()[:8]


# A GitHub Actions expression (`${{ secrets.KEY }}`): the runner fills it in.
_CI_EXPRESSION = re.compile(r"^\$\{\{[^{}]*\}\}$")


def is_pass_through(value: str) -> bool:
    """`$VAR` or `${VAR}` (with or without a default), or a workflow expression
    `${{ ... }}`: the value comes from elsewhere."""
    text = value.strip()
    return bool(_PASS_THROUGH.match(text) or _CI_EXPRESSION.match(text))


def name_says_secret(name: str) -> bool:
    upper = name.upper()
    if upper in _NOT_SECRET_NAMES or upper.endswith(_REFERENCE_SUFFIXES):
        return False
    parts = [p for p in upper.split("_") if p]
    if any(p in _SECRET_PARTS for p in parts):
        return True
    return any((a, b) in _SECRET_PAIRS for a, b in itertools.pairwise(parts))


def value_format(value: str) -> str | None:
    for label, pattern in _VALUE_PATTERNS:
        if pattern.search(value):
            return label
    return None


# Values everybody knows (image defaults, tutorial values): a weak credential, not a
# leaked secret. Reported as such, at a lower grade.
_PLACEHOLDERS = frozenset(
    {
        "postgres",
        "password",
        "passwd",
        "changeme",
        "change-me",
        "change_me",
        "secret",
        "example",
        "admin",
        "root",
        "test",
        "testing",
        "dev",
        "pass",
        "123456",
        "12345678",
        "mysql",
        "redis",
        "guest",
        "default",
    }
)
# Values that stand for a secret still to be filled in: no credential works with them, so
# nothing leaks (the deployment fails instead). A placeholder in brackets, a run of one
# character (optionally after a token prefix: `sk-xxxx`), or words that say "put yours here".
_FILL_IN = re.compile(
    r"^(?:<[^<>]*>|\[[^\[\]]*\]|\{[^{}]*\}"
    r"|(?:[a-z]{1,6}[-_])*([x*#.])\1{2,}"
    r"|.*\b(?:your|yours|here|replace|replace[-_]?me|insert|placeholder|dummy|fake|redacted"
    r"|todo|fixme|fill[-_]?in)\b.*)$",
    re.IGNORECASE,
)
_WORDISH = re.compile(r"[_\-.]+")


def is_fill_in(value: str) -> bool:
    """The value is a placeholder for a secret (``<YOUR_TOKEN>``, ``xxx``, ``sk-xxxx``,
    ``your-api-key-here``), not a credential."""
    return bool(_FILL_IN.match(value)) or bool(_FILL_IN.match(_WORDISH.sub(" ", value)))


_DEFAULT_OF = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*):?[-=]([^}]*)\}$")
_URL_PASSWORD = re.compile(r"^[a-z][a-z0-9+.\-]*://([^/\s:@]+):([^/\s@]+)@")


def classify(name: str, value: str) -> SecretHit | None:
    """A hit when ``value`` is a literal secret; None for empty or passed-through values.

    ``${NAME:-literal}`` passes the caller's value through, but the literal is what runs
    when it is unset: the default is classified (reason ``default:<why>``). A value
    everybody knows (``postgres``, ``changeme``) is a ``placeholder`` hit."""
    stripped = value.strip().strip("\"'")
    default = _DEFAULT_OF.match(stripped)
    if default is not None:
        inner = classify(name, default.group(2))
        if inner is None:
            return None
        return SecretHit(name, f"default:{inner.reason}", inner.value_sha256_prefix)
    if not stripped or is_pass_through(stripped) or is_fill_in(stripped):
        return None
    fmt = value_format(stripped)
    if fmt is not None:
        url = _URL_PASSWORD.match(stripped) if fmt == "credentials-in-url" else None
        if url is not None and url.group(2).lower() in _PLACEHOLDERS | {url.group(1).lower()}:
            return SecretHit(name, "placeholder", value_fingerprint(stripped))
        return SecretHit(name, fmt, value_fingerprint(stripped))
    if stripped.lower() in _NOT_SECRET_VALUES or not name_says_secret(name):
        return None
    if stripped.lower() in _PLACEHOLDERS:
        return SecretHit(name, "placeholder", value_fingerprint(stripped))
    if "$" in stripped and re.search(r"\$\{?[A-Za-z_]", stripped):
        return None  # built from other variables at run time, e.g. "Bearer ${TOKEN}"
    return SecretHit(name, "name", value_fingerprint(stripped))


# NAME=value, NAME="value", NAME='value' anywhere in a build step.
_ASSIGNMENT = re.compile(
    r"(?<![\w$/.\-])([A-Za-z_][A-Za-z0-9_]*)=(\"(?:[^\"\\]|\\.)*\"|'[^']*'|[^\s;&|)]*)"
)
# The legacy `ENV NAME value` form (no "=").
_ENV_SPACE_FORM = re.compile(r"\bENV\s+([A-Za-z_][A-Za-z0-9_]*)\s+(?!\S*=)(\S.*?)\s*$")


def assignments(text: str) -> list[tuple[str, str, tuple[int, int]]]:
    """Every `NAME=value` in a build step (``created_by``), with the value's span."""
    found: list[tuple[str, str, tuple[int, int]]] = []
    for m in _ASSIGNMENT.finditer(text):
        raw = m.group(2)
        value = raw[1:-1] if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'" else raw
        found.append((m.group(1), value, m.span(2)))
    if not found:
        m2 = _ENV_SPACE_FORM.search(text)
        if m2:
            found.append((m2.group(1), m2.group(2), m2.span(2)))
    return found


def scan_text(text: str) -> list[tuple[SecretHit, tuple[int, int]]]:
    """The secret assignments in a build step, each with the span of its value."""
    hits: list[tuple[SecretHit, tuple[int, int]]] = []
    for name, value, span in assignments(text):
        hit = classify(name, value)
        if hit is not None:
            hits.append((hit, span))
    return hits


def redact(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with each span replaced by the one mask (spans may overlap or repeat)."""
    out = text
    for start, end in sorted(set(spans), reverse=True):
        out = out[:start] + mask_value() + out[end:]
    return out


def redact_step(text: str) -> str:
    """A build step with every secret value replaced by the one mask: safe to show."""
    return redact(text, [span for _, span in scan_text(text)])


def redact_argv(argv: Sequence[str] | None) -> list[str] | None:
    if argv is None:
        return None
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(mask_value())
            hide_next = False
            continue
        name, eq, value = arg.partition("=")
        flag = name.lstrip("-").replace("-", "_")
        if eq and classify(flag, value) is not None:
            out.append(f"{name}={mask_value()}")
        elif value_format(arg) is not None:
            out.append(mask_value())
        else:
            out.append(redact_step(arg))
            hide_next = arg.startswith("-") and not eq and name_says_secret(flag)
    return out

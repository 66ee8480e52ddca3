"""The redactor: what it removes, in every spelling, and what it leaves alone."""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import NamedTuple

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard import redact

V = "v4lue-S3cret"


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        (f"--token {V}", "--token REDACTED"),
        (f"--password={V}", "--password=REDACTED"),
        (f"--API-Key {V}", "--API-Key REDACTED"),
        (f"--api_key='{V}'", "--api_key='REDACTED'"),
        (f"--clientSecret {V}", "--clientSecret REDACTED"),
        (f'"--token", "{V}"', '"--token", "REDACTED"'),
        (f"GITHUB_TOKEN={V}", "GITHUB_TOKEN=REDACTED"),
        (f"X-Api-Key: {V}", "X-Api-Key: REDACTED"),
        (f"Authorization: Bearer {V}", "Authorization: REDACTED"),
        (f"https://user:{V}@index.example/simple", "https://user:REDACTED@index.example/simple"),
        (f"git+https://{V}@github.com/o/r", "git+https://REDACTED@github.com/o/r"),
        (f"https://h/x?token={V}&page=2", "https://h/x?token=REDACTED&page=2"),
        (f"https://h/x?sig={V}", "https://h/x?sig=REDACTED"),
        (f"-x --token {V}", "-x --token REDACTED"),  # found by the fuzz profile
        (f"a=GITHUB_TOKEN={V}", "a=GITHUB_TOKEN=REDACTED"),
        (f"--token --password {V}", "--token --password REDACTED"),
        ("ghp_" + "a" * 36, "REDACTED"),
        ("key AKIA" + "B" * 16 + " end", "key REDACTED end"),
        ("sk-ant-api03-" + "c" * 30, "REDACTED"),
        ("-----BEGIN RSA PRIVATE KEY-----\nMIIB\n-----END RSA PRIVATE KEY-----", "REDACTED"),
    ],
)
def test_secrets_are_redacted_in_any_spelling(given: str, expected: str) -> None:
    assert redact.text(given) == expected


@pytest.mark.parametrize(
    "kept",
    [
        "--max-tokens 4096",
        "--token-file /run/secrets/t",
        "--token $GITHUB_TOKEN",
        "--password ${DB_PASSWORD}",
        "author: Jane",
        "PWD=/home/runner/work",
        "app/[slug]/page.tsx",
        "git@github.com:o/r.git",
        "tokenizer=gpt2",
        # already masked by the lock's URL cleaner (lock/urls.py): left as it says
        "https://***@index.example/simple?token=***&page=2",
        # a secret named without a value (a compose environment passing it through): the
        # next line is not its value (found merging harden's compose writer)
        "    environment:\n      AGENT_API_KEY:\n      MODE: prod\n",
        # a path whose last part ends in a secret word is not a flag (seen on OpenHands'
        # compose file: the AG204 message lost its words to the mask)
        "mounts ~/.git-credentials (credentials folder .git-credentials) at /root/.git-credentials"
        " (read-only).",
        "cp ./my-token ./x",
    ],
)
def test_what_names_no_secret_is_left_alone(kept: str) -> None:
    assert redact.text(kept) == kept


def test_data_is_redacted_by_key_by_flag_pair_and_by_name_value_pair() -> None:
    data = {
        "command": ["claude", "--api-key", V, "-p", "hi"],
        "env": [{"name": "OPENAI_API_KEY", "value": V}, {"name": "HOME", "value": "/root"}],
        "headers": {"X-Api-Key": V, "Accept": "json"},
        "paths": ("a\udcff.py",),
    }
    assert redact.scrub(data) == {
        "command": ["claude", "--api-key", "REDACTED", "-p", "hi"],
        "env": [
            {"name": "OPENAI_API_KEY", "value": "REDACTED"},
            {"name": "HOME", "value": "/root"},
        ],
        "headers": {"X-Api-Key": "REDACTED", "Accept": "json"},
        "paths": ("a\\xff.py",),
    }


def test_a_quotation_is_short_and_redacted() -> None:
    quoted = redact.quote(f"GITHUB_TOKEN={V} " + "x" * 200)
    assert quoted == "'GITHUB_TOKEN=REDACTED " + "x" * 58 + "...'"


# -- scrub's walk: the same result as a plain copy-everything walk ---------------------


@dataclasses.dataclass(frozen=True)
class _Held:
    name: str
    value: object
    extra: object = None


class _Kind(str, enum.Enum):
    SHELL = "--token"


class _Pair(NamedTuple):
    flag: object
    value: object


def _plain_scrub(value: object, key: str | None = None) -> object:
    """The walk written the simple way (every container copied): the reference."""
    if isinstance(value, str):
        if key is not None and redact.is_secret_name(key) and _plain_secret(value):
            return redact.MASK
        return redact.text(value)
    if isinstance(value, Mapping):
        pair = "value" in value and isinstance(value.get("name"), str)
        secret_pair = pair and redact.is_secret_name(value["name"])
        return {
            redact.text(k): (
                redact.MASK
                if secret_pair and k == "value" and isinstance(v, str) and _plain_secret(v)
                else _plain_scrub(v, k)
            )
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        items = [_plain_scrub(v) for v in value]
        for i in range(len(value) - 1):
            flag, nxt = value[i], value[i + 1]
            if (
                isinstance(flag, str)
                and isinstance(nxt, str)
                and flag.startswith("-")
                and "=" not in flag
                and redact.is_secret_name(flag.lstrip("-"))
                and _plain_secret(nxt)
            ):
                items[i + 1] = redact.MASK
        return tuple(items) if isinstance(value, tuple) else items
    if isinstance(value, _Held):  # a field is replaced only by a value that differs
        fields = [value.name, value.value, value.extra]
        new = [redact.text(value.name), _plain_scrub(value.value), _plain_scrub(value.extra)]
        held = value.value
        if redact.is_secret_name(value.name) and isinstance(held, str) and _plain_secret(held):
            new[1] = redact.MASK
        return _Held(*(n if n != o else o for n, o in zip(new, fields, strict=True)))
    return value


def _plain_secret(value: str) -> bool:
    return not (
        not value
        or value == redact.MASK
        or value.startswith(("$", "-"))
        or re.fullmatch(r"<[^<>]*>|\*+", value) is not None
    )


_TEXTS = ["hi", "--token", "--api-key", V, f"GITHUB_TOKEN={V}", "$TOKEN", "-p", ""]
_LEAF = st.one_of(
    st.sampled_from(_TEXTS),
    # an equal text that is another object (the redactor caches the text of each string)
    st.sampled_from(_TEXTS).map(lambda t: "".join(list(t))),
    st.just(_Kind.SHELL),  # a text that is not plain text
    st.sampled_from(["API_KEY", "HOME", "name", "value", "password", "a\udcff"]),
    st.integers(-3, 3),
    st.booleans(),
    st.none(),
)
_KEY = st.sampled_from(["name", "value", "token", "env", "command", "X-Api-Key", f"k{V}"])
_DATA = st.recursive(
    _LEAF,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.lists(inner, max_size=5).map(tuple),
        st.dictionaries(_KEY, inner, max_size=4),
        st.builds(_Held, st.sampled_from(["API_KEY", "HOME", "token"]), inner, inner),
        st.builds(_Pair, inner, inner),  # a tuple that is not a plain tuple
        st.dictionaries(_KEY, inner, max_size=3).map(MappingProxyType),  # nor a dict
    ),
    max_leaves=30,
)


@settings(max_examples=400)
@given(_DATA)
def test_scrub_equals_the_plain_walk_and_keeps_clean_containers(data: object) -> None:
    scrubbed = redact.scrub(data)
    assert repr(scrubbed) == repr(_plain_scrub(data))  # equal, and of the same types
    if repr(scrubbed) == repr(data) and type(data) in (dict, list, tuple):
        assert redact.scrub(data) is data  # nothing to redact: nothing copied


def test_a_requirement_pin_of_a_secret_sounding_package_is_not_a_secret() -> None:
    """OpenHands' lock, read by check: `locked: tiktoken==0.11.0` came out as
    `tiktoken=REDACTED` (a name ending in "token", then `=`): `==` is a pin."""
    from agentguard.redact import text

    assert text("locked: tiktoken==0.11.0.") == "locked: tiktoken==0.11.0."
    assert (
        text("tiktoken===1.0 and pytest-httpx-token==2")
        == "tiktoken===1.0 and pytest-httpx-token==2"
    )
    assert text("TIKTOKEN=abc123") == "TIKTOKEN=REDACTED"  # an assignment stays masked
    assert text("GITHUB_TOKEN: abc") == "GITHUB_TOKEN: REDACTED"

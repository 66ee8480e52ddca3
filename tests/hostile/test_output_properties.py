"""Property-based: whatever text a hostile target puts into a report (control characters,
rich markup, non-UTF-8 file names, secrets of every known shape and spelling), every output
format stays parseable and encodable, no secret survives, and the text report sends no
control character raw. The harden escapes keep generated comments and docstrings inert.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentguard.engine import make_report
from agentguard.findings import Confidence, Finding, Fix, Location, Severity, Source
from agentguard.harden.escape import comment, docstring
from agentguard.report import Format, render
from tests.hostile.profiles import hostile

pytestmark = pytest.mark.fuzz

SECRET_VALUE = "s3cr3tV4lue9"
SECRET_SHAPES = [
    "ghp_" + "Z" * 36,
    "github_pat_" + "1" * 30,
    "AKIA" + "Q" * 16,
    "sk-ant-api03-" + "k" * 30,
    "sk-proj-" + "o" * 30,
    "xoxb-" + "5" * 20,
    "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
]
# A secret value carried by a name: each spelling is a template over SECRET_VALUE.
NAMED = [
    "--token {v}",
    "--password={v}",
    "--API-KEY {v}",
    "--api_key={v}",
    "--Client-Secret '{v}'",
    '"--token", "{v}"',
    "GITHUB_TOKEN={v}",
    "X-Api-Key: {v}",
    "Authorization: Bearer {v}",
    "https://user:{v}@index.example/simple",
    "https://{v}@github.com/o/r.git",
    "https://h.example/x?token={v}&page=2",
    "aws_secret_access_key = {v}",
]
CONTROL = st.sampled_from(
    ["\x1b]52;c;ZXZpbA==\x07", "\x1b]0;title\x07", "\x1b[2J", "\r", "\n", "\x00", "\x9b", "\u202e"]
)
MARKUP = st.sampled_from(["[/x]", "[slug]", "[bold red]", "[/]", "[link=file:///etc]", "\\["])
NON_UTF8 = st.binary(min_size=1, max_size=4).map(lambda b: b.decode("utf-8", "surrogateescape"))
SECRET = st.one_of(
    st.sampled_from(SECRET_SHAPES), st.sampled_from(NAMED).map(lambda t: t.format(v=SECRET_VALUE))
)
PIECE = st.one_of(st.text(max_size=12), CONTROL, MARKUP, NON_UTF8, SECRET)
# (never empty: the report schema says a title, a message, a name has at least one character)
HOSTILE = st.lists(PIECE, min_size=1, max_size=6).map(" ".join).filter(bool)


@st.composite
def reports(draw: st.DrawFn) -> tuple[Any, list[str]]:
    texts = [draw(HOSTILE) for _ in range(9)]
    finding = Finding(
        rule_id="AG301",
        title=texts[0],
        severity=Severity.HIGH,
        confidence=Confidence.HIGH,
        message=texts[1],
        locations=(Location(path=texts[2], line=3, dependency_path=("root", texts[3])),),
        fix=Fix(texts[4], snippet=texts[5]),
        evidence={"command": ["claude", "--token", SECRET_VALUE], "value": texts[6]},
    )
    source = Source.failed("file", texts[7], texts[8], error_code="parse-error", retryable=False)
    report = make_report(
        "inspect",
        [finding],
        [source, Source.ok("file", texts[2])],
        target=texts[3],
        facts={"headers": {"X-Api-Key": SECRET_VALUE}, "env": {"API_TOKEN": SECRET_VALUE}},
        notes=(texts[6],),
    )
    return report, texts


def secrets_in(texts: list[str]) -> list[str]:
    return [s for s in [SECRET_VALUE, *SECRET_SHAPES] if any(s in t for t in texts)]


@hostile("output-formats")
@given(drawn=reports())
def test_every_format_over_hostile_text(
    drawn: tuple[Any, list[str]], sarif_schema: dict[str, Any]
) -> None:
    report, _texts = drawn
    for fmt in Format:
        out = render(report, fmt)
        out.encode("utf-8")  # no lone surrogate: every format can be written
        assert SECRET_VALUE not in out, (fmt, out)
        for shape in SECRET_SHAPES:
            assert shape not in out, (fmt, shape)
        if fmt is Format.TEXT:
            raw = [c for c in out if (ord(c) < 32 and c != "\n") or 0x7F <= ord(c) <= 0x9F]
            assert not raw, raw
            assert "\u202e" not in out
        else:
            doc = json.loads(out)
            if fmt is Format.SARIF:
                jsonschema.validate(doc, sarif_schema)


@hostile("output-formats")
@given(name=HOSTILE)
def test_harden_escapes_keep_comments_and_docstrings_inert(name: str) -> None:
    line = comment(name)
    assert "\n" not in line and "\r" not in line
    source = f'"""{docstring(name)}"""\n'
    tree = compile(source, "<hardened>", "exec", dont_inherit=True, flags=0x400)  # PyCF_ONLY_AST
    assert len(tree.body) == 1  # type: ignore[attr-defined]  # one docstring, no code
    for shape in [SECRET_VALUE, *SECRET_SHAPES]:
        assert shape not in line and shape not in source

"""No input file, however malformed, crashes the scan: it is read, or it is a failed source.

Property-based: random bytes, random text, and mutations of real fixtures (truncated,
spliced, with random characters inserted) for every kind of file this scan reads.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.engine.project import scan_container_files
from agentguard.findings import SourceStatus
from agentguard.inspect.facts import ProjectFile
from tests.inspect.containers.support import FIXTURES

NAMES = [
    "Dockerfile",
    "compose.yaml",
    ".devcontainer/devcontainer.json",
    ".dockerignore",
    "requirements.txt",
    "pyproject.toml",
]
SEEDS = {
    name: [p.read_text() for p in sorted(FIXTURES.glob(f"AG*/*/*/{name}"))] or [""]
    for name in NAMES
}
# Failure codes a malformed input may produce; anything else (a crash turned into a
# source, an unknown code) fails the test.
KNOWN_CODES = {
    "not-utf8",
    "too-deep",
    "dockerfile-parse-error",
    "pyproject-toml-error",
    *(
        f"compose-{c}"
        for c in ("syntax", "empty", "too-large", "too-deep", "duplicate-key", "schema-invalid")
    ),
    *(f"devcontainer-{c}" for c in ("syntax", "too-large", "too-deep", "duplicate-key")),
}


@st.composite
def mutated(draw: st.DrawFn, name: str) -> str:
    seed = draw(st.sampled_from(SEEDS[name]))
    ops = draw(
        st.lists(
            st.tuples(st.integers(0, 3), st.integers(0, 10_000), st.text(max_size=8)), max_size=6
        )
    )
    text = seed
    for op, pos, chunk in ops:
        pos = pos % (len(text) + 1)
        if op == 0:
            text = text[:pos]
        elif op == 1:
            text = text[:pos] + chunk + text[pos:]
        elif op == 2:
            text = text[:pos] + text[pos + len(chunk) + 1 :]
        else:
            text = (
                text[:pos]
                + draw(
                    st.sampled_from(
                        ["{", "[", "*a", "&a ", "<<EOF\n", "\\\n", '"', ":", "\x00", "\t"]
                    )
                )
                + text[pos:]
            )
    return text


def check(name: str, data: bytes) -> None:
    findings, sources, facts = scan_container_files([ProjectFile(name, data)])
    assert len(sources) == 1
    [source] = sources
    assert source.name == name
    if source.status is SourceStatus.FAILED:
        assert source.error_code in KNOWN_CODES, source
        assert source.reason
    for f in findings:
        assert f.locations and f.fix.description
    assert isinstance(facts, dict)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(name=st.sampled_from(NAMES), data=st.binary(max_size=400))
def test_random_bytes_never_crash(name: str, data: bytes) -> None:
    check(name, data)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_mutated_real_files_never_crash(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(NAMES))
    text = data.draw(mutated(name))
    check(name, text.encode("utf-8", "surrogatepass"))


@settings(max_examples=100, deadline=None)
@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_any_json_shaped_compose_or_devcontainer_is_read_or_failed(value: object) -> None:
    import json

    text = json.dumps({"services": {"agent": value}} if isinstance(value, dict) else value)
    check("compose.yaml", text.encode())
    check(".devcontainer/devcontainer.json", text.encode())

"""The requirements the reader takes without ``packaging`` (agentguard.lock.plain_requirements)
are exactly those ``packaging`` accepts and writes back unchanged: drawn from the very
pattern the reader uses, and from the requirements of real agent stacks. Anything else
still goes through ``packaging`` (a URL is still refused, a bad requirement still named)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from agentguard.errors import UsageError
from agentguard.lock import plain_requirements
from agentguard.lock.inputs import read_inputs
from agentguard.lock.start import python_floor
from tests.lock.helpers import write_project


def _packaging_floor(requires_python: str) -> str | None:
    """The floor as python_floor computed it with packaging alone (before this module)."""
    for s in SpecifierSet(requires_python):
        if s.operator in (">=", "~=", "=="):
            parts = s.version.split(".")
            return ".".join(parts[:2]) if len(parts) > 1 else f"{parts[0]}.0"
    return None


@settings(max_examples=600, deadline=None)
@given(st.from_regex(plain_requirements._PLAIN, fullmatch=True))
def test_every_plain_requirement_is_its_own_normal_form(text: str) -> None:
    assert plain_requirements.is_plain(text)
    req = Requirement(text)  # (never raises)
    assert str(req) == text
    assert req.url is None and req.marker is None and not req.extras


@settings(max_examples=300, deadline=None)
@given(st.from_regex(plain_requirements._PLAIN_PYTHON, fullmatch=True))
def test_a_plain_requires_python_has_the_floor_packaging_gives(text: str) -> None:
    SpecifierSet(text)  # (never raises)
    assert plain_requirements.plain_python_floor(text) == _packaging_floor(text)
    assert python_floor(text) == _packaging_floor(text)


# requirements as real agent stacks declare them (pyproject.toml of the field's projects)
REAL = [
    "letta-client",
    "browser-use",
    "claude-agent-sdk==0.2.95",
    "mcp>=1.23.0",
    "httpx>=0.27",
    "anyio<5",
    "pydantic~=2.11",
    "openai!=1.0.0",
    "zope.interface>5",
    "typing_extensions<=4.15.0",
    "Jinja2==3.1.6",
]
NOT_PLAIN = [
    "mcp>=1.23.0,<2",  # two specifiers: packaging orders them
    "mcp<2,>=1.23.0",
    "httpx >= 0.27",  # whitespace
    " httpx",
    "httpx>=0.27 ",
    "pydantic-ai-slim[mcp,anthropic,openai]",  # extras: packaging sorts them
    "anyio>=4; python_version >= '3.11'",  # a marker
    "pkg @ https://example.invalid/pkg-1.0.tar.gz",  # a URL: refused below
    "pkg==1.0.*",  # wildcard
    "pkg>=1.0rc1",  # pre-release
    "pkg>=1.0+local",  # local version
    "pkg===1.0",  # arbitrary equality
    "pkg~=1",  # invalid: ~= needs two release parts
    "pkg>=1!2.0",  # epoch
    "pkg>=v1.0",
    "pkg(>=1.0)",
    "-e .",
    "./local/path",
    "pkg.whl==1.0 ",
    "pkg>=1.",
    "pkg>=.1",
    "pkg\u0660>=1",  # a non-ASCII digit
    "pkg>=\u0661",
]


@pytest.mark.parametrize("text", REAL)
def test_real_plain_requirements(text: str) -> None:
    assert plain_requirements.is_plain(text)
    assert str(Requirement(text)) == text


@pytest.mark.parametrize("text", NOT_PLAIN)
def test_what_is_not_plain_goes_to_packaging(text: str) -> None:
    assert not plain_requirements.is_plain(text)


@pytest.mark.parametrize("text", ["<3.13,>=3.10", ">= 3.10", ">=3.10,<4", "~=3.10", "==3.11.*"])
def test_other_requires_python_forms_go_to_packaging(text: str) -> None:
    assert plain_requirements.plain_python_floor(text) is None
    assert python_floor(text) == _packaging_floor(text)


def test_the_reader_gives_what_packaging_gives(tmp_path: Path) -> None:
    deps = [*REAL, *NOT_PLAIN[:7]]
    inputs = read_inputs(write_project(tmp_path / "p", deps))
    normal = [str(Requirement(d)) for d in deps]
    assert inputs.requirement_lines() == list(dict.fromkeys(normal))  # (equal ones once)


@pytest.mark.parametrize(
    ("dep", "message"),
    [
        ("pkg @ https://example.invalid/pkg-1.0.tar.gz", "direct URL requirement pkg"),
        ("pkg~=1", "invalid requirement"),
        ("pkg>=1.", "invalid requirement"),
    ],
)
def test_a_url_or_a_bad_requirement_is_still_refused(
    tmp_path: Path, dep: str, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        read_inputs(write_project(tmp_path / "p", [dep]))


@pytest.mark.parametrize("requires_python", [">=3.10", ">3.x", "3.10"])
def test_requires_python_is_still_validated(tmp_path: Path, requires_python: str) -> None:
    project = write_project(tmp_path / "p", ["httpx"], requires_python=requires_python)
    if requires_python == ">=3.10":
        assert read_inputs(project).requires_python == ">=3.10"
    else:
        with pytest.raises(UsageError, match="not a valid specifier"):
            read_inputs(project)

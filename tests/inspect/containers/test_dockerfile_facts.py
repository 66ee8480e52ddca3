"""Dockerfile facts: BuildKit's parser (the dockerfile package) and the fallback agree."""

from __future__ import annotations

import pytest

from agentguard.inspect.project import dockerfile_facts
from agentguard.inspect.project.dockerfile_facts import (
    HAVE_BUILDKIT_PARSER,
    DockerfileError,
    EnvSetting,
    build_facts,
    parse_instructions,
)
from agentguard.inspect.project.dockerfile_fallback import parse_fallback
from tests.inspect.containers.support import FIXTURES

TRICKY = {
    "escape": '# escape=`\nFROM alpine AS a\nENV A=1 `\n  B="two words"\nRUN echo `\n  hi\n',
    "comments-in-continuation": "FROM a\nRUN pip install \\\n# a comment\n\n    mcp==1.0\n",
    "heredoc": "FROM a\nRUN <<EOT bash\npip install x\nEOT\nCOPY <<-EOF /x\n\thello\n\tEOF\nUSER 1\n",
    "json-and-flags": 'FROM --platform=linux/amd64 a\nRUN --mount=type=cache,target=/c ["pip", "install", "y"]\n'
    "COPY --chown=1:1 --from=b . /app\nENV OLD spaced value\n",
}
FILES = sorted(FIXTURES.glob("*/*/*/Dockerfile")) + sorted(FIXTURES.glob("*/*/*/*.Dockerfile"))


def _comparable(text: str) -> list[tuple[object, ...]]:
    out = []
    for ins in parse_fallback(text):
        out.append(
            (ins.cmd, ins.flags, ins.args, ins.start_line, ins.end_line, ins.heredocs, ins.json)
        )
    return out


@pytest.mark.parametrize("text", [*TRICKY.values(), *(p.read_text() for p in FILES)])
def test_fallback_agrees_with_buildkit_on_what_the_rules_use(text: str) -> None:
    fallback = _comparable(text)
    if HAVE_BUILDKIT_PARSER:
        buildkit, _ = parse_instructions(text)
        assert fallback == [
            (i.cmd, i.flags, i.args, i.start_line, i.end_line, i.heredocs, i.json) for i in buildkit
        ]
    assert fallback


def test_facts_are_the_same_from_either_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    text = TRICKY["escape"] + "FROM a AS final\nARG TOKEN\nWORKDIR app\nWORKDIR sub\nUSER 0\n"
    first = build_facts("Dockerfile", text)
    monkeypatch.setattr(dockerfile_facts, "HAVE_BUILDKIT_PARSER", False)
    second = build_facts("Dockerfile", text)
    assert second.parser == "fallback"
    assert first.stages == second.stages
    final = second.stages[-1]
    assert (final.name, final.user, final.user_line, final.workdir) == (
        "final",
        "0",
        11,
        "/app/sub",
    )
    assert final.env == (EnvSetting("TOKEN", None, 8, "ARG"),)
    assert second.stages[0].env == (
        EnvSetting("A", "1", 3, "ENV"),
        EnvSetting("B", "two words", 3, "ENV"),
    )


def test_user_and_workdir_follow_stage_bases() -> None:
    df = build_facts(
        "Dockerfile",
        "FROM python:3.12 AS base\nWORKDIR /srv\nUSER app\nFROM base AS final\nCOPY . .\n",
    )
    final = df.stages[-1]
    assert df.effective_user(final) == ("app", 3)
    assert df.effective_workdir(final) == ("/srv", 2)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "file with no instructions"),
        ("RUN echo hi\n", "line 1: RUN before the first FROM"),
        ("FROM a\nBOGUS thing\n", "line 2: unknown instruction 'BOGUS'"),
        ("FROM\n", "line 1: FROM without an image"),
        ("FROM a\n\x00\n", "file contains NUL bytes"),
        ("\\", "line 1: not an instruction"),  # only a line continuation (found by fuzzing)
    ],
)
def test_not_a_dockerfile(text: str, message: str) -> None:
    with pytest.raises(DockerfileError, match=message):
        build_facts("Dockerfile", text)


def test_the_parity_check_covers_the_fixture_dockerfiles() -> None:
    assert len(FILES) >= 10

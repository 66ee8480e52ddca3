"""Any command line and any wrapper body: following them never raises, and every launch the
config names ends in a source (ok, or skipped with a reason), never in silence."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.findings import SourceStatus
from agentguard.inspect.facts import FileContent, FileEntry, ImageConfig, ImageFacts
from agentguard.inspect.image.agentfiles import find_agent
from agentguard.inspect.image.agentplan import plan_for

LAYER = "sha256:" + "ef" * 32
WORDS = st.sampled_from(
    (
        *("sh", "-c", "exec", "python3", "-m", "node", "claude", "-p", "tini", "--", "env"),
        *("A=1", "gosu", "u", "/start", "/opt/a/bot.py", "bot.py", "$@", '"$@"', "uv", "run"),
        *("npx", "@anthropic-ai/claude-code", "bash", "/bin/busybox", "..", "/", "", "x;y"),
        *("'", '"'),
    )
)
ARGV = st.lists(st.one_of(WORDS, st.text(max_size=12)), max_size=8)


@settings(max_examples=300, deadline=None)
@given(entrypoint=st.none() | ARGV, cmd=st.none() | ARGV, body=st.text(max_size=200))
def test_following_any_command_line_ends_in_sources(
    entrypoint: list[str] | None, cmd: list[str] | None, body: str
) -> None:
    files = {"/start": ("#!/bin/sh\n" + body).encode(), "/opt/a/bot.py": b"import os\n"}
    facts = ImageFacts(
        target="img",
        image_id=None,
        repo_digests=(),
        config=ImageConfig(
            user="",
            workdir="/app",
            entrypoint=tuple(entrypoint) if entrypoint is not None else None,
            cmd=tuple(cmd) if cmd is not None else None,
        ),
        layers=(),
        workdir_entries=(),
        workdir_entries_truncated=False,
        contents=tuple(FileContent(p, LAYER, d) for p, d in files.items()),
        installed=(),
        agent_entries=tuple(
            FileEntry(p, 0, LAYER, "file", len(d), 0o755) for p, d in files.items()
        ),
    )
    plan = plan_for(facts.config.entrypoint, facts.config.cmd, (), "app")
    agent = find_agent(facts)
    launched = [s for s in agent.sources if s.kind == "image-agent" and s.name != "/etc/passwd"]
    if plan.launches:
        assert launched
        assert all(s.status in (SourceStatus.OK, SourceStatus.SKIPPED) for s in launched)
        assert all(s.reason for s in launched)
    else:
        assert [s.reason for s in launched] == ["the image config sets no ENTRYPOINT or CMD"]

"""No input file, however malformed, crashes the run: it is read, or it is a failed source."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentguard.engine.project import scan_files
from agentguard.findings import SourceStatus
from agentguard.inspect.facts import ProjectFile

FIXTURES = Path(__file__).resolve().parent.parent.parent / "fixtures"
NAMES = [
    "agent.py",
    "agent.ts",
    "agent.mjs",
    ".claude/settings.json",
    ".mcp.json",
    "scripts/run.sh",
    "package.json",
]
# Real fixture files, to mutate: truncations and splices of real agent code reach deep
# into the parsers, where random bytes alone stop at the first token.
SEEDS = sorted(
    p.read_bytes()
    for p in FIXTURES.glob("AG[23][0-9][0-9]/*/*/**/*")
    if p.is_file() and p.name != "expected.json"
)
PREFIXES = [
    b"from claude_agent_sdk import ClaudeAgentOptions, query\n",
    b'import { query } from "@anthropic-ai/claude-agent-sdk";\n',
    b"claude -p x --allowedTools ",
    b'{"permissions": {"allow": ',
    b'{"mcpServers": {"x": {"command": "npx", "args": ',
]


def _check(files: list[ProjectFile]) -> None:
    result = scan_files(files, workdir="/app")
    for source in result.sources:
        assert source.status in (SourceStatus.OK, SourceStatus.FAILED, SourceStatus.SKIPPED)
        if source.status is SourceStatus.FAILED:
            assert source.error_code and source.reason
    for finding in result.findings:
        assert finding.rule_id and finding.fix.description and finding.locations
        finding.to_json()


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    prefix=st.sampled_from(PREFIXES),
    body=st.binary(max_size=400),
)
def test_random_bytes_after_a_real_prefix(name: str, prefix: bytes, body: bytes) -> None:
    _check([ProjectFile(name, prefix + body)])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    name=st.sampled_from(NAMES),
    seed=st.sampled_from(SEEDS),
    cut=st.integers(min_value=0, max_value=2000),
    insert=st.text(alphabet="()[]{}:,\"'=\\\n #*.@-", max_size=8),
)
def test_mutated_real_files(name: str, seed: bytes, cut: int, insert: str) -> None:
    cut = min(cut, len(seed))
    _check([ProjectFile(name, seed[:cut] + insert.encode() + seed[cut:])])


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=300))
def test_python_text_with_sdk_names(text: str) -> None:
    source = "from claude_agent_sdk import ClaudeAgentOptions as O\n" + text + "\nO(tools=T)\n"
    _check([ProjectFile("bot.py", source.encode("utf-8", "surrogatepass"))])


def test_deeply_nested_input_is_a_failed_source_not_a_crash() -> None:
    deep_py = b"from claude_agent_sdk import ClaudeAgentOptions\nX = " + b"[" * 5000 + b"]" * 5000
    deep_json = b'{"mcpServers": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    result = scan_files(
        [ProjectFile("deep.py", deep_py), ProjectFile(".mcp.json", deep_json)], workdir=None
    )
    assert [(s.name, s.status) for s in result.sources] == [
        ("deep.py", SourceStatus.FAILED),
        (".mcp.json", SourceStatus.FAILED),
    ]

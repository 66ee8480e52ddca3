"""AG601-AG605 are pure verdicts over smoke facts: whole findings from hand-made facts
(modelled on the field: pydantic-ai 2 removed `pydantic_ai.mcp.MCPServerStdio`)."""

from __future__ import annotations

from agentguard.findings import Fix, Location
from agentguard.rules.smoke import check_smoke
from agentguard.smoke.facts import Crash, Crossing, Install, Probe, SmokeFacts

INSTALL = Install("requirements.lock", "3.11.7", "ok", 12.0)
CRASH = Crash(
    exc_type="ImportError",
    message="`pydantic_ai.mcp.MCPServerStdio` was removed in Pydantic AI V2",
    frame="pydantic_ai/_removed_names.py:29",
    frame_source="raise ImportError(",
    frame_package="pydantic-ai-slim",
    frame_version="2.68.0",
)
FAILED_IMPORT = Probe(
    "import",
    "pydantic_ai.mcp",
    "failed",
    "import",
    "agent.py",
    2,
    "ImportError: ...",
    crash=CRASH,
    package="pydantic-ai-slim",
    version="2.68.0",
)


def _crossing(locked: str, marker: str) -> Crossing:
    return Crossing(
        package="pydantic-ai-slim",
        locked=(locked,),
        parent="project",
        parent_version=None,
        majors=("0.8", "1", "2"),
        fix=f"Add `pydantic-ai-slim>=2.0,<3 ; {marker}` to your requirements (the locked major).",
        snippet=f"pydantic-ai-slim>=2.0,<3 ; {marker}",
    )


def test_a_crash_in_the_crossed_package_is_capped_below_the_major_that_fails() -> None:
    facts = SmokeFacts(
        ".",
        INSTALL,
        (FAILED_IMPORT,),
        (
            _crossing("2.54.0", "python_full_version < '3.11'"),
            _crossing("2.68.0", "python_full_version >= '3.11'"),
        ),
        (("pydantic-ai-slim", "2.68.0"),),
    )
    [finding] = check_smoke(facts)
    assert finding.rule_id == "AG602"
    assert finding.message == (
        "In the locked environment, importing `pydantic_ai.mcp` of pydantic-ai-slim 2.68.0 raises "
        "ImportError: `pydantic_ai.mcp.MCPServerStdio` was removed in Pydantic AI V2 at "
        "pydantic_ai/_removed_names.py:29 (`raise ImportError(`). The lock takes "
        "pydantic-ai-slim 2.68.0 through the project's own range, which admits majors 0.8, 1, 2 "
        "(AG101)."
    )
    # never AG101's "the locked major": that is the major that crashed
    assert finding.fix == Fix(
        "Cap pydantic-ai-slim below the major that fails here: add `pydantic-ai-slim<2` to "
        "your requirements (the code was written against an earlier major), or port the code "
        "to pydantic-ai-slim 2. Then re-lock and run `--smoke` again.",
        snippet="pydantic-ai-slim<2",
    )
    assert finding.locations == (
        Location(path="agent.py", line=2, note="smoke: import pydantic_ai.mcp"),
    )


def test_what_started_is_no_finding_and_what_needs_a_key_is_none_either() -> None:
    facts = SmokeFacts(
        ".",
        INSTALL,
        (
            Probe("import", "claude_agent_sdk", "ok", "import", "bot.py", 1, "imported"),
            Probe(
                "sdk-server",
                "claude_agent_sdk",
                "ok",
                "list-tools",
                "bot.py",
                9,
                "ok",
                ("agentguard_probe",),
            ),
            Probe(
                "stdio",
                "tracker",
                "needs-credentials",
                "initialize",
                ".mcp.json",
                3,
                "declares TOKEN",
            ),
            Probe("stdio", "fs", "ok", "list-tools", ".mcp.json", 8, "ok", ("read_file",)),
        ),
    )
    assert check_smoke(facts) == []


def test_a_lock_that_does_not_install() -> None:
    facts = SmokeFacts(
        ".", Install("uv.lock", "3.12.1", "failed", 3.0, "Hash mismatch for `anyio==4.16.0`")
    )
    [finding] = check_smoke(facts)
    assert (finding.rule_id, finding.message) == (
        "AG601",
        "uv.lock does not install into a fresh Python 3.12.1 environment with `uv pip sync "
        "--require-hashes`: Hash mismatch for `anyio==4.16.0`",
    )

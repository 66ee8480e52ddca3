"""AG301-AG305, AG310, AG320 as pure functions over agent facts (no files, no I/O)."""

from __future__ import annotations

import pytest

from agentguard.engine.capability_config import live_tools
from agentguard.engine.capability_tools import config_tools
from agentguard.facts.launch_pins import unpinned_reason
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.inspect.project.model import (
    AgentConfig,
    McpServer,
    OneOf,
    Option,
    ProjectFacts,
    Unknown,
)
from agentguard.rules.agent_bypass import check_bypass
from agentguard.rules.agent_tools import McpServerUnpinned
from agentguard.rules.agent_tools_checks import check_allow_list, check_builtin_tools
from agentguard.rules.agent_tools_mcp import check_mcp_server


def _cfg(**options: object) -> AgentConfig:
    return AgentConfig(
        engine="claude-agent-sdk",
        path="bot.py",
        line=3,
        label="ClaudeAgentOptions(...)",
        options={k: Option(v, 3, k) for k, v in options.items()},
    )


@pytest.mark.parametrize(
    ("options", "certain", "maybe"),
    [
        ({}, {"Bash", "Read", "WebFetch"}, set()),
        ({"tools": ("Read",)}, {"Read"}, set()),
        ({"tools": ()}, set(), set()),
        (
            {"tools": {"type": "preset", "preset": "claude_code"}},
            {"Bash", "Read", "WebFetch"},
            set(),
        ),
        ({"tools": ("Read", Unknown("x", "parameter"))}, {"Read"}, {"Bash", "WebFetch"}),
        ({"tools": Unknown("x", "parameter")}, set(), {"Bash", "Read", "WebFetch"}),
        ({"disallowed_tools": ("Bash(rm:*)",)}, {"Bash", "Read", "WebFetch"}, set()),  # a pattern
        ({"disallowed_tools": ("Bash",)}, {"Read", "WebFetch"}, set()),
        ({"tools": OneOf((("Read",), ("Read", "Bash")))}, {"Read"}, {"Bash"}),
        ({"disallowed_tools": OneOf((("Bash",), ()))}, {"Read", "WebFetch"}, {"Bash"}),
        ({"disallowed_tools": Unknown("d", "parameter")}, set(), {"Bash", "Read", "WebFetch"}),
    ],
)
def test_live_tools(options: dict[str, object], certain: set[str], maybe: set[str]) -> None:
    live = live_tools(_cfg(**options))
    watched = {"Bash", "Read", "WebFetch"}
    assert (set(live.certain) & watched, set(live.maybe) & watched) == (certain, maybe)


@pytest.mark.parametrize(
    ("command", "args", "expected"),
    [
        ("npx", ("-y", "@scope/server"), ("@scope/server", Severity.HIGH)),
        ("npx", ("-y", "@scope/server@latest"), ("@scope/server@latest", Severity.HIGH)),
        ("npx", ("-y", "@scope/server@^1.2"), ("@scope/server@^1.2", Severity.HIGH)),
        ("npx", ("-y", "@scope/server@1.2.3"), None),
        ("/usr/bin/npx", ("server@2025.8.21",), None),
        ("pnpm", ("dlx", "server"), ("server", Severity.HIGH)),
        ("uvx", ("mcp-server-git",), ("mcp-server-git", Severity.HIGH)),
        ("uvx", ("mcp-server-git==2025.1.14",), None),
        ("uvx", ("mcp-server-git@2025.1.14",), None),
        ("uvx", ("--from", "git-mcp>=1", "mcp-git"), ("git-mcp>=1", Severity.HIGH)),
        ("uv", ("tool", "run", "mcp-server-git"), ("mcp-server-git", Severity.HIGH)),
        ("pipx", ("run", "mcp-server-git==1.0"), None),
        (
            "docker",
            ("run", "-i", "--rm", "-e", "TOKEN", "ghcr.io/o/s"),
            ("ghcr.io/o/s", Severity.HIGH),
        ),
        ("docker", ("run", "ghcr.io/o/s:1.4"), ("ghcr.io/o/s:1.4", Severity.MEDIUM)),
        ("docker", ("run", "localhost:5000/s"), ("localhost:5000/s", Severity.HIGH)),
        ("docker", ("run", "ghcr.io/o/s@sha256:" + "a" * 64), None),
        ("python", ("-m", "my_server"), None),
        (Unknown("CMD", "environment variable CMD"), (), ("a command", Severity.LOW)),
        ("npx", Unknown("ARGS", "function parameter"), ("an npm package", Severity.LOW)),
    ],
)
def test_unpinned_reason(
    command: object, args: object, expected: tuple[str, Severity] | None
) -> None:
    server = McpServer("s", ".mcp.json", 2, ".mcp.json", "stdio", command, args)
    found = unpinned_reason(server)
    got = (found[0], found[3]) if found else None
    assert got == expected


def test_http_and_sdk_servers_are_not_launched() -> None:
    for transport in ("http", "sse", "sdk"):
        assert check_mcp_server(McpServer("s", "a.py", 1, "x", transport)) == []


def test_whole_unpinned_finding() -> None:
    server = McpServer("fs", ".mcp.json", 3, ".mcp.json", "stdio", "npx", ("-y", "fs-mcp"))
    assert check_mcp_server(server) == [
        McpServerUnpinned.finding(
            "MCP server 'fs' (.mcp.json) launches fs-mcp: no version: the newest release is "
            "fetched on every start.",
            locations=[Location(path=".mcp.json", line=3, note=".mcp.json")],
            fix=Fix(
                "Pin it: run `agentguard lock --write-launch`, which resolves the version the "
                "launch gets today, records it in mcp.lock.json and launches `fs-mcp@<version>` "
                "with it; then update it on purpose.",
                snippet="agentguard lock --write-launch",
            ),
            evidence={"server": "fs", "argv": ["npx", "-y", "fs-mcp"], "declared_in": ".mcp.json"},
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
        )
    ]


def test_allow_list_with_removal_or_tools_is_not_the_trap() -> None:
    assert check_allow_list(_cfg(allowed_tools=("Read",), tools=("Read",))) == []
    assert check_allow_list(_cfg(allowed_tools=("Read",), disallowed_tools=("Bash",))) == []
    assert check_allow_list(_cfg(allowed_tools=())) == []
    (trap,) = check_allow_list(_cfg(allowed_tools=("Read",), disallowed_tools=()))
    assert trap.rule_id == "AG304" and trap.confidence is Confidence.HIGH


def test_bypass_is_critical_with_root_or_a_mounted_project() -> None:
    cfg = _cfg(permission_mode="bypassPermissions")
    plain = check_bypass(cfg, ProjectFacts(), cwd_is_project=False)
    worse = check_bypass(cfg, ProjectFacts(runs_as_root=True), cwd_is_project=False)
    assert [f.severity for f in plain] == [Severity.HIGH]
    assert [f.severity for f in worse] == [Severity.CRITICAL]
    assert worse[0].evidence["combined_with"] == ["the container runs as root (AG401)"]
    assert (
        check_bypass(_cfg(permission_mode="acceptEdits"), ProjectFacts(), cwd_is_project=True) == []
    )


def test_sandboxed_shell_is_medium_and_says_so() -> None:
    def shell(cfg: AgentConfig) -> list[Finding]:
        rows = config_tools(cfg, ProjectFacts())  # the model's rows of the configuration
        return [f for f in check_builtin_tools(cfg, rows) if f.rule_id == "AG301"]

    plain = shell(_cfg())
    boxed = shell(_cfg(sandbox={"enabled": True}))
    unknown = shell(_cfg(sandbox=Unknown("S", "parameter")))
    assert [f.severity for f in plain + boxed + unknown] == [
        Severity.HIGH,
        Severity.MEDIUM,
        Severity.HIGH,
    ]
    assert boxed[0].message.endswith("Commands run in the engine's sandbox (`sandbox.enabled`).")

"""Claude Code settings and MCP files: what is read, and a broken file is a failed source."""

from __future__ import annotations

from agentguard.engine.project import scan_files
from agentguard.findings import Severity, Source
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.claude_settings import parse_mcp_file, parse_settings
from agentguard.inspect.project.model import ClaudeSettings, McpServer


def test_settings_keys_and_lines() -> None:
    data = b"""{
  // comments are tolerated
  "permissions": {
    "allow": ["Read"],
    "deny": ["Bash"],
    "defaultMode": "acceptEdits",
    "disableBypassPermissionsMode": "disable",
  },
}
"""
    assert parse_settings("etc/claude-code/managed-settings.json", data) == ClaudeSettings(
        path="etc/claude-code/managed-settings.json",
        scope="managed",
        allow=("Read",),
        deny=("Bash",),
        ask=None,
        default_mode="acceptEdits",
        disable_bypass="disable",
        lines={
            "permissions": 3,
            "permissions.allow": 4,
            "permissions.deny": 5,
            "permissions.defaultMode": 6,
            "permissions.disableBypassPermissionsMode": 7,
        },
    )


def test_broken_settings_and_mcp_files_are_failed_sources_with_lines() -> None:
    files = [
        ProjectFile(
            ".claude/settings.json", b'{\n  "permissions": {\n    "allow": "Bash"\n  }\n}\n'
        ),
        ProjectFile(".mcp.json", b'{"mcpServers": {\n  "x": {"command": "npx", "args": ["-y", }\n'),
        ProjectFile(".claude/settings.local.json", b"\xff\xfe{}"),
    ]
    result = scan_files(files, workdir=None)
    assert result.findings == ()
    assert [(s.name, s.status.value, s.error_code, s.reason) for s in result.sources] == [
        (
            ".claude/settings.json",
            "failed",
            "settings-schema",
            "`permissions.allow` must be a list of strings (line 3)",
        ),
        (".mcp.json", "failed", "mcp-syntax", result.sources[1].reason),
        (".claude/settings.local.json", "failed", "settings-decode", "not UTF-8 text (byte 0)"),
    ]
    assert "(line 2)" in (result.sources[1].reason or "")


def test_mcp_servers_from_every_known_file() -> None:
    claude_json = b"""{"mcpServers": {"a": {"command": "uvx", "args": ["pkg==1.0"]}},
 "projects": {"/home/me/app": {"mcpServers": {"b": {"type": "sse", "url": "https://x.invalid"}}}}}"""
    assert parse_mcp_file("/root/.claude.json", claude_json) == [
        McpServer("a", "/root/.claude.json", 1, ".claude.json", "stdio", "uvx", ("pkg==1.0",)),
        McpServer("b", "/root/.claude.json", 2, ".claude.json", "sse"),
    ]
    vscode = b'{"servers": {"gh": {"type": "stdio", "command": "npx", "args": ["gh-mcp"]}}}'
    assert parse_mcp_file(".vscode/mcp.json", vscode) == [
        McpServer("gh", ".vscode/mcp.json", 1, "mcp.json", "stdio", "npx", ("gh-mcp",))
    ]


def test_managed_settings_that_disable_bypass_lower_the_finding() -> None:
    files = [
        ProjectFile(
            ".claude/settings.json", b'{"permissions": {"defaultMode": "bypassPermissions"}}'
        ),
        ProjectFile(
            "/etc/claude-code/managed-settings.json",
            b'{"permissions": {"disableBypassPermissionsMode": "disable", "deny": ["Bash"]}}',
        ),
    ]
    result = scan_files(files, workdir="/")
    (bypass,) = [f for f in result.findings if f.rule_id == "AG305"]
    assert bypass.severity is Severity.LOW
    assert bypass.message == (
        'project settings set "defaultMode": "bypassPermissions". Mitigated: managed settings '
        "at /etc/claude-code/managed-settings.json disable bypass mode."
    )
    assert all(s.status.value == "ok" for s in result.sources)
    assert Source.ok("file", ".claude/settings.json", "Claude Code settings") in result.sources


def test_secrets_in_mcp_servers_never_reach_the_output() -> None:
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    key = "sk-ant-api03-" + "x" * 40
    data = (
        '{"mcpServers": {"gh": {"command": "npx", "args": ["-y", "gh-mcp@1.0.0", "--api-key", "'
        + key
        + '"], "env": {"GITHUB_TOKEN": "'
        + token
        + '", "LOG_LEVEL": "debug", "OTHER": "${OTHER}"}}}}'
    ).encode()
    result = scan_files([ProjectFile(".mcp.json", data)], workdir=None)
    assert [(f.rule_id, f.message) for f in result.findings] == [
        (
            "AG402",
            "MCP server 'gh' sets GITHUB_TOKEN to a literal value in its `env` in .mcp.json "
            f"(its value has a known key format: github token); value redacted, sha256 prefix "
            f"{result.findings[0].evidence['value_sha256_prefix']}.",
        )
    ]
    text = repr([f.to_json() for f in result.findings]) + repr(result.facts)
    assert token not in text and key not in text
    assert result.facts["mcp_servers"] == [
        {
            "name": "gh",
            "path": ".mcp.json",
            "line": 1,
            "declared_in": ".mcp.json",
            "transport": "stdio",
            "command": "npx",
            "args": ["-y", "gh-mcp@1.0.0", "--api-key", "REDACTED"],
        }
    ]


def test_secrets_in_agent_options_are_redacted_in_facts() -> None:
    key = "sk-ant-api03-" + "y" * 40
    source = (
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        f'O = ClaudeAgentOptions(tools=[], env={{"ANTHROPIC_API_KEY": "{key}", "MODE": "x"}})\n'
    ).encode()
    result = scan_files([ProjectFile("a.py", source)], workdir=None)
    assert result.facts["agent_configs"][0]["options"]["env"] == {
        "ANTHROPIC_API_KEY": "REDACTED",
        "MODE": "x",
    }
    assert key not in repr(result.facts) + repr([f.to_json() for f in result.findings])


def test_literal_secret_in_settings_env() -> None:
    key = "sk-ant-api03-" + "z" * 40
    data = (
        '{\n  "env": {\n    "ANTHROPIC_API_KEY": "' + key + '",\n    "DEBUG": "1"\n  }\n}\n'
    ).encode()
    result = scan_files([ProjectFile(".claude/settings.json", data)], workdir=None)
    ((rule_id, location, variable),) = [
        (f.rule_id, f.locations[0], f.evidence["variable"]) for f in result.findings
    ]
    assert (rule_id, location.path, location.line, variable) == (
        "AG402",
        ".claude/settings.json",
        2,
        "ANTHROPIC_API_KEY",
    )
    assert key not in repr([f.to_json() for f in result.findings]) + repr(result.facts)


def test_skipping_the_bypass_warning_is_ag305_at_medium() -> None:
    from agentguard.engine.project import scan_files
    from agentguard.inspect.facts import ProjectFile

    data = b'{"skipDangerousModePermissionPrompt": true}'
    result = scan_files([ProjectFile(".claude/settings.json", data)], workdir=None)
    assert [(f.rule_id, f.severity.value, f.message) for f in result.findings] == [
        (
            "AG305",
            "medium",
            "project settings set `skipDangerousModePermissionPrompt`: bypass mode "
            "(`--dangerously-skip-permissions`) starts without the warning that asks to "
            "confirm it.",
        )
    ]

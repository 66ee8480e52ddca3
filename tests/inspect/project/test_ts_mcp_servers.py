"""MCP server definitions in TS/JS code that is not the SDK's options (modelled on
anthropics/claude-code-action's src/mcp/install-mcp-server.ts), and Gemini CLI extension
manifests."""

from __future__ import annotations

import textwrap
from pathlib import Path

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.model import McpServer, Unknown
from agentguard.inspect.project.servers import project_servers
from agentguard.inspect.project.ts_mcp_servers import analyse_ts_servers

GH_IMAGE = "ghcr.io/github/github-mcp-server:sha-23fa0dd"


def _servers(source: str, path: str = "src/mcp/install-mcp-server.ts") -> list[McpServer]:
    return analyse_ts_servers(path, textwrap.dedent(source).encode()).mcp_servers


def test_an_object_assigned_to_mcp_servers_name_is_a_launch() -> None:
    source = """
        const baseMcpConfig: { mcpServers: Record<string, unknown> } = {
          mcpServers: {},
        };
        baseMcpConfig.mcpServers.github = {
          command: "docker",
          args: [
            "run",
            "-i",
            "--rm",
            "-e",
            "GITHUB_PERSONAL_ACCESS_TOKEN",
            "ghcr.io/github/github-mcp-server:sha-23fa0dd", // https://github.com/github/github-mcp-server/releases/tag/v0.17.1
          ],
          env: { GITHUB_PERSONAL_ACCESS_TOKEN: githubToken, GITHUB_HOST: "github.com" },
        };
    """
    assert _servers(source) == [
        McpServer(
            "github",
            "src/mcp/install-mcp-server.ts",
            5,
            "baseMcpConfig.mcpServers.github = ...",
            "stdio",
            "docker",
            ("run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", GH_IMAGE),
            env=(("GITHUB_HOST", "github.com"),),  # (the token is a parameter: not known)
        )
    ]


def test_args_a_function_of_the_file_returns_are_read_from_its_array() -> None:
    source = """
        function bunServerArgs(scriptPath: string): string[] {
          const actionPath = process.env.GITHUB_ACTION_PATH;
          return [
            "--no-env-file",
            `--config=${actionPath}/bunfig.toml`,
            "run",
            `${actionPath}/${scriptPath}`,
          ];
        }
        cfg.mcpServers["github_comment"] = {
          command: "bun",
          args: bunServerArgs("src/mcp/github-comment-server.ts"),
        };
    """
    assert _servers(source) == [
        McpServer(
            "github_comment",
            "src/mcp/install-mcp-server.ts",
            11,
            'cfg.mcpServers["github_comment"] = ...; args returned by bunServerArgs()',
            "stdio",
            "bun",
            (
                "--no-env-file",
                Unknown("`--config=${actionPath}/bunfig.toml`", "expression"),
                "run",
                Unknown("`${actionPath}/${scriptPath}`", "expression"),
            ),
        )
    ]  # `bun --no-env-file ... run PATH`: the project's own script, not a registry launch


def test_a_function_with_two_returns_leaves_the_args_unknown() -> None:
    source = """
        function serverArgs(pinned: boolean): string[] {
          if (pinned) return ["-y", "@acme/tracker-mcp@1.4.2"];
          return ["-y", "@acme/tracker-mcp"];
        }
        cfg.mcpServers.tracker = { command: "npx", args: serverArgs(flag) };
    """
    (server,) = _servers(source)
    assert server.args == Unknown("serverArgs(flag)", "result of serverArgs()")
    assert server.declared_in == "cfg.mcpServers.tracker = ..."


def test_an_mcp_servers_literal_and_two_definitions_of_one_name() -> None:
    source = """
        const settings = {
          mcpServers: {
            fs: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem"] },
            remote: { url: "https://mcp.example.com/mcp" },
            tuned: { trust: true },
            built: makeServer(),
          },
        };
        settings.mcpServers.fs = { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem@2025.8.21"] };
    """
    path = "settings.ts"
    assert _servers(source, path) == [
        McpServer(
            "fs",
            path,
            4,
            "mcpServers object in code",
            "stdio",
            "npx",
            ("-y", "@modelcontextprotocol/server-filesystem"),
        ),
        McpServer("remote", path, 5, "mcpServers object in code", "http"),
        McpServer(
            "built",
            path,
            7,
            "mcpServers object in code",
            "unknown",
            Unknown("makeServer()", "result of makeServer()"),
        ),
        McpServer(
            "fs",
            path,
            10,
            "settings.mcpServers.fs = ...",
            "stdio",
            "npx",
            ("-y", "@modelcontextprotocol/server-filesystem@2025.8.21"),
        ),
    ]  # fmt: skip  (both `fs` are kept: two candidates, neither picked)


def test_a_table_bound_to_a_name_is_read_once_where_it_is_written() -> None:
    # gemini-cli packages/cli/src/config/config.test.ts passes one table to many settings
    source = """
        const localMcpServers = {
          serverA: { command: 'npx', args: ['-y', '@mcp/server-a'] },
        };
        const baseSettings = createTestMergedSettings({ mcpServers: localMcpServers });
        const settings = createTestMergedSettings({ mcpServers: localMcpServers });
    """
    assert [(m.name, m.line, m.args) for m in _servers(source, "config.test.ts")] == [
        ("serverA", 3, ("-y", "@mcp/server-a"))
    ]


def test_a_spread_leaves_what_it_sets_unknown() -> None:
    source = """
        cfg.mcpServers.fs = { ...defaults, command: "npx" };
    """
    (server,) = _servers(source)
    assert (server.command, server.args) == (
        "npx",
        Unknown("...defaults", "spread of a value not known"),
    )


def test_the_sdk_reader_and_this_one_do_not_count_a_server_twice() -> None:
    source = textwrap.dedent(
        """
        import { query } from "@anthropic-ai/claude-agent-sdk";
        const servers = { fs: { command: "npx", args: ["-y", "@acme/fs-mcp"] } };
        for await (const m of query({ prompt: "hi", options: { mcpServers: servers } })) {}
        """
    ).encode()
    out = process_file("agent.ts", "ts", source)
    assert [(m.name, m.line, m.declared_in) for m in out.mcp_servers] == [
        ("fs", 4, "mcpServers option")
    ]


def test_a_table_that_does_not_parse_is_a_failed_source_with_what_was_found() -> None:
    source = (
        b'cfg.mcpServers.fs = { command: "npx", args: ["-y", "@acme/fs-mcp"] };\n'
        b'cfg.mcpServers.git = { command: "uvx", args: [,, "mcp-server-git" };\n'
    )
    out = process_file("broken.ts", "ts", source)
    assert [(m.name, m.args) for m in out.mcp_servers] == [
        ("fs", ("-y", "@acme/fs-mcp")),
        ("git", ()),  # (what the grammar recovered: the args are lost, hence the source)
    ]
    assert [(s.status.value, s.reason) for s in out.sources] == [
        (
            "failed",
            "syntax error at line 2, where `mcpServers` is written: the MCP server definitions "
            "found were read, others may be missed",
        )
    ]


def test_a_syntax_error_away_from_every_table_hides_nothing() -> None:
    # gemini-cli's tests: `importOriginal<typeof import(...)>()` is beyond the grammar
    source = (
        b"vi.mock('node:os', async (importOriginal) => {\n"
        b"  const actual = await importOriginal<typeof import('node:os')>();\n"
        b"});\n"
        b'cfg.mcpServers.fs = { command: "npx", args: ["-y", "@acme/fs-mcp@1.0.0"] };\n'
    )
    out = process_file("settings.test.ts", "ts", source)
    assert [(m.name, m.line) for m in out.mcp_servers] == [("fs", 4)]
    assert [(s.status.value, s.reason) for s in out.sources] == [
        ("ok", "TypeScript/JavaScript MCP servers (1)")
    ]


def test_a_gemini_extension_manifest_is_an_mcp_configuration(tmp_path: Path) -> None:
    # gemini-cli packages/cli/src/commands/extensions/examples/mcp-server/gemini-extension.json
    folder = tmp_path / "examples" / "mcp-server"
    folder.mkdir(parents=True)
    (folder / "gemini-extension.json").write_text(
        '{\n  "name": "mcp-server-example",\n  "version": "1.0.0",\n  "mcpServers": {\n'
        '    "nodeServer": {\n      "command": "node",\n'
        '      "args": ["${extensionPath}${/}example.js"],\n'
        '      "cwd": "${extensionPath}"\n    }\n  }\n}\n'
    )
    servers, _ = project_servers(tmp_path)
    assert servers == (
        McpServer(
            "nodeServer",
            "examples/mcp-server/gemini-extension.json",
            5,
            "gemini-extension.json",
            "stdio",
            "node",
            ("${extensionPath}${/}example.js",),
        ),
    )

"""TypeScript/JavaScript: query({ options }) of @anthropic-ai/claude-agent-sdk."""

from __future__ import annotations

import textwrap

from agentguard.engine.project import scan_files
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.model import OneOf, PathSym, Unknown
from agentguard.inspect.project.ts_agents import analyse_ts


def _configs(source: str, path: str = "agent.ts") -> list[tuple[int, str, dict[str, object]]]:
    facts = analyse_ts(path, textwrap.dedent(source).encode())
    return [(c.line, c.label, {k: o.value for k, o in c.options.items()}) for c in facts.configs]


def test_inline_options_spread_and_resolved_consts() -> None:
    source = """
        import { query, type Options } from "@anthropic-ai/claude-agent-sdk";
        import path from "node:path";

        const base: Options = { allowedTools: ["Read", "Grep"], cwd: path.resolve(__dirname, "..") };

        export async function run(prompt: string) {
          const opts = { ...base, permissionMode: "bypassPermissions" as const };
          for await (const m of query({ prompt, options: opts })) console.log(m);
        }
    """
    assert _configs(source) == [
        (
            9,
            "query({ options })",
            {
                "allowed_tools": ("Read", "Grep"),
                "cwd": PathSym("source-dir", up=1),
                "permission_mode": "bypassPermissions",
            },
        )
    ]  # the typed `base` is read through the spread, not reported a second time


def test_require_namespace_and_env_values() -> None:
    source = """
        const sdk = require("@anthropic-ai/claude-agent-sdk");

        async function main() {
          const q = sdk.query({
            prompt: "hi",
            options: { permissionMode: process.env.AGENT_MODE, settingSources: ["project"] },
          });
        }
    """
    assert _configs(source, "agent.cjs") == [
        (
            5,
            "query({ options })",
            {
                "permission_mode": Unknown(
                    "process.env.AGENT_MODE", "environment variable AGENT_MODE"
                ),
                "setting_sources": ("project",),
            },
        )
    ]


def test_ternary_options_are_each_reported_and_ambiguous() -> None:
    source = """
        import { query } from "@anthropic-ai/claude-agent-sdk";
        const safe = { tools: ["Read"] };
        const fast = { permissionMode: "bypassPermissions" };
        export const run = (p: string, quick: boolean) =>
          query({ prompt: p, options: quick ? fast : safe });
    """
    facts = analyse_ts("agent.ts", textwrap.dedent(source).encode())
    assert [(c.line, c.ambiguous, dict((k, o.value) for k, o in c.options.items()))
            for c in facts.configs] == [
        (6, True, {"permission_mode": "bypassPermissions"}),
        (6, True, {"tools": ("Read",)}),
    ]  # fmt: skip
    assert facts.configs[0].ambiguity == "line 6: options depend on a branch (2 alternatives)"


def test_or_default_keeps_both_readings() -> None:
    source = """
        import { query } from "@anthropic-ai/claude-agent-sdk";
        query({ prompt: "x", options: { cwd: process.env.WORKDIR || process.cwd() } });
    """
    (config,) = _configs(source)
    assert config[2] == {
        "cwd": OneOf(
            (Unknown("process.env.WORKDIR", "environment variable WORKDIR"), PathSym("process-cwd"))
        )
    }


def test_files_that_do_not_import_the_sdk_are_ignored() -> None:
    source = """
        const query = (o: object) => o;
        query({ options: { permissionMode: "bypassPermissions" } });
    """
    assert _configs(source) == []


def test_syntax_error_in_an_sdk_file_is_a_failed_source() -> None:
    source = (
        b'import { query } from "@anthropic-ai/claude-agent-sdk";\nquery({ options: { tools: [ }\n'
    )
    result = scan_files([ProjectFile("broken.ts", source)], workdir=None)
    assert [(s.name, s.status.value, s.error_code, s.reason) for s in result.sources] == [
        (
            "broken.ts",
            "failed",
            "parse-error",
            "syntax error at line 2; the SDK's options could not be read",
        )
    ]


def test_options_from_a_parameter_are_unknown_not_safe() -> None:
    source = b"""import { query, type Options } from "@anthropic-ai/claude-agent-sdk";
export async function run(prompt: string, options: Options) {
  for await (const m of query({ prompt, options })) console.log(m);
}
"""
    result = scan_files([ProjectFile("a.ts", source)], workdir=None)
    assert [(f.rule_id, f.confidence.value) for f in result.findings] == [
        ("AG301", "low"),
        ("AG302", "low"),
        ("AG303", "low"),
        ("AG210", "low"),
        ("AG305", "low"),
        ("AG211", "low"),
        ("AG320", "low"),
    ]
    assert result.findings[0].message == (
        "claude-agent-sdk (TypeScript) configuration may leave the built-in shell tools live: "
        "Bash, BashOutput, KillShell, KillBash (`tools` = unknown (may be set by options not "
        "known: `options (function parameter)`); `disallowedTools` = unknown (may be set by "
        "options not known: `options (function parameter)`))."
    )


def test_string_escapes_are_read_as_the_engine_reads_them() -> None:
    # the reader once dropped every escape: `"@acme/tracker\u002dmcp"` read as
    # `@acme/trackermcp`, another package than the one node runs, which the lock pinned
    # and the fix told the reader to launch
    source = r"""
        import { query } from "@anthropic-ai/claude-agent-sdk";
        for await (const m of query({ prompt: "hi", options: { mcpServers: {
          "tr\u0061cker": { command: "npx", args: ["-y", "@acme/tracker\u002dmcp", `--x\x3d1`] },
          legacy: { command: "npx", args: ["-y", "@acme/\101"] },
          surrogate: { command: "npx", args: ["\uD800"] },
        } } })) {}
    """
    facts = analyse_ts("agent.ts", textwrap.dedent(source).encode())
    servers = {s.name: s.args for s in facts.mcp_servers}
    assert servers["tracker"] == ("-y", "@acme/tracker-mcp", "--x=1")
    # an escape with no certain value (legacy octal, a lone surrogate) is no value
    assert servers["legacy"] == ("-y", Unknown('"@acme/\\101"', "expression"))
    assert servers["surrogate"] == (Unknown('"\\uD800"', "expression"),)

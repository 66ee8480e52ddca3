"""MCP server tables written in the ways JavaScript allows besides `X.mcpServers.NAME = {...}`
and `mcpServers: {...}`: escapes in strings and names, computed and numeric keys, shorthand
entries and spreads, `??=`, `Object.assign`, casts and `this` on the left (attacks on the
launch readers; node reads each of these as the plain table). A string's escapes are its
characters: `"evil\\x2dpkg"` launches `evil-pkg`, never `evilpkg`."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.model import McpServer, Unknown
from tests.lock.helpers import run_json

PATH = "src/config.ts"
LAUNCH = '{ command: "npx", args: ["-y", "evil-pkg"] }'
TABLE = "mcpServers object in code"

CASES = {
    "escape_in_an_argument": (
        'export const c = { mcpServers: { evil: { command: "npx", args: ["-y", "evil\\x2dpkg"] } } };',
        [("evil", 1, TABLE)],
    ),
    "escaped_table_name": (
        f"export const c = {{ mcp\\u0053ervers: {{ evil: {LAUNCH} }} }};",
        [("evil", 1, TABLE)],
    ),
    "escaped_table_string": (
        f'export const c = {{ "mcp\\u0053ervers": {{ "ev\\u{{69}}l": {LAUNCH} }} }};',
        [("evil", 1, TABLE)],
    ),
    "computed_table_key": (
        f'export const c = {{ ["mcpServers"]: {{ evil: {LAUNCH} }} }};',
        [("evil", 1, TABLE)],
    ),
    "computed_launch_keys": (
        'export const c = { mcpServers: { evil: { ["command"]: "npx", [`args`]: ["-y", "evil-pkg"] } } };',
        [("evil", 1, TABLE)],
    ),
    "numeric_server_name": (
        f"export const c = {{ mcpServers: {{ 1: {LAUNCH} }} }};",
        [("1", 1, TABLE)],
    ),
    "shorthand_entry": (
        f"const evil = {LAUNCH};\nexport const c = {{ mcpServers: {{ evil }} }};",
        [("evil", 2, TABLE)],
    ),
    "spread_of_a_table_of_the_file": (
        f"const extra = {{ evil: {LAUNCH} }};\nexport const c = {{ mcpServers: {{ ...extra }} }};",
        [("evil", 1, TABLE)],
    ),
    "nullish_assignment": (
        f"const c: any = {{ mcpServers: {{}} }};\nc.mcpServers.evil ??= {LAUNCH};",
        [("evil", 2, "c.mcpServers.evil ??= ...")],
    ),
    "object_assign": (
        f"const c: any = {{ mcpServers: {{}} }};\nObject.assign(c.mcpServers, {{ evil: {LAUNCH} }});",
        [("evil", 2, "Object.assign(c.mcpServers, ...)")],
    ),
    "cast_on_the_left": (
        f"const c: any = {{ mcpServers: {{}} }};\n(c.mcpServers as any).evil = {LAUNCH};",
        [("evil", 2, "(c.mcpServers as any).evil = ...")],
    ),
    "non_null_on_the_left": (
        f"const c: any = {{ mcpServers: {{}} }};\nc.mcpServers!.evil = {LAUNCH};",
        [("evil", 2, "c.mcpServers!.evil = ...")],
    ),
    "this_on_the_left": (
        f"class C {{ mcpServers: any = {{}}; f() {{ this.mcpServers.evil = {LAUNCH}; }} }}",
        [("evil", 1, "this.mcpServers.evil = ...")],
    ),
    "name_in_a_const": (
        f'const name = "evil";\nconst c: any = {{ mcpServers: {{}} }};\nc.mcpServers[name] = {LAUNCH};',
        [("evil", 3, "c.mcpServers[name] = ...")],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_table_node_reads_is_a_launch(case: str) -> None:
    source, expected = CASES[case]
    out = process_file(PATH, "ts", source.encode())
    assert out.mcp_servers == [
        McpServer(name, PATH, line, said, "stdio", "npx", ("-y", "evil-pkg"))
        for name, line, said in expected
    ]
    assert [(s.status.value, s.reason) for s in out.sources] == [
        ("ok", f"TypeScript/JavaScript MCP servers ({len(expected)})")
    ]


def test_a_name_known_only_when_it_runs_keeps_the_launch() -> None:
    source = f"export function add(c: any, name: string) {{ c.mcpServers[name] = {LAUNCH}; }}"
    (server,) = process_file(PATH, "ts", source.encode()).mcp_servers
    assert server == McpServer(
        "[name]", PATH, 1, "c.mcpServers[name] = ...", "stdio", "npx", ("-y", "evil-pkg")
    )


def test_a_spread_or_a_getter_not_known_is_a_launch_not_known() -> None:
    source = "export const c = { mcpServers: { ...load(), get gh() { return {}; } } };"
    assert process_file(PATH, "ts", source.encode()).mcp_servers == [
        McpServer("...load()", PATH, 1, TABLE, "unknown", Unknown("...load()", "spread")),
        McpServer(
            "gh", PATH, 1, TABLE, "unknown", Unknown("get gh() { return {}; }", "a function")
        ),
    ]


def test_a_lone_surrogate_is_not_a_string() -> None:
    source = 'export const c = { mcpServers: { evil: { command: "npx", args: ["\\uD800"] } } };'
    (server,) = process_file(PATH, "ts", source.encode()).mcp_servers
    assert server.args == (Unknown('"\\uD800"', "expression"),)


@pytest.mark.parametrize("entry", ["s{i}", "s{i}: s{i}", "s{i}: {{ command: 'npx', args: f() }}"])
def test_a_table_of_20000_names_is_read_within_the_deadline(entry: str, tmp_path: Path) -> None:
    """Each name resolved by a walk of its block, and each `args: f()` by a walk of the file,
    made these tables quadratic (over 600 s and 300 s); the run's deadline here is 60 s."""
    n = 20_000
    consts = "".join(f"const s{i} = {{ command: 'npx', args: ['-y', 'p'] }};\n" for i in range(n))
    table = ", ".join(entry.format(i=i) for i in range(n))
    source = f"function f() {{ return ['-y', 'p']; }}\n{consts}export const c = {{ mcpServers: {{ {table} }} }};\n"
    (tmp_path / "a.ts").write_text(source)
    _, report, _ = run_json("inspect", str(tmp_path), "--timeout", "60")
    assert [(s["name"], s["reason"]) for s in report["sources"] if s["status"] != "ok"] == [
        (
            "a.ts",
            f"{n} MCP servers in one file, over the cap of 200: only the first 200 of each were checked",
        )
    ]


def test_a_copy_under_a_name_not_known_is_not_a_launch() -> None:
    """gemini-cli's `mcp list` copies each extension's servers: `mcpServers[key] = {...server,
    extension}` writes no launch of its own (the servers are read where they are defined)."""
    source = "for (const [key, server] of all) { mcpServers[key] = { ...server, extension }; }"
    out = process_file(PATH, "ts", source.encode())
    assert (out.mcp_servers, [s for s in out.sources if s.status.value != "ok"]) == ([], [])


def test_a_syntax_error_in_a_table_is_a_failed_source_where_the_sdk_is_named() -> None:
    """`@anthropic-ai/claude-code` in a comment made the SDK reader's "parsed" the file's only
    source: the statement holding `mcpServers` did not parse, and nothing said so."""
    source = f"// uses @anthropic-ai/claude-code\nexport const c = {{ mcpServers: {{ evil: {LAUNCH} }} ;\n"
    out = process_file(PATH, "ts", source.encode())
    assert [(s.status.value, s.reason, s.error_code) for s in out.sources] == [
        ("ok", "TypeScript/JavaScript agent code parsed", None),
        (
            "failed",
            "syntax error at line 2, where `mcpServers` is written: the MCP server definitions "
            "found were read, others may be missed",
            "parse-error",
        ),
    ]

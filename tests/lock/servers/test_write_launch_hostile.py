"""`lock --write-launch` against a hostile checkout: a file that holds, beside the server
the reader read, a decoy that spells the same launch (another command, another statement,
a string the view did not take for JSON). The decoy is never the one rewritten: either the
server the reader read is pinned, or nothing is and the note says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.facts.mcp_pins import ServerLock, ServerPin
from agentguard.findings import SourceStatus
from agentguard.harden.launches import write_launches
from agentguard.inspect.project.servers import project_servers
from agentguard.lock.servers.resolve import ServerResult

NAME = "@acme/tracker-mcp"
BY_HAND = f"launch `npx -y {NAME}@2.0.1` there by hand."


def _run(root: Path) -> tuple[tuple[str, ...], list[tuple[str, SourceStatus]]]:
    servers, _ = project_servers(root)
    pins = tuple(
        ServerPin("npm", NAME, "2.0.1", s.name, s.path, s.line)
        for s in servers
        if s.command == "npx"
    )
    result = ServerResult(written=True, lock=ServerLock("mcp.lock.json", pins, ""))
    notes, sources = write_launches(root, servers, result)
    return notes, [(s.name, s.status) for s in sources]


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(text.encode("utf-8"))


IMPORTED = {
    "servers.py": f'SERVERS = {{\n    "x": {{"command": "npx", "args": ["-y", "{NAME}"]}},\n}}\n',
    "agent.py": (
        "from claude_agent_sdk import ClaudeAgentOptions\n"
        "from servers import SERVERS\n"
        "opts = ClaudeAgentOptions(mcp_servers=SERVERS); "
        f'decoy = dict(command="npx", args=["-y", "{NAME}"])\n'
    ),
}


def test_python_server_from_an_import_never_pins_the_line_that_uses_it(tmp_path: Path) -> None:
    # the reader's path and line for an imported server are where the name is used: the
    # `dict(...)` on that line is no server of the options, and is left as it is
    _write(tmp_path, IMPORTED)
    notes, sources = _run(tmp_path)
    for name, text in IMPORTED.items():
        assert (tmp_path / name).read_text(encoding="utf-8") == text, name
    assert sources == []
    assert notes == (
        f"agent.py:3: not rewritten (the server is defined in another module); {BY_HAND}",
    )


SAME_LINE = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    f'opts = ClaudeAgentOptions(mcp_servers={{"x": {{"command": "npx", "args": ["-y", "{NAME}"]}}}}); '
    f'decoy = {{"command": "echo", "args": ["-y", "{NAME}"]}}\n'
)


def test_python_definition_with_another_command_on_the_line_is_not_the_server(
    tmp_path: Path,
) -> None:
    _write(tmp_path, {"agent.py": SAME_LINE})
    notes, sources = _run(tmp_path)
    want = SAME_LINE.replace(f'"{NAME}"]}}}}', f'"{NAME}@2.0.1"]}}}}', 1)
    assert want != SAME_LINE
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == want
    assert sources == [("agent.py", SourceStatus.OK)]
    assert notes == (f"agent.py:2: MCP server 'x' now launches {NAME}@2.0.1.",)


TS_CONST = f"""\
import {{ query }} from "@anthropic-ai/claude-agent-sdk";
const TRACKER = {{ command: "npx", args: ["-y", "{NAME}"] }};
const notes = {{ tracker: {{ command: "echo", args: ["-y", "{NAME}"] }} }};
for await (const m of query({{ prompt: "hi", options: {{ mcpServers: {{ tracker: TRACKER }} }} }})) {{}}
"""


def test_typescript_const_server_is_pinned_not_a_named_decoy(tmp_path: Path) -> None:
    # the reader follows `tracker: TRACKER`; an object named `tracker` with another command
    # is not the server, and the const the reader followed is the one pinned
    _write(tmp_path, {"agent.ts": TS_CONST})
    notes, sources = _run(tmp_path)
    want = TS_CONST.replace(f'"{NAME}"] }};\nconst notes', f'"{NAME}@2.0.1"] }};\nconst notes')
    assert (tmp_path / "agent.ts").read_text(encoding="utf-8") == want
    assert sources == [("agent.ts", SourceStatus.OK)]
    assert notes == (f"agent.ts:4: MCP server 'tracker' now launches {NAME}@2.0.1.",)


def test_typescript_two_objects_that_may_be_the_server_are_left_alone(tmp_path: Path) -> None:
    text = TS_CONST.replace('command: "echo"', 'command: "npx"')
    _write(tmp_path, {"agent.ts": text})
    notes, sources = _run(tmp_path)
    assert (tmp_path / "agent.ts").read_text(encoding="utf-8") == text
    assert sources == []
    assert notes == (
        "agent.ts:4: not rewritten (2 entries of the file may be this server (one is "
        f"needed)); {BY_HAND}",
    )


WORKFLOW = f"""\
on: issues
env:
  NOTES: {{tracker: {{command: npx, args: [-y, "{NAME}"]}}}}
jobs:
  triage:
    runs-on: ubuntu-latest
    steps:
      - uses: google-github-actions/run-gemini-cli@v0
        with:
          settings: |
            // team settings: the reader takes JSONC
            {{"mcpServers": {{"tracker": {{"command": "npx", "args": ["-y", "{NAME}"]}}}}}}
"""


def test_yaml_settings_starting_with_a_comment_are_seen_so_a_decoy_is_not_pinned(
    tmp_path: Path,
) -> None:
    # the view once took only a string starting with `{` for JSON: the settings the reader
    # read were invisible to it, and the `env` mapping was the one entry it rewrote
    _write(tmp_path, {".github/workflows/t.yml": WORKFLOW})
    notes, sources = _run(tmp_path)
    assert (tmp_path / ".github/workflows/t.yml").read_text(encoding="utf-8") == WORKFLOW
    assert sources == []
    assert notes == (
        ".github/workflows/t.yml:12: not rewritten (2 entries of the file are this server "
        f"(one is needed)); {BY_HAND}",
    )


# Python reads this file as UTF-7 (`+ACM-` is `#`, `+AEA-` is `@`): the server it runs is
# `A`, unpinned, and `B` is a comment; read as UTF-8, `B` is the one literal that spells
# the launch
UTF7 = (
    "# coding: utf-7\n"
    "from mcp import StdioServerParameters\n"
    'A = StdioServerParameters(command="npx", args=["-y", "+AEA-acme/tracker-mcp"]) +ACM-0; '
    f'B = StdioServerParameters(command="npx", args=["-y", "{NAME}"])\n'
)


def test_python_source_in_another_encoding_is_not_rewritten(tmp_path: Path) -> None:
    _write(tmp_path, {"agent.py": UTF7})
    notes, sources = _run(tmp_path)
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == UTF7
    assert sources == []
    assert notes == (
        "agent.py:3: not rewritten (the file declares the encoding utf-7; only UTF-8 "
        f"source is rewritten); {BY_HAND}",
    )


def test_python_declared_latin1_that_reads_the_same_is_rewritten(tmp_path: Path) -> None:
    text = (
        "# -*- coding: latin-1 -*-\n"
        "from mcp import StdioServerParameters\n"
        f'A = StdioServerParameters(command="npx", args=["-y", "{NAME}"])\n'
    )
    _write(tmp_path, {"agent.py": text})
    notes, sources = _run(tmp_path)
    want = text.replace(f'"{NAME}"', f'"{NAME}@2.0.1"')
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == want
    assert sources == [("agent.py", SourceStatus.OK)]
    assert notes == (f"agent.py:3: MCP server '(unnamed)' now launches {NAME}@2.0.1.",)


def test_a_file_of_many_launches_is_checked_within_a_bound_then_on_the_next_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # every launch and every token tried costs a parse of the whole file: a hostile 4 MiB
    # file of 200 launches held the run for over fourteen minutes. The bound (shrunk here
    # to this small file's scale) leaves the rest to a note, and to the next run
    from agentguard.harden import launch_edit

    lines = ["from mcp import StdioServerParameters"] + [
        f'S{i} = StdioServerParameters(command="npx", args=["-y", "{NAME}"])' for i in range(5)
    ]
    text = "\n".join(lines) + "\n"
    _write(tmp_path, {"agent.py": text})
    monkeypatch.setattr(launch_edit, "MAX_REPARSED_CHARS", len(text) * 6)
    notes, sources = _run(tmp_path)
    pinned = text.replace(f'"{NAME}"', f'"{NAME}@2.0.1"', 2)
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == pinned
    assert sources == [("agent.py", SourceStatus.OK)]
    too_large = "the file is too large to check this many edits in one run"
    assert notes == (
        *(f"agent.py:{n}: not rewritten ({too_large}); {BY_HAND}" for n in (4, 5, 6)),
        *(f"agent.py:{n}: MCP server '(unnamed)' now launches {NAME}@2.0.1." for n in (2, 3)),
    )
    for _ in range(4):  # each run pins what its bound allows (the pinned file is longer)
        _run(tmp_path)
    assert (tmp_path / "agent.py").read_text(encoding="utf-8") == text.replace(
        f'"{NAME}"', f'"{NAME}@2.0.1"'
    )


TS_ESCAPED = """\
import { query } from "@anthropic-ai/claude-agent-sdk";
for await (const m of query({ prompt: "hi", options: { mcpServers: {
  tracker: { command: "npx", args: ["-y", "@acme/tracker\\u002dmcp"] },
} } })) {}
"""


def test_typescript_escaped_argument_names_the_package_node_runs(tmp_path: Path) -> None:
    # read as `@acme/trackermcp` once: the lock pinned another package than node runs, and
    # the note told the user to launch that one by hand
    _write(tmp_path, {"agent.ts": TS_ESCAPED})
    notes, sources = _run(tmp_path)
    assert (tmp_path / "agent.ts").read_text(encoding="utf-8") == TS_ESCAPED
    assert sources == []
    assert notes == (
        f"agent.ts:2: not rewritten (the argument is not a plain string written there); {BY_HAND}",
    )

"""`lock --write-launch` beyond JSON: a Codex `config.toml` and a workflow's run-gemini-cli
`settings` (JSON in a YAML block scalar). Exactly the launch argument changes, in its own
quoting; comments (including ones that spell the launch), layout, CRLF line ends and the
BOM stay byte for byte; what cannot be pinned exactly stays a note with the reason."""

from __future__ import annotations

from pathlib import Path

from agentguard.facts.agents import McpServer
from agentguard.facts.mcp_pins import LockedDependency, ServerLock, ServerPin
from agentguard.findings import SourceStatus
from agentguard.harden.launches import write_launches
from agentguard.inspect.project.servers import project_servers
from agentguard.lock.servers.resolve import ServerResult

# the shape of github/github-mcp-server's docs/installation-guides/install-codex.md, with
# the tracker in a literal string and the fetch server's arguments one a line
CODEX = (
    "\ufeff# Codex settings for this repository\r\n"
    'model = "o4-mini"\r\n'
    "\r\n"
    "[mcp_servers.tracker]\r\n"
    'command = "npx"\r\n'
    '# args = ["-y", "@acme/tracker-mcp"] -- the old launch, kept as a note\r\n'
    "args = ['-y',   '@acme/tracker-mcp']   # the tracker\r\n"
    'env = { TRACKER_URL = "https://tracker.example.invalid/api" }\r\n'
    "\r\n"
    "[mcp_servers.fetch]\r\n"
    'command = "uvx"\r\n'
    "args = [\r\n"
    '  "mcp-server-fetch",  # newest\r\n'
    "]\r\n"
)
CODEX_WANT = CODEX.replace("'@acme/tracker-mcp']", "'@acme/tracker-mcp@2.0.1']").replace(
    '  "mcp-server-fetch",', '  "--from", "mcp-server-fetch==2025.4.7", "mcp-server-fetch",'
)

# google-gemini/gemini-cli's .github/workflows/gemini-automated-issue-dedup.yml, cut down
WORKFLOW = """\
name: 'Find duplicate issues'
on:
  issues:
    types: ['opened']
jobs:
  dedup:
    runs-on: 'ubuntu-latest'
    steps:
      - name: 'Find Duplicate Issues'
        uses: 'google-github-actions/run-gemini-cli@a3bf79042542528e91937b3a3a6fbc4967ee3c31' # ratchet:google-github-actions/run-gemini-cli@v0
        with:
          gemini_api_key: '${{ secrets.GEMINI_API_KEY }}'
          settings: |-
            {
              "mcpServers": {
                "tracker": {
                  "command": "npx",
                  "args": [
                    "-y",
                    "@acme/tracker-mcp"
                  ],
                  "timeout": 600000
                },
                "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}
              },
              "maxSessionTurns": 25
            }
          prompt: 'Use "@acme/tracker-mcp" to find duplicates.'
"""
WORKFLOW_WANT = WORKFLOW.replace('"@acme/tracker-mcp"\n', '"@acme/tracker-mcp@2.0.1"\n').replace(
    '"args": ["mcp-server-fetch"]',
    '"args": ["--from", "mcp-server-fetch==2025.4.7", "mcp-server-fetch"]',
)


def _result(servers: tuple[McpServer, ...]) -> ServerResult:
    dep = LockedDependency("mcp-server-fetch", "2025.4.7", None, ("sha256:" + "0" * 64,))
    pins = []
    for s in servers:
        if s.name == "tracker":
            pins.append(ServerPin("npm", "@acme/tracker-mcp", "2.0.1", s.name, s.path, s.line))
        elif s.name == "fetch":
            pins.append(
                ServerPin(
                    "pypi",
                    "mcp-server-fetch",
                    "2025.4.7",
                    s.name,
                    s.path,
                    s.line,
                    environment=(dep,),
                )
            )
    return ServerResult(written=True, lock=ServerLock("mcp.lock.json", tuple(pins), ""))


def _write(root: Path, name: str, data: str) -> Path:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data.encode("utf-8"))
    return path


def _run(
    root: Path,
) -> tuple[tuple[str, ...], list[tuple[str, SourceStatus, str | None]], dict[str, int]]:
    servers, _ = project_servers(root)
    notes, sources = write_launches(root, servers, _result(servers))
    lines = {s.name: s.line for s in servers}
    return notes, [(s.name, s.status, s.error_code) for s in sources], lines


def test_codex_toml_keeps_quoting_comments_crlf_and_bom(tmp_path: Path) -> None:
    path = _write(tmp_path, ".codex/config.toml", CODEX)
    notes, sources, lines = _run(tmp_path)
    assert path.read_bytes() == CODEX_WANT.encode("utf-8")
    assert sources == [(".codex/config.toml", SourceStatus.OK, None)]
    assert notes == (
        f".codex/config.toml:{lines['tracker']}: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1.",
        f".codex/config.toml:{lines['fetch']}: MCP server 'fetch' now launches mcp-server-fetch==2025.4.7.",
    )
    # pinned: a second run has nothing to do
    assert _run(tmp_path)[:2] == ((), [])
    assert path.read_bytes() == CODEX_WANT.encode("utf-8")


def test_workflow_settings_json_in_a_block_scalar(tmp_path: Path) -> None:
    path = _write(tmp_path, ".github/workflows/dedup.yml", WORKFLOW)
    notes, sources, lines = _run(tmp_path)
    assert path.read_text(encoding="utf-8") == WORKFLOW_WANT
    assert sources == [(".github/workflows/dedup.yml", SourceStatus.OK, None)]
    assert notes == (
        f".github/workflows/dedup.yml:{lines['tracker']}: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1.",
        f".github/workflows/dedup.yml:{lines['fetch']}: MCP server 'fetch' now launches mcp-server-fetch==2025.4.7.",
    )


def test_the_same_server_in_two_steps_is_left_alone(tmp_path: Path) -> None:
    step = WORKFLOW.split("    steps:\n", 1)[1]
    text = WORKFLOW + step.replace("Find Duplicate Issues", "Again")
    path = _write(tmp_path, ".github/workflows/dedup.yml", text)
    notes, sources, _ = _run(tmp_path)
    assert path.read_text(encoding="utf-8") == text
    assert sources == []
    assert len(notes) == 4
    assert all(
        "not rewritten (2 entries of the file are this server (one is needed)); launch `" in n
        for n in notes
    ), notes


def test_what_no_exact_span_holds_stays_a_note(tmp_path: Path) -> None:
    # a multi-line TOML string is never edited; JSON settings in a double-quoted YAML
    # scalar has no span that spells the argument
    toml = '[mcp_servers.tracker]\ncommand = "npx"\nargs = ["-y", """@acme/tracker-mcp"""]\n'
    yaml_text = WORKFLOW.replace(
        WORKFLOW[WORKFLOW.index("          settings: |-") : WORKFLOW.index("          prompt:")],
        '          settings: "{\\"mcpServers\\": {\\"tracker\\": {\\"command\\": \\"npx\\", '
        '\\"args\\": [\\"-y\\", \\"@acme/tracker-mcp\\"]}}}"\n',
    )
    _write(tmp_path, ".codex/config.toml", toml)
    _write(tmp_path, ".github/workflows/dedup.yml", yaml_text)
    notes, sources, lines = _run(tmp_path)
    assert (tmp_path / ".codex/config.toml").read_text(encoding="utf-8") == toml
    assert (tmp_path / ".github/workflows/dedup.yml").read_text(encoding="utf-8") == yaml_text
    assert sources == []
    hand = "launch `npx -y @acme/tracker-mcp@2.0.1` there by hand."
    assert notes == (
        f".codex/config.toml:1: not rewritten (no string in the file spells `@acme/tracker-mcp` exactly); {hand}",
        # (the prompt's `"@acme/tracker-mcp"` spells it, and re-reads as a changed prompt)
        f".github/workflows/dedup.yml:{lines['tracker']}: not rewritten (no span of the file re-reads as the pinned launch); {hand}",
    )


def test_a_file_changed_after_the_read_is_not_written(tmp_path: Path) -> None:
    from agentguard.harden.launch_edit import ReadFile, read_file, write_checked

    path = _write(tmp_path, ".codex/config.toml", CODEX)
    read = read_file(tmp_path, ".codex/config.toml")
    assert isinstance(read, ReadFile)
    path.write_text(
        "# edited meanwhile\n", encoding="utf-8"
    )  # another writer, between read and write
    source = write_checked(tmp_path, read, "pinned", 1)
    assert (source.name, source.status, source.error_code) == (
        ".codex/config.toml", SourceStatus.FAILED, "rewrite-changed",
    )  # fmt: skip
    assert path.read_text(encoding="utf-8") == "# edited meanwhile\n"


# YAML's own scalars (a Continue-style `config.yaml`; no reader of agentguard takes servers
# from one yet, so the server is built as a reader would): a plain scalar in a block
# sequence grows into three items at its indent, a single-quoted one keeps its quotes
CONTINUE = """\
mcpServers:
  - name: fetch   # the fetch server
    command: uvx
    args:
      - mcp-server-fetch   # newest
  - name: tracker
    command: npx
    args: ['-y', '@acme/tracker-mcp']
"""
CONTINUE_WANT = CONTINUE.replace(
    "      - mcp-server-fetch   # newest\n",
    "      - --from\n      - mcp-server-fetch==2025.4.7\n      - mcp-server-fetch   # newest\n",
).replace("'@acme/tracker-mcp']", "'@acme/tracker-mcp@2.0.1']")


def test_yaml_scalars_keep_their_style() -> None:
    from agentguard.facts.mcp_pins import registry_launches
    from agentguard.harden.launch_edit import plan_document
    from agentguard.harden.launch_yaml import YamlFormat

    servers = (
        McpServer("fetch", "config.yaml", 2, "config.yaml", "stdio", "uvx", ("mcp-server-fetch",)),
        McpServer(
            "tracker", "config.yaml", 6, "config.yaml", "stdio", "npx", ("-y", "@acme/tracker-mcp")
        ),
    )
    pins = _result(servers).lock
    assert pins is not None
    found, _ = registry_launches(servers)
    todo = [
        (x, p, s)
        for x, s in zip(found, servers, strict=True)
        for p in pins.pins
        if p.server == s.name
    ]
    for eol in ("\n", "\r\n"):
        text, notes, count = plan_document(YamlFormat(), CONTINUE.replace("\n", eol), todo)
        assert text == CONTINUE_WANT.replace("\n", eol)
        assert (notes, count) == (
            [
                "config.yaml:2: MCP server 'fetch' now launches mcp-server-fetch==2025.4.7.",
                "config.yaml:6: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1.",
            ],
            2,
        )

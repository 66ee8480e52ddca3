"""MCP servers written by here-documents: workflow run steps (modelled on
anthropics/claude-code-action base-action/examples/issue-triage.yml), Dockerfiles and
shell scripts; and the shell's own reading of a here-document."""

from __future__ import annotations

import textwrap

from agentguard.findings import Source
from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.model import McpServer, Unknown
from agentguard.inspect.project.shell_heredocs import heredocs, text_lines

WORKFLOW = ".github/workflows/issue-triage.yml"
GH_IMAGE = "ghcr.io/github/github-mcp-server:sha-23fa0dd"
TRIAGE = """\
name: Claude Issue Triage Example
on:
  issues:
    types: [opened]
jobs:
  triage-issue:
    runs-on: ubuntu-latest
    steps:
      - name: Setup GitHub MCP Server
        run: |
          mkdir -p /tmp/mcp-config
          cat > /tmp/mcp-config/mcp-servers.json << 'EOF'
          {
            "mcpServers": {
              "github": {
                "command": "docker",
                "args": [
                  "run",
                  "-i",
                  "--rm",
                  "-e",
                  "GITHUB_PERSONAL_ACCESS_TOKEN",
                  "ghcr.io/github/github-mcp-server:sha-23fa0dd"
                ],
                "env": {
                  "GITHUB_PERSONAL_ACCESS_TOKEN": "${{ secrets.GITHUB_TOKEN }}"
                }
              }
            }
          }
          EOF
"""
DECLARED = "here-document in a run step writing mcp-servers.json"


def _read(path: str, kind: str, text: str) -> tuple[list[McpServer], list[Source]]:
    out = process_file(path, kind, text.encode())
    return out.mcp_servers, out.sources


def test_a_run_step_heredoc_is_a_launch_at_the_line_of_its_name() -> None:
    servers, sources = _read(WORKFLOW, "script", TRIAGE)
    assert servers == [
        McpServer(
            "github",
            WORKFLOW,
            15,
            DECLARED,
            "stdio",
            "docker",
            ("run", "-i", "--rm", "-e", "GITHUB_PERSONAL_ACCESS_TOKEN", GH_IMAGE),
        )
    ]  # fmt: skip  (the token is `${{ secrets.GITHUB_TOKEN }}`: unknown, so not kept)
    assert [(s.status.value, s.name, s.reason) for s in sources] == [
        ("ok", WORKFLOW, "MCP servers written by here-documents (1)")
    ]


def test_unquoted_bodies_are_expanded_by_the_shell_and_expressions_by_actions() -> None:
    text = TRIAGE.replace("<< 'EOF'", "<<EOF").replace(
        '"ghcr.io/github/github-mcp-server:sha-23fa0dd"', '"${IMAGE}"'
    )
    text = text.replace('"--rm",', '"${{ inputs.rm }}",')
    (server,) = _read(WORKFLOW, "script", text)[0]
    assert server.args == (
        "run",
        "-i",
        Unknown("${{ inputs.rm }}", "a workflow expression, known only when the workflow runs"),
        "-e",
        "GITHUB_PERSONAL_ACCESS_TOKEN",
        Unknown("${IMAGE}", "expanded by the shell when the here-document is written"),
    )
    quoted = TRIAGE.replace('"ghcr.io/github/github-mcp-server:sha-23fa0dd"', '"${IMAGE}"')
    (server,) = _read(WORKFLOW, "script", quoted)[0]
    assert server.args[-1] == "${IMAGE}"  # a quoted delimiter: written as it stands


def test_two_heredocs_defining_one_name_are_two_candidates() -> None:
    step = textwrap.indent(
        "cat > a.json <<'A'\n"
        '{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@acme/fs-mcp@1.0.0"]}}}\n'
        "A\n"
        "cat > b.json <<'B'\n"
        '{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "@acme/fs-mcp"]}}}\n'
        "B\n",
        "          ",
    )
    text = "on: push\njobs:\n  j:\n    steps:\n      - run: |\n" + step
    servers, _ = _read(WORKFLOW, "script", text)
    assert [(m.name, m.line, m.declared_in, m.args) for m in servers] == [
        ("fs", 7, "here-document in a run step writing a.json", ("-y", "@acme/fs-mcp@1.0.0")),
        ("fs", 10, "here-document in a run step writing b.json", ("-y", "@acme/fs-mcp")),
    ]


def test_a_body_that_is_not_json_and_a_duplicate_key_are_failed_sources() -> None:
    broken = TRIAGE.replace('"--rm",', '"--rm"')
    servers, sources = _read(WORKFLOW, "script", broken)
    assert servers == []
    (src,) = sources
    assert (src.status.value, src.error_code) == ("failed", "heredoc-syntax")
    assert src.reason is not None and src.reason.startswith(
        "the here-document opened at line 12 holds `mcpServers` and is not JSON agentguard "
        "reads (line 21:"
    )
    twice = TRIAGE.replace('"mcpServers": {', '"mcpServers": {"github": {},', 1)
    servers, sources = _read(WORKFLOW, "script", twice)
    assert servers == [] and [s.error_code for s in sources] == ["heredoc-duplicate-key"]


def test_an_unterminated_heredoc_runs_to_the_end_and_says_so() -> None:
    text = TRIAGE.replace("          EOF\n", "")
    (server,) = _read(WORKFLOW, "script", text)[0]
    assert server.declared_in == f"{DECLARED} (no closing `EOF`: it runs to the end)"


def test_a_huge_body_is_a_failed_source_not_a_clean_result() -> None:
    filler = '"x": "' + "y" * (1 << 20) + '",'
    text = TRIAGE.replace('"mcpServers": {', filler + '"mcpServers": {', 1)
    servers, sources = _read(WORKFLOW, "script", text)
    assert servers == []
    assert [(s.status.value, s.error_code) for s in sources] == [("failed", "heredoc-too-large")]


def test_a_dockerfile_run_heredoc_and_a_nested_one_in_a_script() -> None:
    dockerfile = (
        "FROM node:22-slim\n"
        "# cat <<EOF in a comment is no heredoc\n"
        "RUN mkdir -p /root/.gemini && cat > /root/.gemini/settings.json <<'JSON'\n"
        '{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}\n'
        "JSON\n"
    )
    servers, _ = _read("Dockerfile", "container", dockerfile)
    assert servers == [
        McpServer(
            "fetch", "Dockerfile", 4, "here-document in a Dockerfile writing settings.json",
            "stdio", "uvx", ("mcp-server-fetch",),
        )
    ]  # fmt: skip
    script = (
        "ssh host bash <<'OUTER'\n"
        "cat > ~/.mcp.json <<'INNER'\n"
        '{"mcpServers": {"fetch": {"command": "uvx", "args": ["mcp-server-fetch"]}}}\n'
        "INNER\n"
        "OUTER\n"
    )
    servers, _ = _read("scripts/setup.sh", "script", script)
    assert [(m.name, m.line, m.declared_in) for m in servers] == [
        ("fetch", 3, "here-document in a shell script writing .mcp.json")
    ]


def test_the_shell_reading_of_operators_quotes_and_tabs() -> None:
    lines = text_lines(
        "echo '<<NOT' \"<<NOT\" <<<here-string # <<NOT\n"
        'cat <<-"A" <<B\n'
        "\tbody a\n"
        "\tA\n"
        "body b $X\n"
        "B\n"
    )
    got = [(h.delimiter, h.quoted, h.opened_at, h.body, h.terminated) for h in heredocs(lines)]
    assert got == [
        ("A", True, 2, ((3, "body a"),), True),
        ("B", False, 2, ((5, "body b $X"),), True),
    ]


def test_more_heredocs_than_the_cap_is_a_failed_source() -> None:
    script = "".join(f"cat <<E{k}\nx\nE{k}\n" for k in range(501))
    script += "cat > .mcp.json <<'J'\n" + '{"mcpServers": {}}\n' + "J\n"
    servers, sources = _read("many.sh", "script", script)
    assert servers == []
    assert [(s.status.value, s.error_code, s.reason) for s in sources] == [
        (
            "failed",
            "cap-heredocs",
            "more than 500 here-documents (the next opened at line 1501): the rest were not "
            "read for MCP servers",
        )
    ]


# modelled on pydantic/pydantic-ai .github/workflows/pydantic-ai-bug-hunter.lock.yml (gh-aw,
# compiled): an unquoted heredoc piped to the MCP gateway, with `\${...}` the shell turns
# into `${...}`, a workflow expression and a shell variable outside any JSON string
GATEWAY = """\
name: bug hunter
on: workflow_dispatch
jobs:
  agent:
    runs-on: ubuntu-latest
    steps:
      - name: Start MCP Gateway
        run: |
          cat << GH_AW_MCP_CONFIG_5738f59e903ef0c5_EOF | "$GH_AW_NODE" start_mcp_gateway.cjs
          {
            "mcpServers": {
              "github": {
                "command": "docker",
                "args": ["run", "-i", "--rm", "-w", "\\${GITHUB_WORKSPACE}", "ghcr.io/github/github-mcp-server:v1.7.0"],
                "guard-policies": {
                  "write-sink": {
                    "accept": ["*"],
                    "sink-visibility": ${{ toJSON(steps.lockdown.outputs.visibility) }}
                  }
                }
              }
            },
            "gateway": {
              "port": $MCP_GATEWAY_PORT,
              "apiKey": "${MCP_GATEWAY_API_KEY}"
            }
          }
          GH_AW_MCP_CONFIG_5738f59e903ef0c5_EOF
"""


def test_a_gateway_heredoc_with_expressions_outside_strings_is_read() -> None:
    """A `${{ }}` or a shell expansion where a JSON value stands is a value known only when
    the step runs (it was a failed source, exit 3, on 11 of pydantic-ai's compiled
    workflows); `\\$` is the shell's escape, read as the shell writes it."""
    servers, sources = _read(WORKFLOW, "script", GATEWAY)
    assert [(s.status.value, s.reason) for s in sources] == [
        ("ok", "MCP servers written by here-documents (1)")
    ]
    (server,) = servers
    assert (server.name, server.line, server.command) == ("github", 12, "docker")
    assert server.args == (
        "run",
        "-i",
        "--rm",
        "-w",
        Unknown("${GITHUB_WORKSPACE}", "expanded by the shell when the here-document is written"),
        "ghcr.io/github/github-mcp-server:v1.7.0",
    )

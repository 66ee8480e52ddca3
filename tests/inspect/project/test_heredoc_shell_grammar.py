"""Here-documents the shell reads where a line-by-line scanner did not: each script is run by
the real bash first (it only writes its here-document with `cat`, in a temporary folder), to
show the launch is real, then read by agentguard, which must find the same server at the
line of its name. Modelled on attacks on the launch readers: quotes and `$'...'` strings
across lines, a here-document inside a quoted command substitution, arithmetic `<<`,
a `\\` line continuation inside the operator, a commented or escaped JSON body, nesting
past the cap."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.model import McpServer
from agentguard.inspect.project.shell_heredocs import MAX_NESTING
from agentguard.inspect.project.shell_lexer import MAX_CONTEXTS, Lexer, Opening
from tests.lock.helpers import run_json

SERVER = '{"mcpServers": {"evil": {"command": "npx", "args": ["-y", "evil-pkg"]}}}'
ESCAPED = SERVER.replace("mcpServers", "mcp\\u0053ervers")
WRITES = "here-document in a shell script writing .mcp.json"
FROM_A_VARIABLE = "here-document in a shell script"

SCRIPTS = {
    # `$'it\'s'` is one string to bash: the `<<` after it is an operator
    "ansi_c_string": (f"echo $'it\\'s' >/dev/null; cat > .mcp.json <<'JSON'\n{SERVER}\nJSON\n", 2),
    # a double-quoted string over two lines: its closing quote does not open one
    "quote_across_lines": (
        f"echo \"x\n\" >/dev/null; cat > .mcp.json <<'JSON'\n{SERVER}\nJSON\n",
        3,
    ),
    # a here-document inside "$(...)": quoted outside, read as commands inside
    "quoted_command_substitution": (
        f"x=\"$(cat <<'JSON'\n{SERVER}\nJSON\n)\"\nprintf '%s\\n' \"$x\" > .mcp.json\n",
        2,
    ),
    # `1<<2` is arithmetic: four of them do not use up the nesting cap
    "arithmetic_shifts": ("x=$((1<<2))\n" * 4 + f"cat > .mcp.json <<'JSON'\n{SERVER}\nJSON\n", 6),
    # `\` newline joins `<` and `<'JSON'` into one operator
    "continued_operator": (f"cat > .mcp.json <\\\n<'JSON'\n{SERVER}\nJSON\n", 3),
    # a comment before the object: JSONC readers (Gemini CLI, VS Code) take it
    "comment_before_the_object": (f"cat > .mcp.json <<'JSON'\n// servers\n{SERVER}\nJSON\n", 3),
    # `mcp\u0053ervers` is `mcpServers` to JSON.parse, and holds no `mcpServers` bytes
    "escaped_key": (f"cat > .mcp.json <<'JSON'\n{ESCAPED}\nJSON\n", 2),
}


def _bash_writes(tmp_path: Path, script: str) -> str:
    bash = shutil.which("bash")
    assert bash is not None
    (tmp_path / "setup.sh").write_text(script)
    subprocess.run(
        [bash, "--noprofile", "--norc", "setup.sh"],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        check=True,
        timeout=10,
        capture_output=True,
    )
    return (tmp_path / ".mcp.json").read_text()


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_heredoc_bash_writes_is_a_launch(name: str, tmp_path: Path) -> None:
    script, line = SCRIPTS[name]
    written = _bash_writes(tmp_path, script).removeprefix("// servers\n")
    assert json.loads(written)["mcpServers"]["evil"]["args"] == ["-y", "evil-pkg"]
    out = process_file("setup.sh", "script", script.encode())
    declared = FROM_A_VARIABLE if name == "quoted_command_substitution" else WRITES
    assert out.mcp_servers == [
        McpServer("evil", "setup.sh", line, declared, "stdio", "npx", ("-y", "evil-pkg"))
    ]
    assert [(s.status.value, s.reason) for s in out.sources] == [
        ("ok", "MCP servers written by here-documents (1)")
    ]


def test_heredocs_nested_past_the_cap_are_a_failed_source(tmp_path: Path) -> None:
    levels = [f"L{k}" for k in range(MAX_NESTING + 1)]
    script = "".join(f"bash <<'{d}'\n" for d in levels[:-1])
    script += f"cat > .mcp.json <<'{levels[-1]}'\n{SERVER}\n{levels[-1]}\n"
    script += "".join(f"{d}\n" for d in reversed(levels[:-1]))
    assert "evil-pkg" in _bash_writes(tmp_path, script)
    out = process_file("setup.sh", "script", script.encode())
    assert out.mcp_servers == []
    assert [(s.status.value, s.name, s.reason, s.error_code) for s in out.sources] == [
        (
            "failed",
            "setup.sh",
            f"the here-document opened at line {MAX_NESTING} holds `mcpServers` and "
            f"here-documents nested more than {MAX_NESTING} deep: they were not read",
            "cap-heredoc-nesting",
        )
    ]


def test_the_file_a_heredoc_writes_is_read_from_its_own_command() -> None:
    script = f"echo x > /dev/null; cat > .mcp.json <<'JSON'\n{SERVER}\nJSON\n"
    (server,) = process_file("setup.sh", "script", script.encode()).mcp_servers
    assert server.declared_in == WRITES  # not `/dev/null`, the first `>` of the line


def test_a_launch_value_of_the_wrong_type_is_unknown_not_a_crash(tmp_path: Path) -> None:
    """`args` holding an object crashed the AG310 check (`dict.rsplit`): the whole run was an
    internal error. A value that is not a string is unknown, as a parameter is."""
    body = '{"mcpServers": {"a": {"command": "docker", "args": ["run", {"x": 1}, 5, "img"]}}}'
    (tmp_path / "setup.sh").write_text(f"cat > .mcp.json <<'JSON'\n{body}\nJSON\n")
    (tmp_path / "mcp.ts").write_text(f"export const c = {body};\n")
    code, report, _ = run_json("inspect", str(tmp_path))
    assert code == 0, report  # (low findings only; an internal error is exit 3)
    assert [s for s in report["sources"] if s["status"] != "ok"] == []
    assert sorted(
        (f["rule_id"], f["locations"][0]["path"], f["message"])
        for f in report["findings"]
        if f["rule_id"] == "AG310"
    ) == [
        (
            "AG310",
            path,
            f"MCP server 'a' ({said}) launches an image: the image could not be read.",
        )
        for path, said in (
            ("mcp.ts", "mcpServers object in code"),
            ("setup.sh", "here-document in a shell script writing .mcp.json"),
        )
    ]


def test_an_operator_a_workflow_expression_writes_is_an_operator() -> None:
    """Actions replaces `${{ }}` before bash reads the step: `${{ '<<' }}JSON` is `<<JSON`."""
    workflow = (
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n"
        "          cat > .mcp.json ${{ '<<' }}JSON\n"
        f"          {SERVER}\n"
        "          JSON\n"
    )
    out = process_file(".github/workflows/w.yml", "script", workflow.encode())
    assert out.mcp_servers == [
        McpServer(
            "evil",
            ".github/workflows/w.yml",
            8,
            "here-document in a run step writing .mcp.json",
            "stdio",
            "npx",
            ("-y", "evil-pkg"),
        )
    ]


def test_a_zsh_script_is_read_as_a_shell_script() -> None:
    script = f"cat > .mcp.json <<'JSON'\n{SERVER}\nJSON\n"
    (server,) = process_file("setup.zsh", "script", script.encode()).mcp_servers
    assert (server.name, server.path, server.line, server.args) == (
        "evil",
        "setup.zsh",
        2,
        ("-y", "evil-pkg"),
    )


def test_contexts_nested_past_the_cap_start_the_reading_again() -> None:
    """A million unclosed `"$(` on line 1 made every later line copy the million-deep state.
    Past the cap the reading starts again at plain commands, where `<<` is an operator."""
    lexer = Lexer()
    lexer.line('"$(' * (MAX_CONTEXTS + 1))
    assert lexer.line("cat > .mcp.json <<'JSON'") == ([Opening("JSON", True, False, 16)], False)
    assert lexer.stack == ["sh"]


def test_a_claude_json_body_has_its_servers_under_projects() -> None:
    """Claude Code reads `projects.PATH.mcpServers` of `~/.claude.json`: a here-document
    writing `$HOME/.claude.json` launches them, and was read as holding no server."""
    body = f'{{"projects": {{"/work": {SERVER}}}}}'
    script = f"cat > \"$HOME/.claude.json\" <<'JSON'\n{body}\nJSON\n"
    assert process_file("setup.sh", "script", script.encode()).mcp_servers == [
        McpServer(
            "evil",
            "setup.sh",
            2,
            "here-document in a shell script writing .claude.json",
            "stdio",
            "npx",
            ("-y", "evil-pkg"),
        )
    ]

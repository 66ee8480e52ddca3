"""`check --base REF` on real git repositories made here: what a change adds and resolves,
the locks' delta, the growth gate, and a base that cannot be read (exit 3)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from agentguard.cli import app

BOT = "from claude_agent_sdk import ClaudeAgentOptions\n\noptions = ClaudeAgentOptions({})\n"


def git(repo: Path, *args: str, input_text: str | None = None) -> str:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.org",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.org",
    }
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        input=input_text,
    )
    return done.stdout


def commit(repo: Path, files: dict[str, str | None], message: str = "change") -> None:
    for name, text in files.items():
        path = repo / name
        if text is None:
            path.unlink()
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message)


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    return r


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args], env={"NO_COLOR": "1"})


def report(repo: Path, base: str = "HEAD~1", *extra: str | Path) -> tuple[int, dict[str, Any]]:
    result = run("check", repo, "--base", base, "--format", "json", "-q", *extra)
    return result.exit_code, json.loads(result.stdout)


def where(findings: list[dict[str, Any]]) -> list[tuple[str, str, int | None]]:
    return sorted(
        (f["rule_id"], f["locations"][0]["path"], f["locations"][0].get("line")) for f in findings
    )


def test_adding_bash_to_allowed_tools_is_new_and_the_old_finding_resolved(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format('tools=["Read", "Bash"], allowed_tools=["Read"]')})
    commit(repo, {"bot.py": BOT.format('tools=["Read", "Bash"], allowed_tools=["Read", "Bash"]')})
    code, doc = report(repo)
    assert code == 1
    assert where(doc["findings"]) == [("AG301", "bot.py", 3)]
    (new,) = doc["findings"]
    assert new["evidence"]["arbitrary_code"] == ["Bash"]  # now pre-approved: runs any code
    delta = doc["facts"]["delta"]
    assert where(delta["resolved"]) == [("AG301", "bot.py", 3)]
    assert "arbitrary_code" not in delta["resolved"][0]["evidence"]
    assert (delta["new"], delta["new_at_or_above_fail_on"], delta["unchanged"]) == (1, 1, 3)
    assert delta["base"]["compared"] is True
    assert delta["base"]["commit"] == git(repo, "rev-parse", "HEAD~1").strip()
    assert delta["capabilities"] == {
        "agents": [
            {
                "agent": "claude-agent-sdk ClaudeAgentOptions(...) in bot.py",
                "status": "changed",
                "changes": {
                    "tools": {
                        "added": ["shell: Bash (live, pre-approved)"],
                        "removed": ["shell: Bash (live, asked)"],
                    }
                },
                "growth": [{"kind": "pre-approval", "what": "shell tools run unasked"}],
            }
        ]
    }


def test_removing_tools_opens_the_whole_built_in_set(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format('tools=["Read"], allowed_tools=["Read"]')})
    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]')})
    code, doc = report(repo)
    assert code == 1
    assert where(doc["findings"]) == [
        ("AG301", "bot.py", 3),
        ("AG302", "bot.py", 3),
        ("AG303", "bot.py", 3),
        ("AG304", "bot.py", 3),
    ]
    assert where(doc["facts"]["delta"]["resolved"]) == [("AG302", "bot.py", 3)]
    (agent,) = doc["facts"]["delta"]["capabilities"]["agents"]
    assert agent["changes"]["tools"]["removed"] == []
    assert "shell: Bash (live, asked)" in agent["changes"]["tools"]["added"]
    assert agent["changes"]["network"] == {
        "added": ["network unknown, web tools live"],
        "removed": ["network unknown, web tools removed"],
    }
    kinds = {(g["kind"], g["what"]) for g in agent["growth"]}
    assert ("shell-tool", "Bash live") in kinds
    text = run("check", repo, "--base", "HEAD~1", "-q").stdout
    assert "  + tools: shell: Bash (live, asked)" in text


def test_a_finding_that_only_moved_is_not_new(repo: Path) -> None:
    bot = BOT.format('allowed_tools=["Read"]')
    commit(repo, {"bot.py": bot})
    commit(repo, {"bot.py": "# a comment\n\n\n" + bot})
    code, doc = report(repo)
    assert (code, doc["findings"], doc["facts"]["delta"]["resolved"]) == (0, [], [])
    assert doc["facts"]["delta"]["unchanged"] == 6
    assert doc["facts"]["delta"]["capabilities"] == {"agents": []}  # moved, not changed


def test_a_readme_edit_has_no_delta_and_passes(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]'), "README.md": "hi\n"})
    commit(repo, {"README.md": "hi again\n"})
    assert run("check", repo, "-q").exit_code == 1  # the project has findings...
    code, doc = report(repo)
    assert code == 0  # ...none of them new
    delta = doc["facts"]["delta"]
    assert (doc["findings"], delta["resolved"], delta["locks"], delta["growth"]) == ([], [], [], [])
    text = run("check", repo, "--base", "HEAD~1", "-q").stdout
    assert "0 new finding(s) (0 at or above fail-on), 0 resolved, 6 unchanged" in text


def test_the_base_is_gathered_with_the_heads_configuration(repo: Path) -> None:
    """The base's own agentguard.toml switches nothing off: its AG301 is still found."""
    bot = BOT.format('tools=["Bash"]')
    commit(repo, {"bot.py": bot, "agentguard.toml": 'disable = ["AG301"]\n'})
    commit(repo, {"agentguard.toml": None})
    code, doc = report(repo)
    assert where(doc["findings"]) == []
    assert code == 0


UV_LOCK = """version = 1
requires-python = ">=3.10"

[[package]]
name = "demo"
version = "0.1.0"
source = {{ virtual = "." }}
dependencies = [{{ name = "mcp" }}]

[[package]]
name = "mcp"
version = "{}"
source = {{ registry = "https://pypi.org/simple" }}
sdist = {{ url = "https://files.pythonhosted.org/packages/mcp-{}.tar.gz", hash = "sha256:{}" }}
"""
PYPROJECT = '[project]\nname = "demo"\nversion = "0.1.0"\ndependencies = ["mcp"]\n'


def test_a_pin_bumped_across_a_major_in_the_lock(repo: Path, tmp_path: Path) -> None:
    commit(
        repo, {"pyproject.toml": PYPROJECT, "uv.lock": UV_LOCK.format("1.9.0", "1.9.0", "a" * 64)}
    )
    commit(repo, {"uv.lock": UV_LOCK.format("2.0.0", "2.0.0", "b" * 64)})
    code, doc = report(repo)
    # the lock's findings whose evidence names the locked version are new with it
    assert sorted(f["rule_id"] for f in doc["findings"]) == ["AG101", "AG105", "AG121"]
    assert code == 1
    (lock,) = doc["facts"]["delta"]["locks"]
    assert lock == {
        "lock": "uv.lock",
        "status": "changed",
        "added": [],
        "removed": [],
        "crosses_major": [
            {
                "lock": "uv.lock",
                "package": "mcp",
                "base": ["1.9.0"],
                "head": ["2.0.0"],
                "direction": "up",
            }
        ],
        "reason": None,
    }
    assert doc["facts"]["delta"]["growth"] == []
    text = run("check", repo, "--base", "HEAD~1", "-q").stdout
    assert "lock: uv.lock: mcp 1.9.0 -> 2.0.0 (a new major)" in text
    # the growth gate, from CI's configuration: exit 1 on the crossing alone
    ci = tmp_path / "ci.toml"
    ci.write_text('[delta]\nfail-on-growth = ["lock-major"]\n', encoding="utf-8")
    gated, doc = report(repo, "HEAD~1", "--config", ci, "--fail-on", "critical")
    assert gated == 1
    assert doc["facts"]["delta"]["growth"] == [
        {"kind": "lock-major", "what": "uv.lock: mcp 1.9.0 -> 2.0.0"}
    ]
    assert not [f for f in doc["findings"] if f["severity"] == "critical"]


def test_the_projects_own_growth_policy_is_not_honoured(repo: Path) -> None:
    """A pull request could delete the key: only --config's counts."""
    toml = PYPROJECT + '\n[tool.agentguard.delta]\nfail-on-growth = ["lock-major"]\n'
    commit(repo, {"pyproject.toml": toml, "uv.lock": UV_LOCK.format("1.9.0", "1.9.0", "a" * 64)})
    commit(repo, {"uv.lock": UV_LOCK.format("2.0.0", "2.0.0", "b" * 64)})
    code, doc = report(repo, "HEAD~1", "--fail-on", "critical")
    assert doc["facts"]["delta"]["growth"] == []
    assert any("fail-on-growth" in n and "not honoured" in n for n in doc["notes"])
    assert code == 0


def test_an_unknown_growth_kind_is_a_configuration_error(repo: Path, tmp_path: Path) -> None:
    commit(repo, {"bot.py": BOT.format("")})
    ci = tmp_path / "ci.toml"
    ci.write_text('[delta]\nfail-on-growth = ["everything"]\n', encoding="utf-8")
    result = run("check", repo, "--base", "HEAD", "--config", ci)
    assert result.exit_code == 2
    assert "fail-on-growth must be a list of lock-major" in result.stderr


def test_a_base_that_does_not_exist_is_a_failed_source(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]')})
    code, doc = report(repo, "no-such-branch")
    assert code == 3
    failed = [s for s in doc["sources"] if s["status"] == "failed"]
    assert [(s["kind"], s["name"], s["error_code"]) for s in failed] == [
        ("base", "no-such-branch", "base-ref-unknown")
    ]
    assert doc["facts"]["delta"]["base"] == {
        "ref": "no-such-branch",
        "commit": None,
        "compared": False,
    }
    # nothing is known to be new: every finding is shown, none is called new
    assert where(doc["findings"]) == where(
        json.loads(run("check", repo, "--format", "json", "-q").stdout)["findings"]
    )
    assert doc["facts"]["delta"]["new"] is None


def test_a_folder_that_is_not_a_repository_is_a_failed_source(tmp_path: Path) -> None:
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "bot.py").write_text(BOT.format(""), encoding="utf-8")
    code, doc = report(tmp_path / "p", "HEAD")
    assert code == 3
    (failed,) = [s for s in doc["sources"] if s["status"] == "failed"]
    assert (failed["kind"], failed["error_code"]) == ("base", "base-unreadable")


def test_a_ref_that_reads_as_an_option_is_a_usage_error(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format("")})
    result = run("check", repo, "--base=--output=/tmp/x")
    assert result.exit_code == 2
    assert "not a git revision" in result.stderr


def test_a_subfolder_is_compared_with_the_same_subfolder(repo: Path) -> None:
    commit(repo, {"svc/bot.py": BOT.format('allowed_tools=["Read"]'), "bot.py": BOT.format("")})
    commit(repo, {"svc/bot.py": BOT.format('tools=["Read"]')})
    code, doc = report(repo / "svc")
    # svc/bot.py against svc/bot.py (not the top level's bot.py, which has every finding)
    assert where(doc["findings"]) == [("AG302", "bot.py", 3)]  # `tools` = ['Read']
    assert where(doc["facts"]["delta"]["resolved"]) == [
        ("AG301", "bot.py", 3),
        ("AG302", "bot.py", 3),
        ("AG303", "bot.py", 3),
        ("AG304", "bot.py", 3),
    ]
    assert code == 0


def test_summary_markdown_escapes_the_repositorys_names(repo: Path, tmp_path: Path) -> None:
    name = "evil[x](https:__e)<b>@team`.py"
    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]')})
    commit(repo, {name: BOT.format('tools=["Bash"]')})
    summary = tmp_path / "summary.md"
    result = run("check", repo, "--base", "HEAD~1", "-q", "--summary", summary)
    assert result.exit_code == 1
    md = summary.read_text(encoding="utf-8")
    assert md.startswith("## agentguard check fails\n")
    assert "- **HIGH** AG301 ``evil[x](https:__e)<b>@team`.py:3, ClaudeAgentOptions(...)``" in md
    assert "### What each agent gains or loses" in md
    assert (
        "- `claude-agent-sdk ClaudeAgentOptions(...) in evil[x](https:__e)<b>@team`.py` (added)"
        not in md
    )
    assert (
        "- ``claude-agent-sdk ClaudeAgentOptions(...) in evil[x](https:__e)<b>@team`.py`` (added)"
        in md
    )
    assert "<b>" not in re.sub(r"``.*?``", "", md)  # only inside code spans


# -- the action: `base` defaults to the pull request's base commit ----------------------


@pytest.mark.parametrize("event", ["pull_request", "pull_request_target"])
def test_the_action_compares_a_pull_request_with_its_base(
    repo: Path, tmp_path: Path, event: str
) -> None:
    from tests.test_ci_files import run_check_step

    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]')})
    base = git(repo, "rev-parse", "HEAD").strip()
    commit(repo, {"README.md": "docs only\n"})
    out, summary = tmp_path / "out", tmp_path / "summary.md"
    summary.write_text("earlier step\n", encoding="utf-8")
    done = run_check_step(
        None,
        INPUT_PATH=str(repo),
        INPUT_SARIF=str(tmp_path / "a.sarif"),
        GITHUB_OUTPUT=str(out),
        GITHUB_STEP_SUMMARY=str(summary),
        RUNNER_TEMP=str(tmp_path),
        GITHUB_EVENT_NAME=event,
        EVENT_BASE_SHA=base,
    )
    assert done.returncode == 0, done.stderr
    assert out.read_text().startswith("exit-code=0\n")  # the project's findings are old
    text = summary.read_text(encoding="utf-8")
    assert text.startswith("earlier step\n## agentguard check passes\n")
    assert f"Change since `{base}` (`{base[:12]}`): 0 new finding(s)" in text
    sarif = json.loads((tmp_path / "a.sarif").read_text())
    assert sarif["runs"][0]["results"] == []  # only the new results: none


def test_the_action_without_the_base_commit_fails_incomplete(repo: Path, tmp_path: Path) -> None:
    from tests.test_ci_files import run_check_step

    commit(repo, {"bot.py": BOT.format("")})
    out = tmp_path / "out"
    done = run_check_step(
        None,
        INPUT_PATH=str(repo),
        INPUT_SARIF=str(tmp_path / "a.sarif"),
        GITHUB_OUTPUT=str(out),
        RUNNER_TEMP=str(tmp_path),
        GITHUB_EVENT_NAME="pull_request",
        EVENT_BASE_SHA="0" * 40,  # a shallow checkout without it
    )
    assert out.read_text().startswith("exit-code=3\n"), done.stdout
    assert "INCOMPLETE: a source failed" in done.stdout
    assert "the base 0000000000000000000000000000000000000000 could not be read" in done.stdout


def test_the_action_on_a_push_has_no_base(repo: Path, tmp_path: Path) -> None:
    from tests.test_ci_files import run_check_step

    commit(repo, {"bot.py": BOT.format("")})
    out = tmp_path / "out"
    done = run_check_step(
        None,
        INPUT_PATH=str(repo),
        INPUT_SARIF=str(tmp_path / "a.sarif"),
        GITHUB_OUTPUT=str(out),
        RUNNER_TEMP=str(tmp_path),
        GITHUB_EVENT_NAME="push",
        EVENT_BASE_SHA="0" * 40,
    )
    assert out.read_text().startswith("exit-code=1\n"), done.stdout  # the whole check
    assert "Change since" not in done.stdout


def test_sarif_holds_only_the_new_results(repo: Path, tmp_path: Path) -> None:
    commit(repo, {"bot.py": BOT.format('tools=["Read"]')})
    commit(repo, {"bot.py": BOT.format('tools=["Read"]'), "svc.py": BOT.format('tools=["Bash"]')})
    sarif = tmp_path / "a.sarif"
    result = run("check", repo, "--base", "HEAD~1", "-q", "--sarif-output", sarif)
    assert result.exit_code == 1
    results = json.loads(sarif.read_text())["runs"][0]["results"]
    got = sorted(
        (r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"])
        for r in results
    )
    assert {uri for _, uri in got} == {"svc.py"} and ("AG301", "svc.py") in got
    plain = tmp_path / "plain.sarif"
    run("check", repo, "-q", "--sarif-output", plain)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in json.loads(plain.read_text())["runs"][0]["results"]
    }
    assert "bot.py" in uris  # the old findings are there without --base


MCP = '{{"mcpServers": {{"tracker": {{"command": "npx", "args": ["-y", "{}"]}}}}}}\n'
COMPOSE = "services:\n  bot:\n    build: .\n    volumes:\n{}"


def test_growth_of_the_agents_capabilities_gates_from_cis_configuration(
    repo: Path, tmp_path: Path
) -> None:
    """A new shell tool, an unpinned MCP server, a host mount: each is growth the policy
    can name; from --config the gate fails on it whatever --fail-on says."""
    bot = BOT.format('tools=["Read"], allowed_tools=["Read"]')
    commit(repo, {"bot.py": bot, ".mcp.json": MCP.format("@acme/tracker-mcp@1.2.3")})
    commit(
        repo,
        {
            "bot.py": BOT.format('tools=["Read", "Bash"], allowed_tools=["Read"]'),
            ".mcp.json": MCP.format("@acme/tracker-mcp"),
        },
    )
    ci = tmp_path / "ci.toml"
    ci.write_text('[delta]\nfail-on-growth = ["shell-tool", "unpinned-server"]\n', encoding="utf-8")
    code, doc = report(repo, "HEAD~1", "--config", ci, "--fail-on", "critical")
    growth = sorted((g["kind"], g["what"]) for g in doc["facts"]["delta"]["growth"])
    agent = "claude-agent-sdk ClaudeAgentOptions(...) in bot.py"
    assert [k for k, _ in growth] == ["shell-tool", "unpinned-server"]
    assert growth[0] == ("shell-tool", f"{agent}: Bash live")
    assert growth[1][1].startswith(f"{agent}: tracker: ")
    assert code == 1
    # the same change under a policy that names neither: exit by the findings alone
    ci.write_text('[delta]\nfail-on-growth = ["host-mount"]\n', encoding="utf-8")
    code, doc = report(repo, "HEAD~1", "--config", ci, "--fail-on", "critical")
    assert (code, doc["facts"]["delta"]["growth"]) == (0, [])


def test_a_removed_agent_is_good_news(repo: Path) -> None:
    other = BOT.format('tools=["Read"], allowed_tools=["Read"]')
    commit(repo, {"bot.py": BOT.format('allowed_tools=["Read"]'), "other.py": other})
    commit(repo, {"bot.py": None})
    code, doc = report(repo)
    (agent,) = doc["facts"]["delta"]["capabilities"]["agents"]
    assert (agent["agent"], agent["status"], agent["growth"]) == (
        "claude-agent-sdk ClaudeAgentOptions(...) in bot.py",
        "removed",
        [],
    )
    assert agent["changes"]["tools"]["added"] == []
    resolved = where(doc["facts"]["delta"]["resolved"])
    assert {path for _, path, _ in resolved} == {"bot.py"}
    assert {"AG301", "AG302", "AG303", "AG304"} <= {rule for rule, _, _ in resolved}
    assert (code, doc["findings"]) == (0, [])
    text = run("check", repo, "--base", "HEAD~1", "-q").stdout
    assert "resolved by this change (good news): " in text


def test_summary_draws_what_the_change_gives_each_agent(repo: Path, tmp_path: Path) -> None:
    """The pull request comment's diagram: the agent, an edge to each capability it gains,
    a dotted edge to each it loses; checked by the real Mermaid parser, with a file name
    that holds Mermaid and Markdown syntax (it stays a label)."""
    from tests import mermaid_parser

    name = 'bot"]-->x[`y`].py'
    commit(repo, {name: BOT.format('tools=["Read"]')})
    commit(repo, {name: BOT.format('tools=["Bash"]')})
    summary = tmp_path / "summary.md"
    result = run("check", repo, "--base", "HEAD~1", "-q", "--summary", summary)
    assert result.exit_code == 1
    md = summary.read_text(encoding="utf-8")
    block = re.search(r"```mermaid\n(.*?)```", md, re.S)
    assert block is not None, md
    (doc,) = mermaid_parser.parse([block.group(1)])
    assert doc["ok"], doc.get("error")
    labels = doc["nodes"]
    assert all(re.fullmatch(r"[ac][0-9]+", n) for n in labels), labels  # only our nodes
    agent = [v for k, v in labels.items() if k.startswith("a")]
    assert agent == [f"claude-agent-sdk ClaudeAgentOptions(...) in {name}<br>changed"]
    gains = sorted(labels[b] for a, b, t in doc["edges"] if t == "gains")
    loses = sorted(labels[b] for a, b, t in doc["edges"] if t == "loses")
    assert any(g.startswith("+ tools: shell") for g in gains), gains
    assert any(x.startswith("- tools: file") for x in loses), loses


def test_a_change_that_gives_no_agent_anything_draws_nothing(repo: Path, tmp_path: Path) -> None:
    commit(repo, {"bot.py": BOT.format('tools=["Read"]')})
    commit(repo, {"README.md": "words\n"})
    summary = tmp_path / "summary.md"
    result = run("check", repo, "--base", "HEAD~1", "-q", "--summary", summary)
    md = summary.read_text(encoding="utf-8")
    assert "```mermaid" not in md
    assert "Agent capabilities: no change." in md
    assert result.exit_code == 0

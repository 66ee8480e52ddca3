"""What a run imports: each command pays for the modules its work needs, not for the whole
program. Every run is the real command in a new process, as ``python -m agentguard ...``
runs it, and what it imported is ``sys.modules`` when it ends (not ``-X importtime``'s log,
which leaves out what ``importlib.import_module`` loads); the test names modules and
never times anything, so load on the machine cannot change it.

The boundaries held here (docs/benchmarks.md, "Start-up"):

- a JSON run imports no text renderer (rich);
- the third-party libraries of one reader are imported where that reader runs: jsonschema
  for a compose file, docker for the engine, cryptography for npm signatures and
  attestations, tree-sitter for TypeScript;
- `lock` of a project that holds only its inputs and its locks reads the project for MCP
  server launches with the walk and the needle tests alone: not the project scan, no
  reader of agent code, workflows, settings or containers, no agent record, no MCP server
  step;
- `inspect` of a folder without an ``mcp.lock.json`` does not import the MCP lock's reader;
- `--version` imports the command line's root alone: no command, no engine, no findings;
- `lock` starts its resolver before it imports packaging's requirement and marker parser,
  or the findings model: a plain requirement is read without them
  (:mod:`agentguard.lock.plain_requirements`);
- a re-lock of unchanged inputs writes no lock, so it imports neither the TOML writer nor
  PEP 751's validator (``packaging.pylock``): it compares the inputs' hashes.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard import __version__
from agentguard.engine.project import MCP_LOCK_NAME
from agentguard.lock.servers.lockfile import MCP_LOCK
from tests.lock.helpers import write_project

THIRD_PARTY_READERS = ("jsonschema", "docker", "cryptography", "tree_sitter")
# what the lock's scan for MCP launches imports at most, of the project scan
LOCK_SCAN_BUDGET = 17  # (the walk, the needle tests of each reader, the Python pre-filters)


# the command, run as `python -m agentguard` runs it, writing the names of the modules
# loaded when it ends (it leaves through os._exit: nothing after that runs)
_RUN = """
import sys
import agentguard.__main__ as main

leave = main._leave
names = sys.argv.pop(1)


def _leave(code):
    with open(names, "w") as out:
        out.write("\\n".join(sorted(sys.modules)))
    leave(code)


main._leave = _leave
sys.argv[0] = "agentguard"
main.run()
"""


def _imported(
    args: list[str], cwd: Path, env: dict[str, str], script: str = _RUN
) -> tuple[int, list[str]]:
    """The exit code and every module loaded when the run ended (or what ``script``
    writes)."""
    names = cwd / "modules.txt"
    proc = subprocess.run(
        [sys.executable, "-c", script, str(names), *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        stdin=subprocess.DEVNULL,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    return proc.returncode, names.read_text(encoding="utf-8").split("\n")


def _under(modules: list[str], *packages: str) -> list[str]:
    return [m for m in modules if any(m == p or m.startswith(p + ".") for p in packages)]


@pytest.fixture()
def env(tmp_path: Path, isolated_cache: Path) -> dict[str, str]:
    return dict(os.environ, AGENTGUARD_CACHE_DIR=str(isolated_cache))


def test_a_lock_and_its_relock_import_neither_the_readers_nor_the_text_renderer(
    tmp_path: Path, agent_index: dict[str, Any], env: dict[str, str]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    args = ["lock", str(project), "--index-url", agent_index["url"], "--format", "json"]
    for run in ("lock", "re-lock of unchanged inputs"):
        code, modules = _imported([*args, "--output", str(tmp_path / "report.json")], tmp_path, env)
        assert code in (0, 1), run
        assert "agentguard.lock_command" in modules and "agentguard.report.json_out" in modules
        assert _under(modules, "rich", *THIRD_PARTY_READERS, "yaml") == [], run
        # the project was read for MCP server launches, with the walk and the needles only
        scan = _under(modules, "agentguard.inspect")
        assert "agentguard.inspect.project.walk" in scan, run
        assert len(scan) <= LOCK_SCAN_BUDGET, (run, sorted(scan))
        if run != "lock":
            assert _under(modules, "tomli_w", "packaging.pylock") == [], run
        for unneeded in (
            # a folder of build files that name no launch: the walk and the needles alone
            "agentguard.inspect.project.scan",
            "agentguard.inspect.project.files",
            "agentguard.inspect.project.cli_flags",
            "agentguard.inspect.project.engine_cli",
            "agentguard.inspect.project.action_steps",
            "agentguard.inspect.project.python_agents",
            "agentguard.inspect.project.python_imports",
            "agentguard.inspect.project.registry_files",
            "agentguard.inspect.project.claude_settings",
            "agentguard.inspect.project.engine_files",
            "agentguard.inspect.project.containers",
            "agentguard.inspect.project.composite",
            "agentguard.facts.agents",
            "agentguard.facts.image",
            "agentguard.facts.capabilities",
            "agentguard.facts.mcp_pins",
            "agentguard.facts.smoke",
            "agentguard.lock.servers",  # no launch and no mcp.lock.json: no server step
            "agentguard.engine.project",
            "agentguard.harden",
        ):
            assert _under(modules, unneeded) == [], (run, unneeded)


# the modules loaded when the command starts its first child process
_AT_FIRST_CHILD = """
import subprocess
import sys
import agentguard.__main__ as main

names = sys.argv.pop(1)
first = []
popen_init = subprocess.Popen.__init__


def _init(self, args, *rest, **kwargs):
    if not first:
        first.append(args)
        with open(names, "w") as out:
            out.write("\\n".join([" ".join(map(str, args)), *sorted(sys.modules)]))
    popen_init(self, args, *rest, **kwargs)


subprocess.Popen.__init__ = _init
sys.argv[0] = "agentguard"
main.run()
"""


def test_lock_starts_its_resolver_before_the_requirement_parser_is_imported(
    tmp_path: Path, agent_index: dict[str, Any], env: dict[str, str]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    args = ["lock", str(project), "--index-url", agent_index["url"], "--format", "json"]
    for run in ("lock", "re-lock of unchanged inputs"):
        code, (command, *modules) = _imported(
            [*args, "--output", str(tmp_path / "report.json")], tmp_path, env, _AT_FIRST_CHILD
        )
        assert code in (0, 1), run
        assert " pip compile requirements.in " in command, run  # the resolver, first
        assert "agentguard.lock.inputs" in modules and "agentguard.config" in modules
        assert _under(modules, "rich", "typer", "agentguard.cli") == [], run
        for later in (
            "packaging.requirements",
            "packaging.markers",
            "packaging.tags",
            "agentguard.findings",
            "agentguard.lock.index",
        ):
            assert _under(modules, later) == [], (run, later)


def test_version_imports_the_root_of_the_command_line_alone(
    tmp_path: Path, env: dict[str, str]
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentguard", "--version"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, f"agentguard {__version__}\n")
    code, modules = _imported(["--version"], tmp_path, env)
    assert code == 0
    assert _under(modules, "agentguard") == [
        "agentguard",
        "agentguard.__main__",
        "agentguard.classcode",  # (its table is read where a record class is made: not here)
        "agentguard.cli",
        "agentguard.codetable",
        "agentguard.exit_codes",
        "agentguard.interrupts",
        "agentguard.regexcode",
        "agentguard.safeio",  # (what reads the tables: imported before either is installed)
    ]
    assert _under(modules, "rich", "packaging", "pydantic", "yaml") == []


def test_a_text_lock_imports_the_text_renderer(
    tmp_path: Path, agent_index: dict[str, Any], env: dict[str, str]
) -> None:
    """(The other side of the boundary: the import log is read right.)"""
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    code, modules = _imported(
        ["lock", str(project), "--index-url", agent_index["url"]], tmp_path, env
    )
    assert code in (0, 1)
    assert "rich.console" in modules
    assert _under(modules, *THIRD_PARTY_READERS) == []


def test_inspect_json_of_a_small_tree_imports_only_the_readers_it_uses(
    tmp_path: Path, env: dict[str, str]
) -> None:
    repo = tmp_path / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "agent.yml").write_text(
        "on: pull_request\njobs:\n  review:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: anthropics/claude-code-action@v1\n"
        '        with:\n          claude_args: "--allowedTools Bash"\n',
        encoding="utf-8",
    )
    (repo / "agent.py").write_text(
        "from claude_agent_sdk import ClaudeAgentOptions\n\n"
        'options = ClaudeAgentOptions(permission_mode="bypassPermissions")\n',
        encoding="utf-8",
    )
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    (repo / ".gitignore").write_text(".env\n")
    out = tmp_path / "report.json"
    for run in ("cold", "warm"):  # (warm: the records come from the content cache's pack)
        code, modules = _imported(
            ["inspect", str(repo), "--format", "json", "--output", str(out)], tmp_path, env
        )
        assert code == 1, run  # (the agent's bypass is a finding: the scan read it)
        assert "agentguard.report.json_out" in modules
        assert _under(modules, "rich", *THIRD_PARTY_READERS) == [], run
        for unneeded in (
            "agentguard.lock.servers",  # no mcp.lock.json
            "agentguard.lock.readers",  # no lock of the project's own
            "agentguard.inspect.project.ts_agents",
            "agentguard.smoke",
            "agentguard.harden",
        ):
            assert _under(modules, unneeded) == [], (run, unneeded)
    assert (tmp_path / "cache" / "inspect").is_dir()  # (the second run was a warm one)


def test_the_scan_knows_the_mcp_lock_by_the_lock_readers_name() -> None:
    assert MCP_LOCK_NAME == MCP_LOCK

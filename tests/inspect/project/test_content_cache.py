"""The content cache of ``inspect DIR``: a re-run parses only what changed, its report is
the report of a run without it, and a cache nobody but this user could have signed is
the only one read (a pull request can plant none: not in the repository, not through a
restored CI cache, not by editing a pack).

Modelled on the field: openai-agents-python and pydantic-ai, whose test trees import the
SDK in hundreds of files (each parsed on every run before the cache).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agentguard.cli import app
from agentguard.inspect.project import cache as content_cache
from agentguard.inspect.project import engine_files, python_agents, scan_read
from agentguard.inspect.project.cache_codec import BadEntry, decode, encode
from agentguard.inspect.project.files import process_file

ROOT = Path(__file__).resolve().parents[3]
FIXTURES = ROOT / "tests" / "fixtures"

AGENT = """\
from claude_agent_sdk import ClaudeAgentOptions, query


async def run(prompt: str) -> None:
    options = ClaudeAgentOptions(
        permission_mode="bypassPermissions",
        allowed_tools=["Bash", "WebFetch"],
        cwd="/workspace",
    )
    async for message in query(prompt=prompt, options=options):
        print(message)
"""
SAFE = AGENT.replace('"bypassPermissions"', '"default"').replace('"Bash", "WebFetch"', '"Read"')


@pytest.fixture()
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Per-user folders of this test alone: the key file and the default cache."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("AGENTGUARD_CACHE_DIR", raising=False)
    monkeypatch.delenv(content_cache.KEY_ENV, raising=False)
    return tmp_path


def _project(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    (repo / "agent.py").write_text(AGENT)
    for i in range(3):  # an SDK's tests: parsed, nothing to find
        (repo / "tests" / f"test_{i}.py").write_text(SAFE)
    shutil.copytree(FIXTURES / "AG310" / "fail" / "py-mcp-servers", repo / "mcp")
    shutil.copytree(FIXTURES / "AG330" / "fail" / "claude-action-tag" / ".github", repo / ".github")
    return repo


def _inspect(repo: Path, *extra: str) -> dict[str, Any]:
    result = CliRunner().invoke(app, ["inspect", str(repo), "--format", "json", *extra])
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    return {k: report[k] for k in ("findings", "sources", "facts", "summary", "complete")}


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Python files parsed in this process (forked readers are off: AGENTGUARD_JOBS=1)."""
    monkeypatch.setenv("AGENTGUARD_JOBS", "1")
    seen: list[str] = []
    real = python_agents.analyse_python

    def counting(path: str, data: bytes, **kw: Any) -> python_agents.PythonFacts:
        got = real(path, data, **kw)
        if got.parsed:
            seen.append(path)
        return got

    monkeypatch.setattr(python_agents, "analyse_python", counting)
    return seen


def _pack(home: Path) -> Path:
    packs = list((home / "cache" / "agentguard" / "inspect").glob("*.pack"))
    assert len(packs) == 1, packs
    return packs[0]


def test_a_rerun_parses_only_the_changed_file_and_reports_the_same(
    home: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _project(home)
    plain = _inspect(repo, "--no-cache")
    assert not list((home / "cache").rglob("*.pack"))  # --no-cache writes nothing
    assert any(f["rule_id"] == "AG301" for f in plain["findings"])
    parses.clear()
    assert _inspect(repo) == plain  # cold: reads all, writes the pack
    cold = sorted(parses)
    assert "agent.py" in cold and len(cold) >= 5
    assert oct(_pack(home).stat().st_mode & 0o777) == "0o600"
    parses.clear()
    workflows: list[str] = []
    real = engine_files.yaml_config
    monkeypatch.setattr(
        engine_files, "yaml_config", lambda p, *a, **k: workflows.append(p) or real(p, *a, **k)
    )
    assert _inspect(repo) == plain  # warm: nothing parsed, the workflow not read again
    assert parses == [] and workflows == []
    assert any(f["rule_id"] == "AG330" for f in plain["findings"])
    (repo / "agent.py").write_text(SAFE)  # one file changes
    parses.clear()
    changed = _inspect(repo)
    assert parses == ["agent.py"]
    assert changed == _inspect(repo, "--no-cache")
    assert _on("agent.py", changed) != _on("agent.py", plain)  # the change is seen


def _on(path: str, report: dict[str, Any]) -> list[object]:
    return [f for f in report["findings"] if any(x.get("path") == path for x in f["locations"])]


def test_the_cache_never_lives_in_the_folder_it_reads(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _project(home)
    result = CliRunner().invoke(
        app, ["inspect", str(repo), "--format", "json", "--cache-dir", str(repo / ".cache")]
    )
    assert result.exit_code == 2
    assert "inside the folder being scanned" in result.output
    assert not (repo / ".cache").exists()
    # a default folder inside the scanned one (AGENTGUARD_CACHE_DIR there) is not used
    monkeypatch.setenv("AGENTGUARD_CACHE_DIR", str(repo / "ag-cache"))
    plain = _inspect(repo, "--no-cache")
    assert _inspect(repo) == plain
    assert not (repo / "ag-cache").exists()


def _plant(pack: Path, secret: bytes | None) -> None:
    """Rewrite every entry as a file that holds nothing (what a planted entry would say
    to hide a finding), signed with ``secret`` (None: the old signature is kept)."""
    blob = pack.read_bytes()
    head, mac, body = blob.split(b"\n", 2)
    data = json.loads(body)
    empty = encode(process_file("x.py", "python", b"x = 1\n"))
    data["entries"] = {k: empty for k in data["entries"]}
    body = json.dumps(data).encode()
    if secret is not None:
        mac = hmac.new(secret, body, hashlib.sha256).hexdigest().encode()
    pack.write_bytes(head + b"\n" + mac + b"\n" + body)


@pytest.mark.parametrize("who", ["edited", "another key", "garbage", "truncated"])
def test_a_pack_nobody_here_signed_is_never_read(home: Path, parses: list[str], who: str) -> None:
    repo = _project(home)
    plain = _inspect(repo, "--no-cache")
    _inspect(repo)
    pack = _pack(home)
    if who == "edited":
        _plant(pack, None)  # the entries changed, the signature not
    elif who == "another key":
        _plant(pack, b"k" * 64)  # signed, by someone else (a cache restored from a PR's run)
    elif who == "garbage":
        pack.write_bytes(content_cache.FORMAT + b"0" * 64 + b"\n{not json")
    else:
        pack.write_bytes(pack.read_bytes()[:100])
    parses.clear()
    assert _inspect(repo) == plain  # every file read again, the same report
    assert "agent.py" in parses
    parses.clear()
    assert _inspect(repo) == plain and parses == []  # and the pack written anew is used


def test_the_same_entries_signed_with_the_users_key_are_read(home: Path, parses: list[str]) -> None:
    # (the control for the test above: what makes a planted pack fail is the key alone)
    repo = _project(home)
    _inspect(repo)
    secret = (home / "config" / "agentguard" / content_cache.KEY_FILE).read_bytes().strip()
    _plant(_pack(home), secret)
    parses.clear()
    report = _inspect(repo)
    assert parses == [] and _on("agent.py", report) == []


def test_a_key_others_can_read_is_no_key(home: Path, parses: list[str]) -> None:
    repo = _project(home)
    _inspect(repo)
    key = home / "config" / "agentguard" / content_cache.KEY_FILE
    key.chmod(0o644)
    parses.clear()
    _inspect(repo)
    assert "agent.py" in parses  # not used: the cache is off
    key.unlink()
    key.symlink_to(home / "elsewhere")
    parses.clear()
    _inspect(repo)
    assert "agent.py" in parses and not (home / "elsewhere").exists()


def test_the_key_from_the_environment_signs_packs_a_ci_cache_can_restore(
    home: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # CI: the pack folder is restored by actions/cache, the key comes from a secret
    repo = _project(home)
    monkeypatch.setenv(content_cache.KEY_ENV, "a secret of the repository")
    _inspect(repo, "--cache-dir", str(home / "ci-cache"))
    assert not (home / "config" / "agentguard").exists()  # no key file made
    parses.clear()
    _inspect(repo, "--cache-dir", str(home / "ci-cache"))
    assert parses == []
    monkeypatch.setenv(content_cache.KEY_ENV, "a fork's guess")  # (a run without the secret)
    parses.clear()
    _inspect(repo, "--cache-dir", str(home / "ci-cache"))
    assert "agent.py" in parses


def test_the_codec_round_trips_what_the_readers_take_and_builds_nothing_else() -> None:
    count = 0
    for path in sorted(FIXTURES.rglob("*.py")):
        data = path.read_bytes()
        out = process_file(str(path.relative_to(FIXTURES)), "python", data)
        assert decode(json.loads(json.dumps(encode(out)))) == out, path
        count += bool(out.configs or out.grants or out.mcp_servers or out.fallbacks)
    assert count >= 20
    for hostile in (
        {"c": "os:system", "a": {}},
        {"c": "builtins:eval", "a": {}},
        {"c": "subprocess:Popen", "a": {"args": "id"}},
        {"c": "agentguard.findings:Source", "a": {"kind": "file"}},  # fields missing
        {"c": "agentguard.findings:Finding.__init__", "a": {}},
        {"e": "agentguard.findings:SourceStatus", "v": "hidden"},
        {"t": [1], "x": 2},
        {"b": "!!"},
    ):
        with pytest.raises(BadEntry):
            decode(hostile)


def test_a_cache_folder_keeps_the_packs_of_the_folders_scanned_last(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(content_cache, "MAX_PACKS", 2)
    where = home / "packs"
    for name in ("a", "b", "c"):
        repo = home / name
        repo.mkdir()
        (repo / "agent.py").write_text(AGENT)
        _inspect(repo, "--cache-dir", str(where))
    assert len(list(where.glob("*.pack"))) == 2


def test_a_change_of_content_is_seen_whatever_the_file_times_say(
    home: Path, parses: list[str]
) -> None:
    # the key is the file's bytes: a file rewritten with the same size and its times put
    # back (`touch -r`, a tar extraction, a hostile pull request's build step) is read again
    repo = _project(home)
    agent = repo / "agent.py"
    before = agent.stat()
    plain = _inspect(repo)
    changed = AGENT.replace('"bypassPermissions"', '"acceptEdits"      ')
    assert len(changed) == len(AGENT)
    agent.write_text(changed)
    os.utime(agent, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert agent.stat().st_size == before.st_size
    assert agent.stat().st_mtime_ns == before.st_mtime_ns
    parses.clear()
    report = _inspect(repo)
    assert parses == ["agent.py"]
    assert report == _inspect(repo, "--no-cache")
    assert _on("agent.py", report) != _on("agent.py", plain)


CASSETTE = """\
interactions:
- request:
    body: '{"model": "gemini-2.5-flash", "contents": [{"parts": [{"text": "claude"}]}]}'
    uri: https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent
  response:
    body:
      string: '{"candidates": [{"content": {"parts": [{"text": "mcpServers \\\\u0063"}]}}]}'
"""


def test_a_rerun_searches_no_script_and_runs_no_pre_filter_again(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # pydantic-ai's 1,400 recorded exchanges: searched for command lines and server tables
    # on the first run, taken from the pack (as files that hold nothing) on the next
    repo = _project(home)
    for i in range(3):
        (repo / "tests" / f"cassette_{i}.yaml").write_text(CASSETTE)
    (repo / "tests" / "test_lib.py").write_text("import openai\n\nclient = openai.OpenAI()\n")
    # gemini-cli's server tables in TypeScript: parsed on every run before
    (repo / "servers.ts").write_text(
        'export const config = { mcpServers: { fs: { command: "npx", '
        'args: ["-y", "@modelcontextprotocol/server-filesystem", "/"] } } };\n'
    )
    monkeypatch.setenv("AGENTGUARD_JOBS", "1")
    read: list[tuple[str, str]] = []
    real = scan_read.process_file

    def counting(path: str, kind: str, *a: Any, **k: Any) -> Any:
        read.append((path, kind))
        return real(path, kind, *a, **k)

    monkeypatch.setattr(scan_read, "process_file", counting)
    plain = _inspect(repo)
    assert ("tests/cassette_0.yaml", "script") in read
    assert ("tests/test_lib.py", "python") in read and ("servers.ts", "ts") in read
    assert any(m["name"] == "fs" for m in plain["facts"]["project"]["mcp_servers"])
    read.clear()
    assert _inspect(repo) == plain
    assert [r for r in read if r[1] in ("python", "script", "ts")] == []


def test_a_rerun_in_a_new_process_hits_every_entry_and_leaves_the_pack_alone(
    home: Path,
) -> None:
    # a workflow that calls a local action holds a record of a module the scan imports
    # only where it reads such a workflow: a new process decodes it all the same
    repo = home / "repo"
    shutil.copytree(FIXTURES / "AG301" / "fail" / "composite-action-callers", repo)
    (repo / "agent.py").write_text(AGENT)
    env = {**os.environ, "AGENTGUARD_CACHE_KEY": "test", "AGENTGUARD_JOBS": "1"}

    def run() -> dict[str, Any]:
        out = subprocess.run(
            [sys.executable, "-m", "agentguard", "inspect", str(repo), "--format", "json",
             "--cache-dir", str(home / "packs")],
            capture_output=True, env=env, check=False,
        )  # fmt: skip
        assert out.returncode in (0, 1), out.stderr
        report = json.loads(out.stdout)
        return {k: report[k] for k in ("findings", "sources", "facts", "map")}

    first = run()
    (pack,) = (home / "packs").glob("*.pack")
    written = pack.stat().st_mtime_ns, pack.read_bytes()
    assert b"LocalActionUse" in written[1]
    assert run() == first
    assert (pack.stat().st_mtime_ns, pack.read_bytes()) == written  # every entry a hit

"""The project walk: what it enters, what it reads, and how every miss is recorded."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentguard.engine import UsageError
from agentguard.engine.project import inspect_project
from agentguard.findings import Source
from agentguard.inspect.project.scan import _process_range as _REAL_RANGE
from agentguard.inspect.project.walk import MAX_FILE_BYTES, classify, walk


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


AGENT = 'from claude_agent_sdk import ClaudeAgentOptions\nO = ClaudeAgentOptions(tools=["Bash"])\n'


def test_dependency_and_cache_folders_are_not_entered(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "app/agent.py": AGENT,
            "node_modules/pkg/index.js": "x",
            ".venv/lib/agent.py": AGENT,
            "env/pyvenv.cfg": "home = /usr\n",
            "env/lib/agent.py": AGENT,
            ".git/hooks/pre-commit.py": AGENT,
            "pkg.egg-info/x.py": AGENT,
            ".claude/settings.json": "{}",
            ".claude/commands/review.md": "review",
            "CLAUDE.md": "notes",
            "README.md": "readme",
        },
    )
    got = walk(str(tmp_path))
    assert [(c.rel, c.kind) for c in got.candidates] == [
        (".claude/settings.json", "settings"),
        ("app/agent.py", "python"),
    ]
    assert got.markers == [".claude/commands/", ".claude/settings.json", "CLAUDE.md"]
    assert got.dirs_skipped == 5


def test_classify_by_name() -> None:
    assert [
        classify(p)
        for p in (
            "a/b.py",
            "web/agent.ts",
            "types.d.ts",
            "dist/app.min.js",
            ".claude/settings.local.json",
            "etc/claude-code/managed-settings.json",
            ".mcp.json",
            ".vscode/mcp.json",
            "Dockerfile",
            "compose.yaml",
            "package.json",
            "scripts/run.sh",
            "notes.txt",
        )
    ] == [
        "python", "ts", None, None, "settings", "settings", "mcp", "mcp", "container",
        "container", "script", "script", None,
    ]  # fmt: skip


def test_too_large_unreadable_and_special_files_are_sources(tmp_path: Path) -> None:
    _tree(tmp_path, {"ok.py": AGENT})
    (tmp_path / "big.py").write_bytes(b"#" * (MAX_FILE_BYTES + 1))
    (tmp_path / "gone.py").symlink_to(tmp_path / "missing.py")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "linked").symlink_to(tmp_path, target_is_directory=True)
    result = inspect_project(tmp_path)
    by_name = {s.name: s for s in result.sources if s.kind in ("file", "folder")}
    assert by_name["big.py"] == Source.skipped(
        "file",
        "big.py",
        f"{MAX_FILE_BYTES + 1} bytes, over the {MAX_FILE_BYTES} byte cap: not read",
    )
    assert by_name["gone.py"].status.value == "failed"
    assert by_name["gone.py"].error_code == "file-unreadable"
    assert by_name["pipe.py"] == Source.skipped("file", "pipe.py", "not a regular file")
    assert by_name["linked"] == Source.skipped(
        "folder", "linked", "symbolic link to a folder: not followed"
    )
    assert by_name["ok.py"] == Source.ok("file", "ok.py", "Python agent code parsed")
    assert result.facts["files_parsed"] == 1


def test_a_single_file_target(tmp_path: Path) -> None:
    (tmp_path / "bot.py").write_text(AGENT)
    (tmp_path / "notes.txt").write_text("hello")
    result = inspect_project(tmp_path / "bot.py")
    assert [(f.rule_id, f.locations[0].path, f.locations[0].line) for f in result.findings] == [
        ("AG301", "bot.py", 2),  # tools=["Bash"]: the shell, nothing else
        ("AG210", "bot.py", 2),  # cwd unset
        ("AG211", "bot.py", 2),  # setting_sources unset
    ]
    with pytest.raises(UsageError, match=r"notes\.txt: not a kind of file agentguard reads"):
        inspect_project(tmp_path / "notes.txt")  # never a skipped source in a run that exits 0


def test_parallel_and_in_process_reads_agree(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    for i in range(60):
        _tree(tmp_path, {f"p{i % 7}/m{i}.py": AGENT if i % 9 == 0 else f"x = {i}\n"})
    # container files are read and scanned by the parent while the workers run
    _tree(
        tmp_path,
        {
            "p1/Dockerfile": "FROM python:3.12\nCOPY . /app\nWORKDIR /app\n",
            "p1/compose.yaml": "services:\n  bot:\n    build: .\n    volumes: ['.:/app']\n",
            "p1/docs/guide.md": "# what the COPY takes along (AG212)\n",
            "p2/requirements.txt": "claude-agent-sdk\n",
            "p3/.mcp.json": '{"mcpServers": {"x": {"command": "npx", "args": ["-y", "pkg"]}}}',
        },
    )
    monkeypatch.setenv("AGENTGUARD_JOBS", "1")
    serial = inspect_project(tmp_path)
    from agentguard.inspect.project import scan

    monkeypatch.setattr(scan, "_jobs", lambda _count, _python=0: 2)  # even with other threads about
    parallel = inspect_project(tmp_path)
    assert {"AG202", "AG212", "AG310", "AG301"} <= {f.rule_id for f in serial.findings}
    assert [f.to_json() for f in serial.findings] == [f.to_json() for f in parallel.findings]
    assert serial.sources[1:] == parallel.sources[1:]
    assert serial.facts == parallel.facts


def _probe_signals(span: tuple[int, int]) -> tuple[int, list[object], None]:
    """Run as ``_process_range``: in a forked child, counts its range (plus a million, to
    tell) only when both signals were reset; in the parent, slowly, so children take some."""
    import signal
    import time

    if os.getpid() == _PARENT:
        time.sleep(0.02)
        return span[1] - span[0], [], None
    ok = (
        signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        and signal.getsignal(signal.SIGINT) == signal.SIG_IGN
    )
    return (1_000_000 + span[1] - span[0]) if ok else -100000, [], None


def test_pool_workers_leave_interrupts_to_the_parent(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A child inherits the CLI's SIGTERM handler (which raises KeyboardInterrupt); a child
    # stopped by the parent would print a traceback. Children reset both signals.
    from agentguard.inspect.project import scan

    monkeypatch.setattr(scan, "_process_range", _probe_signals)
    monkeypatch.setattr(scan, "_jobs", lambda _count, _python=0: 3)  # even with other threads about
    cands = [scan.Candidate(f"m{i}.py", str(tmp_path / f"m{i}.py"), "python") for i in range(600)]
    read, outcomes, scanned = scan._process_all(cands)
    assert (read % 1_000_000, outcomes, scanned) == (600, [], None)
    assert read // 1_000_000 >= 2  # ranges read by children (24 ranges, 20 ms each here)


_PARENT = os.getpid()


def _die_in_a_worker(span: tuple[int, int]) -> tuple[int, list[object]]:
    """Run as ``_process_range``: a worker dies on its first range (as the OOM killer
    would end it); in the parent it reads the range as usual."""
    if os.getpid() != _PARENT:
        os._exit(9)
    return _REAL_RANGE(span)  # type: ignore[return-value]


def test_a_worker_that_dies_costs_time_not_files(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from agentguard.inspect.project import scan

    for i in range(60):
        _tree(tmp_path, {f"p{i % 7}/m{i}.py": AGENT if i % 9 == 0 else f"x = {i}\n"})
    _tree(tmp_path, {"p1/compose.yaml": "services:\n  bot:\n    volumes: ['.:/app']\n"})
    monkeypatch.setenv("AGENTGUARD_JOBS", "1")
    serial = inspect_project(tmp_path)
    monkeypatch.setattr(scan, "_jobs", lambda _count, _python=0: 2)
    monkeypatch.setattr(scan, "CHUNK", 10)
    monkeypatch.setattr(scan, "_process_range", _die_in_a_worker)
    survived = inspect_project(tmp_path)
    assert [f.to_json() for f in survived.findings] == [f.to_json() for f in serial.findings]
    assert survived.sources == serial.sources
    assert survived.facts == serial.facts


def test_a_parallel_run_writes_nothing_to_stderr(tmp_path: Path) -> None:
    import subprocess
    import sys

    for i in range(40):
        _tree(tmp_path, {f"p{i % 5}/m{i}.py": AGENT if i % 9 == 0 else f"x = {i}\n"})
    env = {**os.environ, "AGENTGUARD_JOBS": "2"}
    for _ in range(3):
        run = subprocess.run(
            [sys.executable, "-m", "agentguard", "inspect", str(tmp_path), "-q", "-f", "json"],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
        )
        assert run.returncode == 1, run.stderr
        assert run.stderr == ""


def test_reads_whole_files_of_every_size_and_refuses_oversize(tmp_path: Path) -> None:
    from agentguard.inspect.project.walk import FIRST_READ, NotRegular, TooLarge, read_candidate

    for size in (0, 1, FIRST_READ - 1, FIRST_READ, FIRST_READ + 1, 3 * FIRST_READ + 7):
        path = tmp_path / f"f{size}"
        data = bytes(i % 251 for i in range(size))
        path.write_bytes(data)
        assert read_candidate(str(path), True) == data
        assert read_candidate(str(path), False) == data
    big = tmp_path / "big"
    big.write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    for regular in (True, False):
        with pytest.raises(TooLarge) as caught:
            read_candidate(str(big), regular)
        assert caught.value.size == MAX_FILE_BYTES + 1
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for regular in (False, True):  # True: listed as a file, a FIFO by the time it is opened
        with pytest.raises(NotRegular):
            read_candidate(str(fifo), regular)


def test_links_to_files_outside_the_project_are_not_read(tmp_path: Path) -> None:
    outside = tmp_path / "home"
    _tree(outside, {"mcp.json": '{"mcpServers": {"x": {"command": "npx", "args": ["-y", "pkg"]}}}'})
    project = tmp_path / "project"
    _tree(project, {"app/agent.py": AGENT, "shared/.mcp.json": '{"mcpServers": {}}'})
    os.symlink(outside / "mcp.json", project / ".mcp.json")
    os.symlink(project / "shared" / ".mcp.json", project / "app" / ".mcp.json")  # inside: read

    result = inspect_project(project)

    # an MCP configuration linked from outside is not read, and not a clean result either
    assert (
        Source.failed(
            "file",
            ".mcp.json",
            "symbolic link pointing outside the project: not followed, and it may configure "
            "the agent",
            error_code="file-link-outside",
            retryable=False,
            remedy="Check the folder the link points into (or the whole repository), or "
            "replace the link with the file.",
        )
        in result.sources
    )
    assert "AG310" not in {f.rule_id for f in result.findings}
    assert "app/.mcp.json" in [c.rel for c in walk(str(project)).candidates]


def test_pool_ranges_take_every_file_once_each_a_sample_of_the_whole_walk() -> None:
    # a folder of large test files (the walk keeps a folder together) is shared out
    from agentguard.inspect.project import scan

    order, ranges = scan._interleave(list(range(1000)), 2)
    assert sorted(order) == list(range(1000))
    assert len(ranges) == 64  # thirty-two per worker
    assert ranges[0][0] == 0 and ranges[-1][1] == 1000
    assert all(ranges[i][1] == ranges[i + 1][0] for i in range(63))
    for a, b in ranges:  # blocks of 3 neighbours, from the first quarter to the last
        taken = order[a:b]
        assert taken[:3] == list(range(taken[0], taken[0] + 3))
        assert min(taken) < 250 and max(taken) >= 750
    assert scan._interleave([], 2) == ([], [])
    assert scan._interleave([7, 8], 2) == ([7, 8], [(0, 1), (1, 2)])
    assert len(scan._interleave(list(range(20000)), 2)[1]) == 80  # about CHUNK files each


def test_the_plain_py_file_shortcut_walks_as_the_general_path_does(tmp_path: Path) -> None:
    """Without ``exclude`` a plain ``.py`` file skips the link and exclusion tests; every
    other ``.py`` entry (a folder, a FIFO, links in, out, to a folder, dangling) must come
    out as it does when an exclude pattern sends every entry down the general path."""
    outside = tmp_path / "outside"
    _tree(outside, {"secret.py": "x = 1\n", "pkg/m.py": "y = 2\n"})
    root = tmp_path / "project"
    _tree(
        root,
        {"a/ok.py": AGENT, "b.py/inner.py": "z = 3\n", "venv2/pyvenv.cfg": "", "venv2/v.py": ""},
    )
    os.mkfifo(root / "fifo.py")
    os.symlink(root / "a" / "ok.py", root / "in.py")
    os.symlink(outside / "secret.py", root / "out.py")
    os.symlink(outside / "pkg", root / "dir.py")
    os.symlink(tmp_path / "missing.py", root / "dangling.py")

    short = walk(str(root))
    general = walk(str(root), exclude=("no-such-file",))
    assert [(c.rel, c.kind, c.regular, c.outside) for c in short.candidates] == [
        (c.rel, c.kind, c.regular, c.outside) for c in general.candidates
    ]
    assert [(c.rel, c.regular) for c in short.candidates if c.outside is None] == [
        ("a/ok.py", True),
        ("b.py/inner.py", True),
        ("fifo.py", False),
        ("in.py", False),
    ]
    assert {c.rel for c in short.candidates if c.outside is not None} == {"dangling.py", "out.py"}
    assert short.sources == general.sources
    assert (
        Source.skipped("folder", "dir.py", "symbolic link to a folder: not followed")
        in short.sources
    )
    assert (
        (short.files_seen, short.dirs_seen, short.dirs_skipped)
        == (
            general.files_seen,
            general.dirs_seen,
            general.dirs_skipped,
        )
        == (4, 4, 1)
    )


def test_the_walk_classifies_each_file_as_classify_does(tmp_path: Path) -> None:
    # the walk hands classify the names it already has (crewAI's 27,000 files: splitting
    # each path again was most of the walk); every odd name must come out the same
    names = [
        "a.py", "b.ts", "x.d.ts", "Dockerfile", "dockerfile.dev", "api.Dockerfile",
        "docker-compose.override.yml", "compose.yaml", "requirements-dev.txt", "uv.lock",
        "pyproject.toml", ".gitignore", ".dockerignore", "app.dockerignore", "config.toml",
        "settings.json", "mcp.json", ".mcp.json", "package.json", "Makefile", "run.sh",
        "notes.md", "logo.png", "CLAUDE.md", "devcontainer.json", "setup.sh", "x.in",
        "a\\Dockerfile", "b\\requirements.txt", "weird\\.mcp.json",
    ]  # fmt: skip
    folders = ["", ".claude", ".vscode", ".codex", ".gemini", ".devcontainer", "requirements",
               ".cargo", "managed-settings.d", "deep/.devcontainer", "x\\y"]  # fmt: skip
    for folder in folders:
        for name in names:
            path = tmp_path / folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("x = 1\n")
    got = {c.rel: c.kind for c in walk(str(tmp_path)).candidates}
    for folder in folders:
        for name in names:
            rel = f"{folder}/{name}" if folder else name
            assert got.get(rel) == classify(rel), rel


@pytest.mark.parametrize("workflow", [True, False])
def test_the_yaml_readers_are_imported_before_the_fork_where_a_yaml_script_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, workflow: bool
) -> None:
    # (each forked reader that reads a YAML script imports PyYAML and the workflow,
    # composite and Kubernetes readers: imported once, before the fork, where one is)
    from agentguard.inspect.project import scan

    for i in range(20):
        _tree(tmp_path, {f"p{i % 3}/m{i}.py": AGENT if i % 9 == 0 else f"x = {i}\n"})
    if workflow:
        _tree(tmp_path, {".github/workflows/ci.yml": "on: push\njobs: {}\n"})
    asked: list[bool] = []
    real = scan._preload

    def preload(*, yaml: bool = False) -> None:
        asked.append(yaml)
        real(yaml=yaml)

    monkeypatch.setattr(scan, "_preload", preload)
    monkeypatch.setattr(scan, "_jobs", lambda _count, _python=0: 2)
    inspect_project(tmp_path)
    assert asked == [workflow]

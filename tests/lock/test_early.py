"""The resolver started before the command line is imported (agentguard.lock.early).

Its promise: it never changes what a run does. The options it reads from the arguments are
the ones the command line parses (a property test against the real typer parse), it is
used only for exactly those options, and whatever it started and the command did not take
is stopped: the resolver, its scratch folder and the project lock.
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from agentguard import cli, lock_command
from agentguard.engine.lock import uv_project as uv_project_module
from agentguard.lock import backend, early
from agentguard.lock.start import LockOptions
from agentguard.report.json_out import report_to_json
from tests.lock.helpers import run_json, strip_volatile, write_project
from tests.lock.test_uv_project import uv_project  # noqa: F401  (a fixture)

pytestmark = pytest.mark.usefixtures("isolated_cache")


class Parsed(BaseException):  # (not an Exception: the command turns those into a report)
    def __init__(self, opts: LockOptions) -> None:
        self.opts = opts


def typer_parse(argv: list[str], monkeypatch: pytest.MonkeyPatch) -> LockOptions | None:
    """The options `agentguard lock ARGV` hands to run_lock, as the real command line parses
    them (None: it refused the arguments)."""

    def capture(opts: LockOptions, **_kw: Any) -> Any:
        raise Parsed(opts)

    monkeypatch.setattr(lock_command, "run_lock", capture)
    try:
        CliRunner().invoke(cli.app, ["lock", *argv])
    except Parsed as parsed:
        return parsed.opts
    return None


def test_plain_arguments_are_read_as_the_command_line_reads_them(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ["proj", "-U", "-P", "mcp", "--upgrade-package=httpx", "--allow-major", "mcp",
            "--extra", "cli", "--group", "dev", "--index-url", "http://127.0.0.1:9/simple",
            "--find-links", "wheels", "--min-release-age", "7d", "--only-binary", "--config",
            "ag.toml", "--timeout", "30", "-q", "-v", "-f", "json", "-o", "out.json",
            "--fail-on", "low", "--write-launch", "--npm-registry", "http://127.0.0.1:9/"]  # fmt: skip
    expected = LockOptions(
        project=Path("proj"),
        upgrade=True,
        upgrade_packages=("mcp", "httpx"),
        allow_major=("mcp",),
        extras=("cli",),
        groups=("dev",),
        index_url="http://127.0.0.1:9/simple",
        find_links=("wheels",),
        min_release_age="7d",
        only_binary=True,
        config_file=Path("ag.toml"),
        timeout=30.0,
        write_launch=True,
        npm_registry="http://127.0.0.1:9/",
    )
    assert early.parse(argv) == expected
    assert typer_parse(argv, monkeypatch) == expected
    assert early.parse([]) == typer_parse([], monkeypatch) == LockOptions(project=Path("."))


@pytest.mark.parametrize(
    "argv",
    [
        ["--check"],  # no resolver
        ["--help"],
        ["-h"],
        ["--export", "pylock"],
        ["--backend", "pip-tools"],
        ["-qU"],  # a cluster of short flags
        ["a", "b"],  # two projects: the command line refuses
        ["--", "proj"],
        ["--index-url"],  # no value
        ["--index-url", "--upgrade"],  # an option where a value belongs
        ["--upgrade=yes"],
        ["--timeout", "0.01"],  # below the command's minimum
        ["--timeout", "soon"],
        ["--no-such-option"],
    ],
)
def test_arguments_it_is_not_sure_of_start_nothing(argv: list[str]) -> None:
    assert early.parse(argv) is None


FLAGS = ["-U", "--upgrade", "-q", "-v", "--quiet", "--all-extras", "--no-index", "--only-binary"]
VALUED = ["-P", "--upgrade-package", "--allow-major", "--extra", "--group", "--find-links",
          "--index-url", "--backend", "--min-release-age", "--config", "--timeout", "-f", "-o",
          "--format", "--fail-on"]  # fmt: skip
VALUES = ["mcp", "json", "text", "sarif", "uv", "pip-tools", "0.5", "30", "7d", "high", "x.toml"]
JUNK = ["--check", "--export", "-qU", "--", "--bogus", "-h", "proj", "--upgrade=1", "-fjson"]


@st.composite
def command_lines(draw: st.DrawFn) -> list[str]:
    argv: list[str] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["flag", "valued", "valued", "joined", "junk"]))
        if kind == "flag":
            argv.append(draw(st.sampled_from(FLAGS)))
        elif kind == "junk":
            argv.append(draw(st.sampled_from(JUNK)))
        else:
            opt = draw(st.sampled_from(VALUED))
            value = draw(st.sampled_from(VALUES))
            if kind == "joined" and opt.startswith("--"):
                argv.append(f"{opt}={value}")
            else:
                argv += [opt, value]
    if draw(st.booleans()):
        argv.insert(draw(st.integers(0, len(argv))), draw(st.sampled_from([".", "proj", "a/b/"])))
    return argv


@settings(max_examples=300, deadline=None)
@given(argv=command_lines())
def test_whenever_both_read_the_arguments_they_agree(argv: list[str]) -> None:
    """Where the command line refuses what was read here (`--format mcp`), the run exits 2
    and what was started is stopped (see the test through the command below)."""
    ours = early.parse(argv)
    with pytest.MonkeyPatch.context() as mp:
        theirs = typer_parse(argv, mp)
    event("read early" if ours is not None else "left to the command line")
    if ours is not None and theirs is not None:
        assert ours == theirs, argv


def _no_second_resolver(_request: object) -> object:
    raise AssertionError("the command ran the resolver again")


def test_the_early_resolver_is_the_one_the_command_uses(
    tmp_path: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    argv = [str(project), "--index-url", agent_index["url"]]
    early.start(argv)
    started = early._started
    assert started is not None
    monkeypatch.setitem(lock_command.BACKENDS, "uv", _no_second_resolver)
    report, _ = lock_command.run_lock(early.parse(argv) or LockOptions(project))
    assert early._started is None  # taken
    assert report.complete and (project / "pylock.toml").is_file()
    assert not Path(started.run._tmp.name).exists()  # the scratch folder is gone


def test_other_options_stop_the_early_resolver_and_the_command_runs_its_own(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    early.start([str(project), "--index-url", agent_index["url"]])
    started = early._started
    assert started is not None
    opts = LockOptions(project, index_url=agent_index["url"], allow_major=("mcp",))
    report, _ = lock_command.run_lock(opts)
    assert started.run._proc is not None and started.run._proc.poll() is not None
    assert not Path(started.run._tmp.name).exists()
    assert report.complete and (project / "pylock.toml").is_file()


def test_abandoned_it_stops_the_resolver_and_frees_the_project(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    early.start([str(project), "--index-url", agent_index["url"]])
    started = early._started
    assert started is not None and started.run._proc is not None
    early.abandon()
    assert started.run._proc.poll() is not None
    assert not Path(started.run._tmp.name).exists()
    fd = os.open(project, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # free again
    finally:
        os.close(fd)


def test_a_busy_project_is_left_to_the_command(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    fd = os.open(project, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        early.start([str(project), "--index-url", agent_index["url"]])  # does not wait
        assert early._started is None
    finally:
        os.close(fd)


def test_a_poetry_project_is_left_to_the_command(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["mcp"])
    (project / "poetry.lock").write_text("[metadata]\n", encoding="utf-8")
    early.start([str(project)])
    assert early._started is None  # read and gated, not re-locked: nothing to start


def test_on_a_uv_project_uv_lock_is_started_early_and_the_command_uses_it(
    uv_project: dict[str, Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    project: Path = uv_project["project"]
    before = (project / "uv.lock").read_bytes()
    early.start([str(project), "--upgrade"])
    started = early._started
    assert started is not None and started.uv_lock is not None and started.run is None

    def second(*_a: object, **_k: object) -> None:
        raise AssertionError("the command ran `uv lock` again")

    monkeypatch.setattr(uv_project_module, "UvLockRun", second)
    report, _ = lock_command.run_lock(LockOptions(project, upgrade=True))
    assert early._started is None
    assert [
        (f.rule_id, f.evidence["package"]) for f in report.findings if f.rule_id == "AG102"
    ] == [("AG102", "mcp")]
    assert (project / "uv.lock").read_bytes() == before
    assert started.uv_lock._tmp is None  # the copy is gone


def test_build_false_in_the_configuration_is_uv_lock_no_build_both_ways(
    uv_project: dict[str, Any],  # noqa: F811
) -> None:
    """`build = false` in [tool.agentguard] means no package code runs while locking: on a
    uv project that is `uv lock --no-build`, whether started early or by the command."""
    project: Path = uv_project["project"]
    with (project / "pyproject.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n[tool.agentguard]\nbuild = false\n")
    early.start([str(project)])
    assert early._started is not None and early._started.uv_lock is not None
    assert "--no-build" in early._started.uv_lock.shown
    took, _ = lock_command.run_lock(LockOptions(project))
    alone, _ = lock_command.run_lock(LockOptions(project))  # (nothing started early)
    for report in (took, alone):
        assert report.provenance.inputs["command"] == "uv lock --no-build", report.provenance


def test_through_the_command_the_report_is_the_one_without_it(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    """`python -m agentguard lock` (early start) and the command in process (none) agree;
    a command line that fails leaves no resolver's scratch folder behind."""
    first = write_project(tmp_path / "a" / "bot", ["claude-agent-sdk==0.2.95"])
    second = write_project(tmp_path / "b" / "bot", ["claude-agent-sdk==0.2.95"])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = dict(os.environ, TMPDIR=str(scratch))
    code, report, _ = run_json("lock", str(first), "--index-url", agent_index["url"], env=env)
    in_process, _ = lock_command.run_lock(LockOptions(second, index_url=agent_index["url"]))
    assert code == 1
    assert [strip_volatile(f) for f in report["findings"]] == [
        strip_volatile(f)
        for f in report_to_json(in_process)["findings"]  # type: ignore[union-attr]
    ]
    assert (first / "requirements.lock").read_text() == (second / "requirements.lock").read_text()
    bad = subprocess.run(
        [sys.executable, "-m", "agentguard", "lock", str(first), "--format", "bogus"],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bad.returncode == 2, bad.stderr
    assert sorted(p.name for p in scratch.iterdir()) == []


def test_the_uv_run_is_killed_when_its_deadline_passes(tmp_path: Path) -> None:
    """(A resolver that waits on an index that never answers: a listening socket that
    accepts and never replies.)"""
    import socket

    from agentguard.lock.backend import ResolveRequest, ResolverError
    from agentguard.lock.deadline import Deadline

    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        url = f"http://127.0.0.1:{server.getsockname()[1]}/simple"
        request = ResolveRequest(("mcp",), None, url, (), False, False, (), False, None,
                                 deadline=Deadline.start(1.0))  # fmt: skip
        run = backend.UvRun(request)
        with pytest.raises(ResolverError) as caught:
            run.result()
    assert caught.value.code == "deadline-exceeded"
    assert run._proc is not None and run._proc.poll() is not None
    assert not Path(run._tmp.name).exists()


def test_the_resolver_starts_before_the_uv_version_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each start waits for its child's exec: the resolution, which the run waits for, is
    started first, and `uv --version` beside it."""
    from agentguard.lock.backend import ResolveRequest

    started: list[list[str]] = []
    popen = backend._popen

    def recorded(cmd: list[str], *args: Any, **kwargs: Any) -> subprocess.Popen[str]:
        started.append(list(cmd))
        return popen(cmd, *args, **kwargs)

    monkeypatch.setattr(backend, "_popen", recorded)
    request = ResolveRequest(("mcp",), None, None, (), True, False, (), False, None)
    run = backend.UvRun(request)
    run.cancel()
    assert [c[1:3] for c in started] == [["pip", "compile"], ["--version"]]


def test_the_light_look_for_a_foreign_lock_knows_every_reader() -> None:
    from agentguard.lock.readers import READERS
    from agentguard.lock.which_lock import LOCK_FILES

    assert sorted(LOCK_FILES) == sorted(r.filename for r in READERS)


def test_uv_lock_is_stopped_at_the_runs_deadline(
    uv_project: dict[str, Any],  # noqa: F811
) -> None:
    """`lock --timeout 1` on a uv project whose index accepts and never answers: `uv lock`
    is killed at the deadline, a failed source says so, and uv.lock is left as it was."""
    import socket

    project: Path = uv_project["project"]
    before = (project / "uv.lock").read_bytes()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        stalled = f"http://127.0.0.1:{server.getsockname()[1]}/simple"
        text = (project / "pyproject.toml").read_text(encoding="utf-8")
        (project / "pyproject.toml").write_text(
            text.replace(uv_project["url"], stalled), encoding="utf-8"
        )
        report, _ = lock_command.run_lock(LockOptions(project, upgrade=True, timeout=1.0))
    [failed] = [s for s in report.sources if s.status.value == "failed"]
    assert (failed.kind, failed.name, failed.error_code) == (
        "resolver",
        "uv lock",
        "deadline-exceeded",
    )
    assert "the run's deadline (1 s, --timeout) passed" in failed.reason
    assert (project / "uv.lock").read_bytes() == before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("wait", [0.0, 1.5])  # in the early start, and once the CLI runs
def test_an_interrupted_lock_leaves_no_resolver_and_no_scratch_folder(
    tmp_path: Path, sig: signal.Signals, wait: float
) -> None:
    """`agentguard lock` against an index that accepts and never answers (uv waits on it),
    interrupted: exit 130, the resolver is gone and its scratch folder removed."""
    project = write_project(tmp_path / "bot", ["mcp"])
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(64)
        url = f"http://127.0.0.1:{server.getsockname()[1]}/simple"
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentguard", "lock", str(project), "--index-url", url, "-q"],
            env=dict(os.environ, TMPDIR=str(scratch)),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        # The signal comes once the resolver runs (the early start has begun: before that,
        # a loaded machine may not have started Python yet, and a signal then is no test of
        # the cleanup), then ``wait`` more seconds.
        until = time.monotonic() + 60
        while (
            not set(_processes_naming(url)) - {proc.pid}
            and proc.poll() is None
            and time.monotonic() < until
        ):
            time.sleep(0.01)
        time.sleep(wait)
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    assert list(scratch.iterdir()) == []
    assert _processes_naming(url) == []


def _processes_naming(text: str) -> list[int]:
    """Processes whose command line holds ``text`` (a resolver left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if text.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found

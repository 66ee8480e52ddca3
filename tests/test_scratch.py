"""Scratch folders are removed on every way out: where they are used, and once more when
the command ends (the run's deadline can land inside the removal itself); a forked child
never removes its parent's folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from agentguard import scratch
from tests.test_check_base import BOT, commit, git


def test_a_folder_is_removed_where_it_is_used(tmp_path: Path) -> None:
    with scratch.scratch_folder("agentguard-t-") as folder:
        (folder / "f").write_text("x", encoding="utf-8")
        assert oct(folder.stat().st_mode & 0o777) == "0o700"
    assert not folder.exists()
    assert str(folder) not in scratch.left()


def test_a_folder_left_behind_is_removed_at_the_end() -> None:
    folder = scratch.make("agentguard-t-")
    (folder / "sub").mkdir()
    assert str(folder) in scratch.left()
    scratch.remove_left()
    assert not folder.exists()
    assert scratch.left() == ()


def test_a_forked_child_never_removes_its_parents_folder() -> None:
    folder = scratch.make("agentguard-t-")
    try:
        pid = os.fork()
        if pid == 0:  # the child: what a forked scan child would do on its way out
            scratch.remove_left()
            scratch.remove(folder)
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert os.waitstatus_to_exitcode(status) == 0
        assert folder.is_dir()
    finally:
        scratch.remove(folder)
    assert not folder.exists()


# The run's deadline landing inside the removal of the base revision's folder: a fault that
# cannot be timed for real (the window is the removal itself), so the first removal is made
# to raise the deadline, through the real command line and its real way out.
_DEADLINE_IN_THE_REMOVAL = """
import shutil, sys
from agentguard import scratch
from agentguard.watchdog import RunDeadline
real, calls = shutil.rmtree, []
def rmtree(path, ignore_errors=False):
    calls.append(path)
    if len(calls) == 1:
        raise RunDeadline(1.0)
    real(path, ignore_errors=ignore_errors)
scratch.shutil.rmtree = rmtree
sys.argv = ["agentguard", "check", "--base", "HEAD~1", "--format", "json", sys.argv[1]]
from agentguard.__main__ import run
run()
"""


def test_the_deadline_inside_the_base_folders_removal_leaves_no_folder(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit(repo, {"bot.py": BOT.format("")}, "base")
    commit(repo, {"bot.py": BOT.format("permission_mode='bypassPermissions'")}, "head")
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONPATH": str(Path(__file__).parents[1])}
    done = subprocess.run(
        [sys.executable, "-c", _DEADLINE_IN_THE_REMOVAL, str(repo)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 3, done.stderr
    failed = [s for s in json.loads(done.stdout)["sources"] if s["status"] == "failed"]
    assert [s["error_code"] for s in failed] == ["deadline-exceeded"]
    assert sorted(p.name for p in tmp.iterdir() if p.name.startswith("agentguard-")) == []


def test_every_temporary_folder_comes_from_the_one_maker() -> None:
    """A folder made elsewhere would not be removed at the end: the mechanism holds only if
    it is the one way (anonymous temporary files are removed by the system on close)."""
    import ast

    root = Path(__file__).parents[1] / "agentguard"
    makers = {"mkdtemp", "TemporaryDirectory"}
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "scratch.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
                if name in makers:
                    found.append(f"{path.relative_to(root)}:{node.lineno}")
    assert found == []

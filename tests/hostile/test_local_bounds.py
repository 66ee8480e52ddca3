"""A hostile repository that tries to make a run endless, huge, or falsely clean (#16 items
10, 11, 14, 15).

The promise: bounded time and memory whatever the project's globs, dependency lists and
file sizes; a cap reached is a failed source (exit 3), never a silent cut; configuration
that was not read (a link out of the project, an unreadable .dockerignore) is never a
clean exit or an "absent" claim.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agentguard import safeio
from agentguard.inspect.project.files import MAX_FACTS_PER_FILE
from tests.hostile.local import MINIMAL_PYLOCK, sources, write
from tests.hostile.promises import check_failed_source, only, run_agentguard, within

pytestmark = pytest.mark.usefixtures("isolated_cache")

AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    'opts = ClaudeAgentOptions(permission_mode="bypassPermissions")\n'
)


def inspect_json(project: Path, *extra: str) -> tuple[int, dict[str, object], float, float]:
    run = run_agentguard(
        "inspect", str(project), "--kind", "project", "--no-lock", "-f", "json", *extra,
        cwd=project.parent,
    )  # fmt: skip
    run.check_no_crash()
    assert run.stdout, run.stderr
    return run.code, json.loads(run.stdout), run.seconds, run.max_rss_mib


# -- item 10: runs without end -----------------------------------------------------------


def test_a_backtracking_ignore_glob_in_the_projects_config_is_linear(tmp_path: Path) -> None:
    deep = "/".join(["a" * 60] * 30)
    project = write(
        tmp_path / "p",
        {
            "agentguard.toml": '[ignore]\n"*" = ["**a**a**a**a**a**a**a**b"]\n',
            f"{deep}/agent.py": AGENT,
        },
    )

    code, report, seconds, _ = inspect_json(project, "--config", str(project / "agentguard.toml"))

    assert code == 1 and report["summary"]["findings"] > 0  # nothing ignored: no "b"
    assert seconds < 20


def test_a_backtracking_dockerignore_glob_is_linear() -> None:
    from agentguard.inspect.project.dockerignore import parse_dockerignore

    ignore = parse_dockerignore(".dockerignore", "**a**a**a**a**a**a**a**a**b\n")
    with within(5):
        assert not ignore.excluded("a" * 3000)


def test_dependency_lines_of_a_huge_pyproject_are_found_in_one_pass(tmp_path: Path) -> None:
    """Each dependency's line used to re-split the file: 60k dependencies never finished.
    20k keep that apart by far (a re-split per line is 4e8 line splits, minutes) and leave
    room under the 30 s bound on a loaded machine (one pass takes about 3 s of CPU)."""
    from agentguard.inspect.project.install_facts import pyproject_requirements
    from agentguard.lock.inputs import read_pyproject

    deps = [f"pkg{i}>=1" for i in range(20_000)]
    text = '[project]\nname = "x"\nversion = "0"\ndependencies = [\n'
    text += "".join(f'  "{d}",\n' for d in deps) + "]\n"
    write(tmp_path, {"pyproject.toml": text})
    import tomllib

    with within(30):
        inputs = read_pyproject(tmp_path, (), False, ())
        decls = pyproject_requirements("pyproject.toml", text, tomllib.loads(text))
    assert inputs.requirements[-1].line == 20_004 and decls[-1].line == 20_004
    assert inputs.requirements[0].line == 5


# -- item 11: memory ---------------------------------------------------------------------


def test_agent_configurations_in_one_file_are_capped(tmp_path: Path) -> None:
    body = "".join(
        f'o{i} = ClaudeAgentOptions(permission_mode="bypassPermissions")\n' for i in range(20_000)
    )
    project = write(
        tmp_path / "p", {"gen.py": "from claude_agent_sdk import ClaudeAgentOptions\n" + body}
    )

    code, report, seconds, rss = inspect_json(project)

    assert code == 3
    failed = only([s for s in report["sources"] if s["status"] == "failed"])  # type: ignore[union-attr]
    check_failed_source(failed)
    assert failed["error_code"] == "cap-file-facts"
    assert failed["reason"].startswith("20000 agent configurations in one file, over the cap")
    configs = {f["locations"][0]["line"] for f in report["findings"]}  # type: ignore[union-attr, index]
    assert len(configs) == MAX_FACTS_PER_FILE
    # (peak RSS counts the forked test process before exec: the suite's bound is 600 MB)
    assert seconds < 60 and rss < 600, (seconds, rss)


@pytest.mark.parametrize("name", ["agentguard.toml", "pyproject.toml"])
def test_an_oversize_config_file_is_a_usage_error(tmp_path: Path, name: str) -> None:
    filler = "# " + "x" * 1000 + "\n"
    head = "[tool.agentguard]\n" if name == "pyproject.toml" else ""
    blob = head + filler * (safeio.MAX_CONFIG_BYTES // len(filler) + 1)
    project = write(tmp_path / "p", {name: blob, "agent.py": AGENT})

    run = run_agentguard("check", ".", cwd=project)

    run.check_no_crash()
    assert run.code == 2, run.stderr
    assert "byte cap" in run.stderr and name in run.stderr


def test_an_oversize_pylock_is_a_failed_source(tmp_path: Path) -> None:
    filler = "# " + "x" * 1000 + "\n"
    blob = MINIMAL_PYLOCK + filler * (safeio.MAX_LOCK_BYTES // len(filler) + 1)
    project = write(
        tmp_path / "p",
        {
            "pyproject.toml": '[project]\nname = "x"\nversion = "0"\ndependencies = []\n',
            "pylock.toml": blob,
            "requirements.lock": "",
        },
    )

    run = run_agentguard("lock", ".", "--check", "-f", "json", cwd=project)

    run.check_no_crash()
    assert run.code == 3
    lock = only([s for s in sources(run) if s["status"] == "failed"])
    check_failed_source(lock)
    assert "byte cap" in lock["reason"]
    assert run.max_rss_mib < 600


# -- item 14: the gate passes what it did not read --------------------------------------


def test_agent_configuration_linked_from_outside_is_never_a_clean_pass(tmp_path: Path) -> None:
    shared = write(
        tmp_path / "monorepo" / "shared",
        {
            ".claude/settings.json": '{"permissions": {"defaultMode": "bypassPermissions"}}',
            ".mcp.json": '{"mcpServers": {}}',
            "agent.py": AGENT,
        },
    )
    project = tmp_path / "monorepo" / "service"
    (project / ".claude").mkdir(parents=True)
    for rel in (".claude/settings.json", ".mcp.json", "agent.py"):
        os.symlink(shared / rel, project / rel)

    run = run_agentguard("check", ".", "-f", "json", cwd=project)

    run.check_no_crash()
    assert run.code == 3, run.stdout
    report = json.loads(run.stdout)
    assert report["summary"]["findings"] == 0 and report["complete"] is False
    linked = sorted(
        s["name"] for s in report["sources"] if s.get("error_code") == "file-link-outside"
    )
    assert linked == [".claude/settings.json", ".mcp.json", "agent.py"]
    for s in report["sources"]:
        if s["status"] == "failed":
            check_failed_source(s)


# -- item 15: low ------------------------------------------------------------------------


@pytest.mark.parametrize("how", ["link-out", "fifo"])
def test_an_unreadable_dockerignore_is_not_called_absent(tmp_path: Path, how: str) -> None:
    # (PLAN.md: AG212 names the files of the tree that go into the image)
    files = {"Dockerfile": "FROM python:3.12\nWORKDIR /app\nCOPY . .\n", "PLAN.md": "x\n"}
    project = write(tmp_path / "p", files)
    if how == "fifo":
        os.mkfifo(project / ".dockerignore")
    else:
        (tmp_path / "elsewhere").write_text(".env\n")
        (project / ".dockerignore").symlink_to(tmp_path / "elsewhere")

    code, report, _, _ = inspect_json(project)

    ag212 = only([f for f in report["findings"] if f["rule_id"] == "AG212"])  # type: ignore[union-attr, index]
    assert "there is no .dockerignore" not in ag212["message"]
    assert ".dockerignore could not be read (what it keeps out is unknown)" in ag212["message"]
    assert ag212["confidence"] == "low"
    assert ag212["evidence"]["not_kept_out"] is None
    if how == "link-out":
        assert code == 3


@pytest.mark.parametrize(
    "user", ["99999999999999999999:1", "1:4294967296", "10\n", "1:" + "9" * 5000]
)
def test_harden_rejects_an_impossible_user(tmp_path: Path, user: str) -> None:
    run = run_agentguard("harden", ".", "--user", user, "--out", str(tmp_path / "o"), cwd=tmp_path)

    run.check_no_crash()
    assert run.code == 2
    assert run.stderr.startswith("agentguard: error: --user")
    assert not (tmp_path / "o").exists()


def test_agentguard_jobs_is_capped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentguard.inspect.project import scan

    files = {f"m{i}/x{j}.py": "import os\n" for i in range(30) for j in range(80)}
    project = write(tmp_path / "p", {**files, "agent.py": AGENT})

    run = run_agentguard(
        "inspect", str(project), "--kind", "project", "--no-lock", "-f", "json",
        env={"AGENTGUARD_JOBS": "100000"}, timeout=120,
    )  # fmt: skip

    run.check_no_crash()
    assert run.code == 1
    assert run.seconds < 60
    monkeypatch.setenv("AGENTGUARD_JOBS", "100000")
    assert scan._jobs(5000) <= scan.MAX_JOBS <= 32
    monkeypatch.setenv("AGENTGUARD_JOBS", "9" * 5000)  # beyond int()'s digit limit
    assert scan._jobs(5000) >= 1


def test_a_fifo_named_as_the_target_never_hangs_the_run(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "image.tar")

    run = run_agentguard("inspect", "image.tar", "--no-lock", cwd=tmp_path, timeout=30)

    run.check_no_crash()
    assert run.seconds < 20

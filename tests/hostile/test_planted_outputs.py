"""A pull request that plants links and names where agentguard writes (#16 items 3, 4, 5).

The promise: nothing outside the intended folder is written or removed; an output path
that is a link is refused with exit 2 before anything is written; a file name is never
code in a generated file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.local import CI_ENV, write
from tests.hostile.promises import run_agentguard, snapshot

pytestmark = pytest.mark.usefixtures("isolated_cache")

AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    'opts = ClaudeAgentOptions(permission_mode="bypassPermissions", allowed_tools=["Bash"])\n'
)


def victim(tmp_path: Path) -> Path:
    path = tmp_path / "outside" / "victim.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("precious\n")
    return path


@pytest.mark.parametrize(
    "option", ["--output", "--sarif-output", "--write-baseline"], ids=lambda o: o.strip("-")
)
def test_a_report_path_that_is_a_planted_link_is_refused(tmp_path: Path, option: str) -> None:
    project = write(tmp_path / "p", {"agent.py": AGENT})
    target = victim(tmp_path)
    (project / "agentguard.out").symlink_to(target)

    run = run_agentguard("check", ".", option, "agentguard.out", cwd=project, env=CI_ENV)

    run.check_no_crash()
    assert run.code == 2, run.stderr
    assert "is a symbolic link; refusing to write through it" in run.stderr
    assert target.read_text() == "precious\n"
    assert (project / "agentguard.out").is_symlink()


def test_a_report_is_replaced_atomically_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"agent.py": AGENT})
    (project / "report.json").write_text("old")

    run = run_agentguard("check", ".", "-f", "json", "-o", "report.json", cwd=project)

    assert run.code == 1, run.stderr
    assert json.loads((project / "report.json").read_text())["schema"] == "agentguard.report/1"
    assert sorted(p.name for p in project.iterdir()) == ["agent.py", "report.json"]


def harden(project: Path, out: Path) -> tuple[int, str]:
    run = run_agentguard(
        "harden", str(project), "--kind", "project", "--out", str(out), "-q", cwd=project.parent
    )
    run.check_no_crash()
    return run.code, run.stderr


def test_harden_never_removes_what_a_planted_manifest_lists_outside_its_folder(
    tmp_path: Path,
) -> None:
    project = write(tmp_path / "p", {"agent.py": AGENT})
    target = victim(tmp_path)
    out = project / "agentguard-hardened"
    out.mkdir()
    listed = [str(target), "../../outside/victim.txt", "agent/../../../outside/victim.txt"]
    (out / ".agentguard-harden.json").write_text(json.dumps({"files": listed}))

    code, err = harden(project, out)

    assert code in (0, 1), err
    assert target.read_text() == "precious\n"
    manifest = json.loads((out / ".agentguard-harden.json").read_text())
    assert all(not Path(f).is_absolute() and ".." not in Path(f).parts for f in manifest["files"])


@pytest.mark.parametrize("planted", ["agent", "SUMMARY.md", "docker-run.sh", "."])
def test_harden_refuses_a_planted_link_in_its_output_folder(tmp_path: Path, planted: str) -> None:
    project = write(tmp_path / "p", {"agent.py": AGENT})
    outside = tmp_path / "outside"
    outside.mkdir()
    out = project / "agentguard-hardened"
    if planted == ".":
        out.symlink_to(outside, target_is_directory=True)
    else:
        out.mkdir()
        link_to = outside if planted == "agent" else victim(tmp_path)
        (out / planted).symlink_to(link_to)
    before = snapshot(outside)

    code, err = harden(project, out)

    assert code == 2, err
    assert "harden output:" in err and "symbolic link" in err
    assert snapshot(outside) == before


def test_harden_ignores_a_planted_temporary_file_link(tmp_path: Path) -> None:
    """The old temporary name (``.SUMMARY.md.tmp``) was predictable; a link planted under
    it is never followed (temporary files are created exclusively, under random names)."""
    project = write(tmp_path / "p", {"agent.py": AGENT})
    target = victim(tmp_path)
    out = project / "agentguard-hardened"
    out.mkdir()
    (out / ".SUMMARY.md.tmp").symlink_to(target)

    code, err = harden(project, out)

    assert code in (0, 1), err
    assert target.read_text() == "precious\n"
    assert (out / "SUMMARY.md").is_file() and not (out / "SUMMARY.md").is_symlink()


INJECTED = (
    'x\nimport os; os.system("touch PWNED")\n""" + __import__("os").system("touch PWNED2") + """'
)


def test_a_file_name_is_never_code_in_a_hardened_file(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {f"{INJECTED}.py": AGENT, "cli.sh": "claude -p hi\n"})
    (project / f"{INJECTED}.sh").write_text("claude -p hi --dangerously-skip-permissions\n")
    out = tmp_path / "hardened"

    code, err = harden(project, out)

    assert code in (0, 1), err
    generated = [p for p in (out / "agent").iterdir() if p.suffix in (".py", ".sh")]
    assert {p.suffix for p in generated} >= {".py"}
    sandbox = tmp_path / "run-here"
    sandbox.mkdir()
    for path in generated:
        if path.suffix == ".py":
            compile(path.read_text(), str(path), "exec")  # still valid Python
            cmd = [sys.executable, str(path)]
        else:
            cmd = ["sh", str(path)]
        subprocess.run(cmd, cwd=sandbox, capture_output=True, timeout=30, check=False)
    assert sorted(p.name for p in sandbox.iterdir()) == []  # no injected command ran
    for path in generated:
        text = path.read_text()
        assert not any(line.startswith("import os") for line in text.splitlines()), path


def test_harden_writes_a_non_utf8_file_name_without_crashing(tmp_path: Path) -> None:
    project = write(tmp_path / "p", {"agent.py": AGENT})
    name = b"agent-\xff\xfe.py"
    with open(bytes(project) + b"/" + name, "wb") as fh:
        fh.write(AGENT.encode())
    out = tmp_path / "hardened"

    code, err = harden(project, out)

    assert code in (0, 1), err
    texts = [p.read_text(encoding="utf-8") for p in out.rglob("*") if p.is_file()]
    assert any("agent-\\xff\\xfe.py" in t for t in texts)


def test_a_link_planted_under_the_lock_files_temporary_name_is_never_followed(
    tmp_path: Path,
) -> None:
    """The lock files' temporary names carry the process id (predictable): a link planted
    under one is removed, and the write goes to a new file."""
    import os

    from agentguard.lock.lockfile import write_atomically

    project = write(tmp_path / "p", {"pylock.toml": "old\n"})
    target = victim(tmp_path)
    (project / f".pylock.toml.agentguard-{os.getpid()}.tmp").symlink_to(target)

    write_atomically({project / "pylock.toml": "new\n"})

    assert target.read_text() == "precious\n"
    assert (project / "pylock.toml").read_text() == "new\n"
    assert sorted(p.name for p in project.iterdir()) == ["pylock.toml"]

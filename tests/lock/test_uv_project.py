"""A uv project keeps uv authoritative: `agentguard lock` runs `uv lock` and gates the new
uv.lock (AG102) before it replaces the committed one; `--check` reads the uv.lock it has.
Real uv, real wheels in a local index; the first lock is made by `uv lock` itself."""

from __future__ import annotations

import hashlib
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock.backend import uv_binary
from tests.lock.helpers import findings, run_cli, run_json, strip_volatile
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _uv(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [uv_binary(), *args, "--python", sys.executable],
        cwd=project,
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
    )


@pytest.fixture()
def uv_project(tmp_path: Path) -> dict[str, Any]:
    """A uv project (virtual: nothing to build) whose uv.lock, made by `uv lock`, holds
    mcp 1.5.0 under claude-agent-sdk 0.2.95 (`mcp>=1.0`); then mcp 2.x is released."""
    wheels = tmp_path / "wheels"
    for v in ("1.0.0", "1.5.0"):
        build_wheel(wheels, "mcp", v)
    build_wheel(wheels, "claude-agent-sdk", "0.2.95", ["mcp>=1.0", "httpx-lite>=1.0"])
    build_wheel(wheels, "httpx-lite", "1.0.0", ["typing-x>=1"])
    build_wheel(wheels, "typing-x", "1.0.0")
    url = write_simple_index(wheels, tmp_path / "simple")
    project = tmp_path / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["claude-agent-sdk==0.2.95"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n',
        encoding="utf-8",
    )
    _uv(project, "lock")
    assert 'name = "mcp"\nversion = "1.5.0"' in (project / "uv.lock").read_text()
    for v in ("2.0.0", "2.1.0"):
        build_wheel(wheels, "mcp", v)
    write_simple_index(wheels, tmp_path / "simple")
    return {"project": project, "url": url, "root": tmp_path}


def test_an_upgrade_across_a_major_is_refused_and_uv_lock_stays_byte_identical(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    before = (project / "uv.lock").read_bytes()
    code, report, _ = run_json("lock", str(project), "--upgrade")

    assert code == 1
    assert [strip_volatile(f) for f in findings(report, "AG102")] == [
        {
            "rule_id": "AG102",
            "title": "Re-lock would cross a major",
            "severity": "high",
            "confidence": "high",
            "message": "mcp would move from 1.5.0 to 2.1.0 (major 1 -> 2), allowed by: "
            "claude-agent-sdk==0.2.95 declares mcp>=1.0.",
            "locations": [
                {"dependency_path": ["project", "claude-agent-sdk==0.2.95", "mcp==2.1.0"]}
            ],
            "evidence": {
                "package": "mcp",
                "old": "1.5.0",
                "new": "2.1.0",
                "old_marker": None,
                "new_marker": None,
                "environment": None,
                "environments": "every environment",
                "allowed_by": ["claude-agent-sdk==0.2.95 declares mcp>=1.0"],
            },
            "fix": {
                "description": "Review mcp 2, then re-run with `--allow-major mcp`; or add "
                "`mcp<2` to stay on the locked major.",
                "safe": False,
                "snippet": "mcp<2",
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]
    assert (project / "uv.lock").read_bytes() == before
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml", "uv.lock"]
    assert report["notes"][0] == "`uv lock` would cross a major (mcp); uv.lock was left untouched."
    assert report["provenance"]["inputs"]["lock_file"] == "uv.lock"
    assert report["provenance"]["inputs"]["command"] == "uv lock --upgrade"


def test_allow_major_lets_it_through_and_uv_sync_locked_installs_it(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    code, report, _ = run_json("lock", str(project), "--upgrade", "--allow-major", "mcp")

    assert [(f["rule_id"], f["severity"]) for f in findings(report, "AG102")] == [("AG102", "info")]
    assert report["notes"][0] == "Wrote uv.lock from `uv lock` after the major gate (4 packages)."
    assert 'name = "mcp"\nversion = "2.1.0"' in (project / "uv.lock").read_text()
    assert not (project / "requirements.lock").exists()
    assert not (project / "pylock.toml").exists()
    assert code == 1  # the SDK's range still spans mcp 1 and 2 (AG101, high)

    _uv(project, "sync", "--locked")
    site = next((project / ".venv" / "lib").glob("python*/site-packages"))
    assert (site / "mcp-2.1.0.dist-info").is_dir()


def test_an_upgrade_package_that_keeps_the_major_is_written(uv_project: dict[str, Any]) -> None:
    project: Path = uv_project["project"]
    code, report, _ = run_json("lock", str(project), "--upgrade-package", "typing-x")

    assert report["notes"][0] == "uv.lock is up to date; left untouched."
    assert report["provenance"]["inputs"]["command"] == "uv lock --upgrade-package typing-x"
    assert findings(report, "AG102") == []
    assert [f["evidence"]["child"] for f in findings(report, "AG101")] == ["mcp"]
    assert code == 1  # AG101: the SDK's range spans mcp 1 and 2 (the lock keeps 1.5.0)


def test_check_reads_the_uv_lock_and_runs_offline_from_the_cache(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    code, report, _ = run_json("lock", "--check", str(project))

    assert code == 1
    assert [strip_volatile(f) for f in findings(report, "AG101")] == [
        {
            "rule_id": "AG101",
            "title": "Dependency range admits more than one released major",
            "severity": "high",
            "confidence": "high",
            "message": "claude-agent-sdk==0.2.95 declares mcp>=1.0, which admits 2 released "
            "majors of mcp (1, 2); locked: mcp==1.5.0. The range has no upper bound, so every "
            "future major is admitted too.",
            "locations": [
                {"dependency_path": ["project", "claude-agent-sdk==0.2.95", "mcp"], "note": ">=1.0"}
            ],
            "evidence": {
                "parent": "claude-agent-sdk",
                "parent_version": "0.2.95",
                "child": "mcp",
                "specifier": ">=1.0",
                "marker": None,
                "majors_admitted": ["1", "2"],
                "locked": ["1.5.0"],
                "locked_marker": None,
                "unbounded_above": True,
                "watched": True,
                "mitigated_by": [],
                "uploaded": {"parent": None, "majors": {}},  # a file index gives no times
                "built_for": None,
                "first_fix_basis": "locked-major",
                "fix_set": "unknown",  # read from the uv.lock: not resolved together here
            },
            "fix": {
                "description": "Add `mcp>=1.0,<2` to your requirements (the locked major): "
                "the upload times of claude-agent-sdk==0.2.95 and of mcp's majors are not all "
                "known, and no later release of claude-agent-sdk narrows the range.",
                "safe": False,
                "snippet": "mcp>=1.0,<2",
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]
    assert [f["rule_id"] for f in report["findings"]] == ["AG101"]
    assert report["provenance"]["inputs"]["lock_file"] == "uv.lock"
    assert report["notes"] == [
        "Read uv.lock, the project's own lock (written by uv); wrote nothing."
    ]
    assert report["facts"]["unread_edges"] == []

    # Offline: the index (pages and wheels) is gone; the cache holds the edges and majors.
    shutil.rmtree(uv_project["root"] / "simple")
    shutil.rmtree(uv_project["root"] / "wheels")
    code2, again, _ = run_json("lock", "--check", str(project))
    assert (code2, again["findings"]) == (code, report["findings"])
    assert {s["status"] for s in again["sources"]} == {"ok"}


def test_check_finds_a_uv_lock_out_of_sync_with_the_pyproject(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    py = project / "pyproject.toml"
    py.write_text(
        py.read_text().replace('"claude-agent-sdk==0.2.95"', '"claude-agent-sdk==0.2.96"')
    )
    _code, report, _ = run_json("lock", "--check", str(project))

    assert [f["message"] for f in findings(report, "AG103")] == [
        "claude-agent-sdk (declared as claude-agent-sdk==0.2.96 in pyproject.toml) is locked at "
        "0.2.95, which claude-agent-sdk==0.2.96 does not admit: uv.lock is out of date.",
        "uv.lock was made from other requirements than pyproject.toml declares now (declared, "
        "not in the lock: claude-agent-sdk==0.2.96; in the lock, no longer declared: "
        "claude-agent-sdk==0.2.95).",
    ]


@pytest.mark.parametrize("command", [("lock", "--check"), ("lock", "--upgrade")])
def test_a_truncated_uv_lock_is_a_failed_source_with_file_and_line(
    uv_project: dict[str, Any], command: tuple[str, ...]
) -> None:
    project: Path = uv_project["project"]
    lines = (project / "uv.lock").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if line.startswith("wheels = [")) + 1
    (project / "uv.lock").write_text("".join(lines[:cut]))
    before = (project / "uv.lock").read_bytes()
    code, report, _ = run_json(*command, str(project))

    assert code == 3
    assert report["findings"] == []
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert [(s["kind"], s["name"], s["reason"], s["error_code"]) for s in failed] == [
        (
            "lockfile",
            "uv.lock",
            f"uv.lock:{cut}: not valid TOML (Invalid value); the file ends early",
            "lockfile-invalid",
        )
    ]
    assert (project / "uv.lock").read_bytes() == before


def test_a_uv_constraint_caps_the_upgrade_and_mitigates_the_span(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    py = project / "pyproject.toml"
    py.write_text(
        py.read_text().replace(
            "package = false\n", 'package = false\nconstraint-dependencies = ["mcp<2"]\n'
        )
    )
    code, report, _ = run_json("lock", str(project), "--upgrade")

    assert findings(report, "AG102") == []
    assert 'name = "mcp"\nversion = "1.5.0"' in (project / "uv.lock").read_text()
    mcp = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert [(f["severity"], f["evidence"]["mitigated_by"]) for f in mcp] == [("info", ["<2"])]
    assert mcp[0]["message"].endswith(
        "Mitigated: the project's own requirement mcp<2 holds one major."
    )
    assert code == 0


@pytest.mark.parametrize("kind", ["requirements", "pylock"])
def test_export_writes_the_gated_lock_only_when_asked_and_uv_lock_stays_the_lock(
    uv_project: dict[str, Any], kind: str, tmp_path: Path
) -> None:
    project: Path = uv_project["project"]
    _code, report, _ = run_json("lock", str(project), "--export", kind)

    name = {"requirements": "requirements.lock", "pylock": "pylock.toml"}[kind]
    assert report["notes"][-1] == (
        f"Exported uv.lock as {name} (asked with --export {kind}); uv.lock stays the lock."
    )
    text = (project / name).read_text()
    assert text.startswith("# Exported by `agentguard lock --export` from uv.lock")
    wheels = uv_project["root"] / "wheels"
    assert f"sha256:{_sha(wheels / 'mcp-1.5.0-py3-none-any.whl')}" in text or (
        f'sha256 = "{_sha(wheels / "mcp-1.5.0-py3-none-any.whl")}"' in text
    )
    # the next run still reads uv.lock as the lock
    _c, again, _ = run_json("lock", "--check", str(project))
    assert again["provenance"]["inputs"]["lock_file"] == "uv.lock"
    if kind == "requirements":  # and pip installs the export with --require-hashes
        venv = tmp_path / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "--no-deps", "--no-index",
             "--require-hashes", "--find-links", str(wheels), "-r", str(project / name)],
            check=True,
        )  # fmt: skip
        site = next((venv / "lib").glob("python*/site-packages"))
        assert (site / "mcp-1.5.0.dist-info").is_dir()


def test_export_is_refused_without_a_tool_lock(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "x"\nversion = "0"\ndependencies = []\n'
    )
    proc = run_cli("lock", str(tmp_path), "--export", "pylock")
    assert proc.returncode == 2
    assert "--export writes a project's own lock" in proc.stderr


def test_a_uv_workspace_member_is_read_and_checked(uv_project: dict[str, Any]) -> None:
    """A workspace: the root depends on a member, the member on the SDK."""
    project: Path = uv_project["project"]
    index = uv_project["url"]
    member = project / "packages" / "agent"
    member.mkdir(parents=True)
    (member / "pyproject.toml").write_text(
        '[project]\nname = "agent"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["claude-agent-sdk==0.2.95"]\n\n[build-system]\n'
        'requires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
        encoding="utf-8",
    )
    (project / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["agent"]\n\n[tool.uv]\npackage = false\n\n'
        '[tool.uv.workspace]\nmembers = ["packages/*"]\n\n'
        "[tool.uv.sources]\nagent = { workspace = true }\n\n"
        f'[[tool.uv.index]]\nname = "local"\nurl = "{index}"\ndefault = true\n',
        encoding="utf-8",
    )
    (project / "uv.lock").unlink()
    _uv(project, "lock")
    code, report, _ = run_json("lock", "--check", str(project))

    assert [
        (f["evidence"]["parent"], f["evidence"]["child"], f["locations"][0]["dependency_path"])
        for f in findings(report, "AG101")
    ] == [
        ("claude-agent-sdk", "mcp", ["project", "agent==0.1.0", "claude-agent-sdk==0.2.95", "mcp"])
    ]
    assert findings(report, "AG103") == []
    assert code == 1

    (member / "pyproject.toml").write_text(
        (member / "pyproject.toml").read_text().replace("0.2.95", "0.2.96")
    )
    _code, stale, _ = run_json("lock", "--check", str(project))
    assert [f["message"] for f in findings(stale, "AG103")] == [
        "workspace member agent (packages/agent/pyproject.toml) declares other requirements than "
        "uv.lock recorded (declared, not in the lock: claude-agent-sdk==0.2.96; in the lock, no "
        "longer declared: claude-agent-sdk==0.2.95)."
    ]


def test_uv_lock_is_told_this_interpreter_only_when_the_project_accepts_it() -> None:
    from agentguard.engine.lock.uv_project import uv_lock_command
    from agentguard.lock_command import LockOptions

    opts = LockOptions(Path("."), upgrade_packages=("mcp",), only_binary=True)
    here = f"{sys.version_info[0]}.{sys.version_info[1]}"
    fits = uv_lock_command(opts, f">={here}")[1:]
    assert fits == ["lock", "--python", sys.executable, "--upgrade-package", "mcp", "--no-build"]
    later = uv_lock_command(opts, f">{here}.99")[1:]
    # (said all the same: left alone, uv would take a `.python-version` of the project's)
    assert later == ["lock", "--python", f">{here}.99", "--upgrade-package", "mcp", "--no-build"]


def test_edges_whose_parent_metadata_cannot_be_read_are_named(
    uv_project: dict[str, Any],
) -> None:
    project: Path = uv_project["project"]
    (uv_project["root"] / "wheels" / "httpx_lite-1.0.0-py3-none-any.whl").unlink()
    code, report, _ = run_json("lock", "--check", str(project))

    assert code == 3
    failed = [(s["kind"], s["name"]) for s in report["sources"] if s["status"] == "failed"]
    assert failed == [("metadata", "httpx-lite==1.0.0")]
    assert report["facts"]["unread_edges"] == ["httpx-lite==1.0.0 -> typing-x"]
    assert report["notes"][-1] == (
        "1 edges could not be read (their parent's Requires-Dist is unknown): "
        "httpx-lite==1.0.0 -> typing-x"
    )


def test_check_command_reads_the_uv_lock_in_its_lock_step(uv_project: dict[str, Any]) -> None:
    project: Path = uv_project["project"]
    code, report, _ = run_json("check", str(project))

    assert code == 1
    assert [(f["rule_id"], f["evidence"]["child"]) for f in findings(report, "AG101")] == [
        ("AG101", "mcp")
    ]
    assert "Read uv.lock, the project's own lock (written by uv); wrote nothing." in report["notes"]
    assert [s for s in report["sources"] if s["status"] == "failed"] == []


def test_a_path_dependency_above_the_project_still_locks(uv_project: dict[str, Any]) -> None:
    """`../lib` resolves from the copy as from the project; the copy is removed after."""
    project: Path = uv_project["project"]
    lib = uv_project["root"] / "lib"
    lib.mkdir()
    (lib / "pyproject.toml").write_text(
        '[project]\nname = "lib"\nversion = "0.1.0"\ndependencies = ["typing-x>=1"]\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
        encoding="utf-8",
    )
    py = project / "pyproject.toml"
    text = py.read_text().replace(
        '["claude-agent-sdk==0.2.95"]', '["lib", "claude-agent-sdk==0.2.95"]'
    )
    py.write_text(text + '\n[tool.uv.sources]\nlib = { path = "../lib", editable = true }\n')
    _uv(project, "lock")
    code, report, _ = run_json("lock", str(project), "--upgrade")

    assert [s for s in report["sources"] if s["status"] == "failed"] == []
    assert [f["evidence"]["package"] for f in findings(report, "AG102")] == ["mcp"]
    assert code == 1
    assert [p.name for p in uv_project["root"].iterdir() if p.name.startswith(".")] == []


def test_a_correct_lock_whose_siblings_name_the_project_back_is_left_untouched(
    uv_project: dict[str, Any],
) -> None:
    """Modelled on langgraph's `libs/langgraph`: its uv.lock holds editable siblings
    (`../prebuilt`) whose own sources name the project back (`../langgraph`). The copy uv
    locks keeps the project's folder name and its siblings beside it, so uv sees what it saw
    and a lock `uv lock --check` calls in sync is up to date: never rewritten."""
    libs = uv_project["root"] / "libs"
    app, lib = libs / "app", libs / "lib"
    url = uv_project["url"]
    index = f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n'
    build = '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n'
    for folder, deps, extra, source in (
        (app, '["lib"]', "", 'lib = { path = "../lib", editable = true }'),
        (lib, '["typing-x>=1"]', '\n[project.optional-dependencies]\ntest = ["app"]\n',
         'app = { path = "../app", editable = true }'),
    ):  # fmt: skip
        folder.mkdir(parents=True)
        (folder / "pyproject.toml").write_text(
            f'[project]\nname = "{folder.name}"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
            f"dependencies = {deps}\n{extra}\n{build}\n[tool.uv.sources]\n{source}\n\n{index}",
            encoding="utf-8",
        )
    _uv(app, "lock")
    _uv(app, "lock", "--check")  # uv: in sync
    before = (app / "uv.lock").read_bytes()
    code, report, _ = run_json("lock", str(app))

    assert [s for s in report["sources"] if s["status"] == "failed"] == []
    assert report["status"] == "up-to-date"
    assert (app / "uv.lock").read_bytes() == before
    assert code == 0
    assert sorted(p.name for p in libs.iterdir()) == ["app", "lib"]  # no copy left beside


def test_a_git_dependency_is_unhashed_and_its_edges_are_named_unread(
    uv_project: dict[str, Any],
) -> None:
    root: Path = uv_project["root"]
    repo = root / "gitdep"
    repo.mkdir()
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "gitdep"\nversion = "0.3.0"\ndependencies = ["typing-x>=1"]\n\n'
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
        encoding="utf-8",
    )
    for args in (("init", "-q"), ("add", "."), ("commit", "-qm", "x")):
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", *args],
            cwd=repo,
            check=True,
        )
    project: Path = uv_project["project"]
    py = project / "pyproject.toml"
    dep = f"gitdep @ git+{repo.as_uri()}"
    py.write_text(
        py.read_text().replace(
            '["claude-agent-sdk==0.2.95"]', f'["{dep}", "claude-agent-sdk==0.2.95"]'
        )
    )
    _uv(project, "lock")
    _code, report, _ = run_json("lock", "--check", str(project))

    assert [(f["severity"], f["message"]) for f in findings(report, "AG104")] == [
        (
            "medium",
            "gitdep==0.3.0 in uv.lock is pinned by a git commit, not by a file hash: uv "
            "checks out that commit and builds it at install time, with no hash of a file to "
            "check it against.",
        )
    ]
    assert report["facts"]["unread_edges"] == ["gitdep==0.3.0 -> typing-x"]
    assert [s["status"] for s in report["sources"] if s["name"] == "gitdep==0.3.0"] == ["skipped"]
    assert findings(report, "AG103") == []


@pytest.mark.parametrize("command", [("lock", "--check"), ("lock",)])
def test_a_uv_lock_that_is_a_link_is_not_followed(
    uv_project: dict[str, Any], command: tuple[str, ...]
) -> None:
    project: Path = uv_project["project"]
    outside = uv_project["root"] / "elsewhere.lock"
    (project / "uv.lock").rename(outside)
    (project / "uv.lock").symlink_to(outside)
    code, report, _ = run_json(*command, str(project))

    assert code == 3
    failed = [(s["name"], s["reason"]) for s in report["sources"] if s["status"] == "failed"]
    assert failed == [("uv.lock", "uv.lock: not a regular file (a link is not followed)")]
    assert (project / "uv.lock").is_symlink()


def test_a_project_without_uv_configuration_never_reads_one_planted_above_the_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#16 item 13: `uv lock` runs on a copy under a temporary folder; a `uv.toml` planted
    in a parent (`/tmp`) must not steer it. With no configuration of its own the project
    gets `--no-config` (or the user's own uv.toml); with its own, uv stops there."""
    from agentguard.engine.lock.uv_project import config_flags

    monkeypatch.delenv("UV_CONFIG_FILE", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n')
    assert config_flags(bare) == ["--no-config"]
    user = tmp_path / "xdg" / "uv" / "uv.toml"
    user.parent.mkdir(parents=True)
    user.write_text('index-url = "https://example.invalid/simple"\n')
    assert config_flags(bare) == ["--config-file", str(user)]
    own = tmp_path / "own"
    own.mkdir()
    (own / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "0"\n[tool.uv]\n')
    assert config_flags(own) == []
    (bare / "uv.toml").write_text("")
    assert config_flags(bare) == []
    monkeypatch.setenv("UV_CONFIG_FILE", str(user))
    assert config_flags(tmp_path / "missing") == []

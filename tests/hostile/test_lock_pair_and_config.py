"""`agentguard lock`'s own configuration and its two files: no `uv.toml` but the flags it
gives (one planted in the shared temp folder or the working folder is not obeyed); the two
lock files switch as a pair (loopback index only).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hostile.index_helpers import (
    UV_FAST,
    failed_sources,
    lock,
    project,
    report_of,
    wheels,
)
from tests.hostile.index_server import serving
from tests.hostile.promises import run_agentguard, snapshot
from tests.lock.helpers import write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")
__all__ = ["project", "wheels"]  # fixtures


# -- item 13: no uv.toml but the flags agentguard gives ----------------------------------------


def test_a_planted_uv_toml_is_not_obeyed(tmp_path: Path, wheels: Path) -> None:
    planted = tmp_path / "planted-wheels"
    build_wheel(planted, "mcp", "9.0.0")
    shared_tmp = tmp_path / "shared-tmp"
    shared_tmp.mkdir()
    config = f'find-links = ["{planted}"]\n[pip]\nfind-links = ["{planted}"]\n'
    (shared_tmp / "uv.toml").write_text(config)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "uv.toml").write_text(config)
    project = write_project(tmp_path / "bot", ["mcp>=1"])
    with serving(wheels) as index:
        run = run_agentguard(
            "lock",
            str(project),
            "--index-url",
            index.url,
            "--format",
            "json",
            cwd=cwd,
            env={**UV_FAST, "TMPDIR": str(shared_tmp)},
        )
    run.check_no_crash()
    report = report_of(run)
    assert run.code == 1, report["sources"]
    text = (project / "requirements.lock").read_text()
    assert "mcp==2.0.0" in text and "9.0.0" not in text
    assert str(planted) not in text and str(planted) not in (project / "pylock.toml").read_text()


# -- item 15: the two lock files switch as a pair ----------------------------------------------


def test_a_switch_left_half_done_is_reported_by_check_and_finished_by_the_next_lock(
    tmp_path: Path, wheels: Path
) -> None:
    """A named fake of what SIGKILL leaves between the two renames (the window is too narrow
    to hit on demand): the new pair as temp files, the manifest, one file already renamed."""
    import hashlib

    from agentguard.lock.switch import SWITCH

    project = write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])
    newer = write_project(tmp_path / "newer", ["agent-sdk==1.0.0", "mcp>=1,<3"])
    with serving(wheels) as index:
        assert lock(project, index.url).code == 1
        assert lock(newer, index.url).code == 1
        new = {n: (newer / n).read_bytes() for n in ("pylock.toml", "requirements.lock")}
        write_project(project, ["agent-sdk==1.0.0", "mcp>=1,<3"])  # the inputs of the new pair
        entries = {}
        for name, data in new.items():
            temp = f".{name}.agentguard-424242.tmp"
            (project / temp).write_bytes(data)
            entries[name] = {"temp": temp, "sha256": hashlib.sha256(data).hexdigest()}
        (project / SWITCH).write_text(json.dumps({"schema": 1, "files": entries}))
        (project / entries["requirements.lock"]["temp"]).rename(project / "requirements.lock")

        check = run_agentguard("lock", "--check", str(project), "--format", "json")
        check.check_no_crash()
        assert check.code == 3
        [source] = failed_sources(report_of(check))
        assert (source["kind"], source["name"], source["error_code"]) == (
            "lockfile",
            SWITCH,
            "lock-switch-interrupted",
        )

        run = lock(project, index.url)
    assert run.code == 1 and report_of(run)["complete"] is True
    assert report_of(run)["notes"][-1] == "The lock is up to date; files left untouched."
    assert {n: (project / n).read_bytes() for n in new} == new
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".")) == []
    check = run_agentguard("lock", "--check", str(project), "--format", "json")
    assert check.code == 1 and failed_sources(report_of(check)) == []


@pytest.mark.parametrize(
    "temp", ["../outside/victim", "/etc/passwd", ".pylock.toml.agentguard-1.tmp/../../x"]
)
def test_a_planted_switch_manifest_moves_nothing(
    tmp_path: Path, wheels: Path, project: Path, temp: str
) -> None:
    from agentguard.lock.switch import SWITCH

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("keep me")
    before = snapshot(outside)
    manifest = {"schema": 1, "files": {"pylock.toml": {"temp": temp, "sha256": "0" * 64}}}
    (project / SWITCH).write_text(json.dumps(manifest))
    with serving(wheels) as index:
        run = lock(project, index.url)
    assert run.code == 3
    [source] = failed_sources(report_of(run))
    assert (source["kind"], source["error_code"]) == ("lockfile", "lock-switch-interrupted")
    assert snapshot(outside) == before
    assert not (project / "pylock.toml").exists()

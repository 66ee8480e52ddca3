"""What runs when, and what a lock takes: `build = false` / --only-binary, and the cooldown
(`min-release-age`, with every locked release younger than seven days named).

Real resolver (uv); an sdist whose own build backend marks a file whenever it runs.
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.index_server import serving
from tests.lock.helpers import findings, run_json, write_project
from tests.wheelhouse import build_marking_sdist, build_wheel, write_simple_index

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.usefixtures("isolated_cache")


@pytest.fixture()
def sdist_index(tmp_path: Path) -> dict[str, Any]:
    wheels = tmp_path / "wheels"
    mark = tmp_path / "built.mark"
    build_wheel(wheels, "sdk", "1.0.0", ["buildme>=1"])
    build_marking_sdist(wheels, "buildme", "1.0", mark)
    return {"url": write_simple_index(wheels, tmp_path / "simple"), "mark": mark}


def test_check_never_builds_and_build_false_refuses_to(
    tmp_path: Path, sdist_index: dict[str, Any]
) -> None:
    mark: Path = sdist_index["mark"]
    url = sdist_index["url"]
    # `build = false` in [tool.agentguard]: the resolver is told to refuse sdists.
    policy = "\n[tool.agentguard]\nbuild = false\n"
    project = write_project(tmp_path / "bot", ["sdk==1.0.0"], extra=policy)
    code, report, _ = run_json("lock", str(project), "--index-url", url)
    assert code == 3
    [resolver] = [s for s in report["sources"] if s["kind"] == "resolver"]
    assert resolver["error_code"] == "sdist-only"
    assert not mark.exists()
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]

    # Without the policy, lock builds it as uv does (the sdist's code runs) and says so.
    write_project(project, ["sdk==1.0.0"])
    code, report, _ = run_json("lock", str(project), "--index-url", url)
    assert mark.exists(), report["sources"]
    assert [f["evidence"] for f in findings(report, "AG105")] == [{"package": "buildme"}]
    data = tomllib.loads((project / "pylock.toml").read_text())
    assert data["tool"]["agentguard"]["only-binary"] is False
    mark.unlink()

    # --only-binary on the command line does what the policy does.
    code, report, _ = run_json(
        "lock", str(project), "--index-url", url, "--only-binary", "--upgrade"
    )
    assert code == 3 and not mark.exists()

    # lock --check and check read files only: nothing is built, nothing runs.
    code, report, _ = run_json("lock", "--check", str(project))
    assert report["complete"] is True and findings(report, "AG103") == []
    code, report, _ = run_json("check", str(project))
    assert report["complete"] is True
    assert not mark.exists()


def _hours_ago(hours: int) -> str:
    when = dt.datetime.now(dt.timezone.utc) - dt.timedelta(hours=hours)
    return when.strftime("%Y-%m-%dT%H:%M:%S.000000Z")


def test_min_release_age_leaves_out_young_releases_and_the_report_names_them(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp-lite", "1.0.0")
    build_wheel(wheels, "mcp-lite", "1.1.0")
    with serving(wheels) as server:
        server.upload_times = {
            "mcp_lite-1.0.0-py3-none-any.whl": _hours_ago(24 * 30),
            "mcp_lite-1.1.0-py3-none-any.whl": _hours_ago(50),
        }
        plain = write_project(tmp_path / "plain", ["mcp-lite>=1"])
        code, report, _ = run_json("lock", str(plain), "--index-url", server.url)
        assert "mcp-lite==1.1.0" in (plain / "requirements.lock").read_text()
        [young] = findings(report, "AG106")
        assert young["severity"] == "medium"
        assert young["message"].startswith("mcp-lite==1.1.0 was uploaded 2 days 2 hours ago")
        assert (young["evidence"]["package"], young["evidence"]["version"]) == (
            "mcp-lite",
            "1.1.0",
        )
        assert report["facts"]["releases_younger_than_7_days"] == 1
        # lock --check names it too, from the upload times pylock.toml records.
        _, checked, _ = run_json("lock", "--check", str(plain))
        assert [f["evidence"]["version"] for f in findings(checked, "AG106")] == ["1.1.0"]

        for name, extra, flags in (
            ("flag", "", ("--min-release-age", "7d")),
            ("config", '\n[tool.agentguard]\nmin-release-age = "7d"\n', ()),
        ):
            project = write_project(tmp_path / name, ["mcp-lite>=1"], extra=extra)
            code, report, _ = run_json("lock", str(project), "--index-url", server.url, *flags)
            assert code == 0, report
            assert "mcp-lite==1.0.0" in (project / "requirements.lock").read_text()
            assert findings(report, "AG106") == []
            tool = tomllib.loads((project / "pylock.toml").read_text())["tool"]["agentguard"]
            assert tool["min-release-age"] == "7d"
            cutoff = dt.datetime.fromisoformat(tool["exclude-newer"].replace("Z", "+00:00"))
            assert abs(dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=7) - cutoff) < (
                dt.timedelta(minutes=10)
            )
            assert any(n.startswith("Cooldown (min-release-age 7d)") for n in report["notes"])


def test_a_bad_min_release_age_is_a_usage_error(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["mcp-lite>=1"])
    from tests.lock.helpers import run_cli

    proc = run_cli("lock", str(project), "--min-release-age", "soon")
    assert proc.returncode == 2 and "not a duration" in proc.stderr
    write_project(
        project, ["mcp-lite>=1"], extra='\n[tool.agentguard]\nmin-release-age = "a week"\n'
    )
    proc = run_cli("lock", str(project))
    assert proc.returncode == 2 and "min-release-age must be a duration" in proc.stderr


def _uv_project(root: Path, url: str, extra: str = "") -> Path:
    """A uv project (virtual) on the local index, first locked by `uv lock` itself."""
    import subprocess

    from agentguard.lock.backend import uv_binary

    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["mcp-lite>=1"]\n\n[tool.uv]\npackage = false\n\n'
        f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n{extra}',
        encoding="utf-8",
    )
    subprocess.run(
        [uv_binary(), "lock", "--python", sys.executable],
        cwd=root,
        capture_output=True,
        check=True,
        timeout=300,
    )
    return root


def test_a_uv_project_relock_leaves_out_releases_newer_than_the_cooldown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--min-release-age` (and `min-release-age` in [tool.agentguard]) reaches `uv lock` as
    `--exclude-newer` with the cut-off the requirements path computes, and the report says
    which: an upgrade does not take a release uploaded two days ago."""
    # the served index is the run's own (an index only the project names is AG107)
    monkeypatch.setenv("AGENTGUARD_INDEX_HOSTS", "127.0.0.1")
    import json

    from agentguard.lock_command import LockOptions, run_lock
    from agentguard.report.json_out import render_json

    wheels = tmp_path / "wheels"
    build_wheel(wheels, "mcp-lite", "1.0.0")
    with serving(wheels) as server:
        server.upload_times = {
            "mcp_lite-1.0.0-py3-none-any.whl": _hours_ago(24 * 30),
            "mcp_lite-1.1.0-py3-none-any.whl": _hours_ago(50),
        }
        policy = '\n[tool.agentguard]\nmin-release-age = "7d"\n'
        flag = _uv_project(tmp_path / "flag", server.url)
        config = _uv_project(tmp_path / "config", server.url, policy)
        plain = _uv_project(tmp_path / "plain", server.url)
        build_wheel(wheels, "mcp-lite", "1.1.0")  # released since the projects were locked

        _, report, _ = run_json("lock", str(plain), "--upgrade")  # no cooldown: it moves
        assert 'name = "mcp-lite"\nversion = "1.1.0"' in (plain / "uv.lock").read_text()
        assert "exclude_newer" not in report["facts"]
        assert "--exclude-newer" not in report["provenance"]["inputs"]["command"]

        # Through the CLI (the resolver started early) and in process (started by the command).
        code, by_flag, _ = run_json("lock", str(flag), "--upgrade", "--min-release-age", "7d")
        in_process, _ = run_lock(LockOptions(project=config, upgrade=True))
        by_config: dict[str, Any] = json.loads(render_json(in_process))
        for project, report in ((flag, by_flag), (config, by_config)):
            assert code == 0, report
            text = (project / "uv.lock").read_text()
            assert 'name = "mcp-lite"\nversion = "1.0.0"' in text, text
            cutoff = report["facts"]["exclude_newer"]
            when = dt.datetime.fromisoformat(cutoff.replace("Z", "+00:00"))
            assert abs(dt.datetime.now(dt.timezone.utc) - dt.timedelta(days=7) - when) < (
                dt.timedelta(minutes=10)
            )
            assert report["facts"]["min_release_age"] == "7d"
            assert f'exclude-newer = "{cutoff}"' in text  # uv's own record of it
            assert report["provenance"]["inputs"]["command"] == (
                f"uv lock --upgrade --exclude-newer {cutoff}"
            )
            [note] = [n for n in report["notes"] if n.startswith("Cooldown")]
            assert note.startswith(
                f"Cooldown (min-release-age 7d): files uploaded after {cutoff} were left out"
            )

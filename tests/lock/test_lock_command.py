"""`agentguard lock` end to end: the real resolver (uv) against a local index of real wheels."""

from __future__ import annotations

import hashlib
import platform
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from packaging.pylock import Pylock

from tests.lock.helpers import findings, run_cli, run_json, strip_volatile, write_project

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _lock(project: Path, index: dict[str, Any], *extra: str) -> tuple[int, dict[str, Any], str]:
    return run_json("lock", str(project), "--index-url", index["url"], *extra)


def test_lock_reports_the_incident_edge_whole(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    code, report, _ = _lock(project, agent_index)

    assert code == 1  # a high finding, --fail-on high by default
    mcp = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert [strip_volatile(f) for f in mcp] == [
        {
            "rule_id": "AG101",
            "title": "Dependency range admits more than one released major",
            "severity": "high",
            "confidence": "high",
            "message": "claude-agent-sdk==0.2.95 declares mcp>=1.0, which admits 2 released majors of mcp "
            "(1, 2); locked: mcp==2.1.0. The range has no upper bound, so every future major is "
            "admitted too.",
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
                "locked": ["2.1.0"],
                "locked_marker": None,
                "unbounded_above": True,
                "watched": True,
                "mitigated_by": [],
                "upstream_bound": {"specifier": "<2", "parent_versions": ["0.2.100"]},
                "uploaded": {"parent": None, "majors": {}},  # a file index gives no times
                "built_for": None,
                "first_fix_basis": "upstream-cap",
                "fix_set": "resolves",  # every first fix, resolved together with uv
            },
            "fix": {
                # claude-agent-sdk 0.2.100 (a later release than the locked one) says mcp<2;
                # the cap moves the lock off mcp 2: the fix names the command the gate needs.
                "description": "Add `mcp>=1.0,<2` to your requirements, then re-lock with "
                "`agentguard lock --allow-major mcp` (the lock moves mcp off 2.1.0, a major "
                "crossing the re-lock gate stops otherwise): a later release of "
                "claude-agent-sdk (0.2.100) declares mcp<2, the upstream's own word that mcp 2 "
                "broke it. Or `mcp>=2.0,<3` (the locked major) once your code has been tested "
                "against mcp 2.",
                "safe": False,
                "snippet": "mcp>=1.0,<2",
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]
    # The long tail (typing-x spans 1 and 2 through httpx-lite) is low, not high.
    tail = findings(report, "AG101")
    assert {(f["evidence"]["child"], f["severity"]) for f in tail} == {
        ("mcp", "high"),
        ("typing-x", "low"),
    }
    assert report["complete"] is True
    assert report["provenance"]["inputs"]["input_hash"].startswith("sha256:")
    assert {s["status"] for s in report["sources"]} == {"ok"}


def test_lock_pins_with_the_wheels_own_hashes(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    _lock(project, agent_index)
    wheels: Path = agent_index["wheels"]
    text = (project / "requirements.lock").read_text()
    for name, version in [("mcp", "2.1.0"), ("claude_agent_sdk", "0.2.95"), ("typing_x", "2.0.0")]:
        sha = _sha(wheels / f"{name}-{version}-py3-none-any.whl")
        assert f"{name.replace('_', '-')}=={version} \\\n    --hash=sha256:{sha}\n" in text
    assert f"--index-url {agent_index['url']}" in text

    data = tomllib.loads((project / "pylock.toml").read_text())
    lock = Pylock.from_dict(data)
    lock.validate()
    assert {(p.name, str(p.version)) for p in lock.packages} == {
        ("claude-agent-sdk", "0.2.95"),
        ("httpx-lite", "1.0.0"),
        ("mcp", "2.1.0"),
        ("typing-x", "2.0.0"),
    }
    tool = data["tool"]["agentguard"]
    assert tool["inputs"] == ["claude-agent-sdk==0.2.95"]
    assert tool["input-hash"].startswith("sha256:")
    assert tool["index-urls"] == [agent_index["url"]]
    assert {
        "parent": "claude-agent-sdk",
        "parent-version": "0.2.95",
        "child": "mcp",
        "specifier": ">=1.0",
        "majors-admitted": ["1", "2"],
    } in tool["edges"]
    assert tool["released-majors"]["mcp"] == ["0.9", "1", "2"]


def test_the_lock_installs_with_require_hashes(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    _lock(project, agent_index)
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(venv / "bin" / "python"),
            "install",
            "--no-cache-dir",
            "--isolated",
            "--require-hashes",
            "-r",
            str(project / "requirements.lock"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    installed = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import mcp; print(mcp.__version__)"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert installed.stdout.strip() == "2.1.0"


def test_the_projects_own_cap_mitigates_the_edge(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95", "mcp>=1.0,<2"])
    code, report, _ = _lock(project, agent_index)
    mcp = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert len(mcp) == 1
    assert mcp[0]["severity"] == "info"
    assert mcp[0]["evidence"]["mitigated_by"] == ["<2,>=1.0"]
    assert mcp[0]["evidence"]["locked"] == ["1.5.0"]
    assert mcp[0]["message"].endswith(
        "Mitigated: the project's own requirement mcp<2,>=1.0 holds one major."
    )
    assert code == 0  # only low/info remain


def test_a_cap_under_a_marker_mitigates_only_where_the_marker_holds(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    """`mcp>=2.0,<3 ; sys_platform == "win32"` caps mcp on Windows only: on Linux and macOS
    nothing holds claude-agent-sdk's `mcp>=1.0` to one major, so the high stays."""
    cap = 'mcp>=2.0,<3 ; sys_platform == "win32"'
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95", cap.replace('"', "'")])
    code, report, _ = _lock(project, agent_index)
    [mcp] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert mcp["severity"] == "high"
    assert mcp["evidence"]["mitigated_by"] == ["<3,>=2.0 ; sys_platform == 'win32'"]
    open_on = "linux/aarch64, linux/x86_64, linux/x86_64 (PyPy), macos/arm64, macos/x86_64"
    assert mcp["evidence"]["unmitigated_in"] == open_on
    assert mcp["message"].endswith(
        f"Not mitigated on {open_on}: the project's own requirement mcp<3,>=2.0 ; "
        "sys_platform == 'win32' holds one major only where its marker holds."
    )
    assert code == 1
    # The same cap for every platform mitigates everywhere (info, exit 0).
    write_project(project, ["claude-agent-sdk==0.2.95", "mcp>=2.0,<3 ; sys_platform != 'x'"])
    code, report, _ = _lock(project, agent_index)
    [mcp] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert mcp["severity"] == "info" and "unmitigated_in" not in mcp["evidence"]
    assert code == 0


def test_relock_that_would_cross_a_major_fails_and_leaves_files(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95", "mcp>=1,<2"])
    code, _, _ = _lock(project, agent_index)
    assert code == 0
    assert "mcp==1.5.0" in (project / "requirements.lock").read_text()

    # The cap is dropped: a plain re-lock keeps the locked version (the resolver prefers it).
    write_project(project, ["claude-agent-sdk==0.2.95"])
    code, report, _ = _lock(project, agent_index)
    assert "mcp==1.5.0" in (project / "requirements.lock").read_text()
    assert findings(report, "AG102") == []
    assert report["status"] == "written"  # the input hash changed: the files were rewritten

    before = {n: (project / n).read_bytes() for n in ("requirements.lock", "pylock.toml")}
    code, report, _ = _lock(project, agent_index, "--upgrade")
    assert (code, report["status"]) == (1, "refused")
    [crossing] = findings(report, "AG102")
    assert strip_volatile(crossing) == {
        "rule_id": "AG102",
        "title": "Re-lock would cross a major",
        "severity": "high",
        "confidence": "high",
        "message": "mcp would move from 1.5.0 to 2.1.0 (major 1 -> 2), allowed by: "
        "claude-agent-sdk==0.2.95 declares mcp>=1.0.",
        "locations": [{"dependency_path": ["project", "claude-agent-sdk==0.2.95", "mcp==2.1.0"]}],
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
            "description": "Review mcp 2, then re-run with `--allow-major mcp`; or add `mcp<2` to stay on "
            "the locked major.",
            "safe": False,
            "snippet": "mcp<2",
        },
        "ambiguous": False,
        "suppressed": None,
    }
    assert {n: (project / n).read_bytes() for n in before} == before
    assert "both lock files were left untouched" in " ".join(report["notes"])
    assert not list(project.glob(".*.tmp"))

    # --upgrade-package crosses the same way; a refusal is exit 1 whatever --fail-on says
    # (nothing was written: never a pass), and every format names it.
    code, report, _ = _lock(
        project, agent_index, "--upgrade-package", "mcp", "--fail-on", "critical"
    )
    assert (code, report["status"]) == (1, "refused") and findings(report, "AG102")
    assert {n: (project / n).read_bytes() for n in before} == before
    for fmt, shown in (
        ("text", "Status: refused (the re-lock was refused: nothing written; exit 1)"),
        ("sarif", '"status": "refused"'),
    ):
        proc = run_cli(
            "lock",
            str(project),
            "--index-url",
            agent_index["url"],
            "--upgrade",
            "--fail-on",
            "critical",
            "--format",
            fmt,
        )
        assert proc.returncode == 1 and shown in proc.stdout, proc.stdout
    # Findings below --fail-on on a lock that stands: exit 0, status up-to-date.
    code, report, _ = _lock(project, agent_index, "--fail-on", "critical")
    assert (code, report["status"]) == (0, "up-to-date")

    # A reviewed crossing goes through.
    code, report, _ = _lock(project, agent_index, "--upgrade", "--allow-major", "mcp")
    [allowed] = findings(report, "AG102")
    assert allowed["severity"] == "info"
    assert "mcp==2.1.0" in (project / "requirements.lock").read_text()


def test_relock_with_nothing_changed_is_byte_identical(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    _lock(project, agent_index)
    before = {n: (project / n).read_bytes() for n in ("requirements.lock", "pylock.toml")}
    _, report, _ = _lock(project, agent_index)
    assert {n: (project / n).read_bytes() for n in before} == before
    assert "The lock is up to date; files left untouched." in report["notes"]


def test_check_in_sync_out_of_sync_and_missing_hashes(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.100"])
    _lock(project, agent_index)
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 0, report
    # Only the long tail remains: httpx-lite declares typing-x>=1 (majors 1 and 2), low.
    assert [(f["rule_id"], f["evidence"]["child"], f["severity"]) for f in report["findings"]] == [
        ("AG101", "typing-x", "low")
    ]
    assert [s["name"] for s in report["sources"]] == [
        "pyproject.toml",
        "pylock.toml",
        "requirements.lock",
    ]

    write_project(project, ["claude-agent-sdk==0.2.100", "typing-x<2"])
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1
    assert [(f["rule_id"], f["evidence"]["file"]) for f in findings(report, "AG103")] == [
        ("AG103", "pylock.toml"),
        ("AG103", "requirements.lock"),
    ]

    write_project(project, ["claude-agent-sdk==0.2.100"])
    req = project / "requirements.lock"
    text = req.read_text()
    for name in ("claude-agent-sdk", "httpx-lite", "mcp"):
        text = re.sub(rf"({name}==\S+) \\\n(    --hash=\S+( \\)?\n)+", r"\1\n", text)
    req.write_text(text)
    code, report, _ = run_json("lock", "--check", str(project))
    unhashed = findings(report, "AG104")
    assert code == 1
    assert sorted(f["evidence"]["package"] for f in unhashed) == [
        "claude-agent-sdk",
        "httpx-lite",
        "mcp",
    ]
    assert all(
        f["locations"][0]["path"] == "requirements.lock" and f["locations"][0]["line"]
        for f in unhashed
    )


def test_check_reports_unmitigated_span_offline(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    _lock(project, agent_index)
    # No index at all now: --check must not need one.
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1
    [mcp] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert mcp["evidence"]["specifier"] == "<3,>=1.0"
    assert mcp["evidence"]["unbounded_above"] is False
    assert mcp["severity"] == "high"


def test_check_without_a_lock_is_out_of_sync(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    code, report, _ = run_json("lock", "--check", str(project))
    assert code == 1
    [f] = report["findings"]
    assert f["rule_id"] == "AG103" and "No lock" in f["message"]


def test_extras_and_dependency_groups(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    extra = (
        '\n[project.optional-dependencies]\nproto = ["mcp>=1,<2"]\n'
        '\n[dependency-groups]\ntyping = ["typing-x>=1,<2"]\ndev = [{include-group = "typing"}]\n'
    )
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"], extra=extra)
    code, report, _ = _lock(project, agent_index, "--extra", "proto", "--group", "dev")
    assert code == 0 and report["complete"] is True
    text = (project / "requirements.lock").read_text()
    assert "mcp==1.5.0" in text and "typing-x==1.0.0" in text
    data = tomllib.loads((project / "pylock.toml").read_text())
    assert data["tool"]["agentguard"]["selection"] == ["extra:proto", "group:dev"]


def test_requirements_in_projects(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    project = tmp_path / "bot"
    project.mkdir()
    (project / "base.in").write_text("httpx-lite>=1.0\n")
    (project / "requirements.in").write_text(
        "# the bot\n-r base.in\nclaude-agent-sdk==0.2.100  # pinned\n"
    )
    code, report, _ = _lock(project, agent_index)
    assert code == 0  # claude-agent-sdk 0.2.100 holds mcp to one major; typing-x is low
    assert report["provenance"]["inputs"]["input_source"] == "requirements.in"
    assert "claude-agent-sdk==0.2.100" in (project / "requirements.lock").read_text()


@pytest.mark.parametrize(
    ("pyproject", "message"),
    [
        ("[project\nname = 'x'", "pyproject.toml is not valid TOML"),
        ("[project]\nname='x'\ndependencies = ['claude-agent-sdk==']\n", "invalid requirement"),
        ("[project]\nname='x'\ndynamic = ['dependencies']\n", "declares dependencies as dynamic"),
    ],
)
def test_malformed_input_is_a_usage_error(tmp_path: Path, pyproject: str, message: str) -> None:
    project = tmp_path / "bot"
    project.mkdir()
    (project / "pyproject.toml").write_text(pyproject)
    proc = run_cli("lock", str(project))
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]


def test_unknown_package_is_a_failed_resolver_source(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["no-such-agent-package==1.0"])
    code, report, _ = _lock(project, agent_index)
    assert code == 3
    [resolver] = [s for s in report["sources"] if s["kind"] == "resolver"]
    assert resolver["status"] == "failed"
    assert resolver["error_code"] == "unknown-package"
    assert resolver["retryable"] is False
    assert report["findings"] == [] and report["complete"] is False
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]


def test_unreachable_index_is_incomplete_and_retryable(tmp_path: Path) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    code, report, _ = run_json("lock", str(project), "--index-url", "http://127.0.0.1:9/simple")
    assert code == 3
    [resolver] = [s for s in report["sources"] if s["kind"] == "resolver"]
    assert (resolver["status"], resolver["error_code"], resolver["retryable"]) == (
        "failed",
        "index-unreachable",
        True,
    )
    assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]


def test_pip_tools_backend_pins_the_same(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    a = write_project(tmp_path / "a", ["claude-agent-sdk==0.2.95"])
    b = write_project(tmp_path / "b", ["claude-agent-sdk==0.2.95"])
    _lock(a, agent_index)
    code, report, _ = _lock(b, agent_index, "--backend", "pip-tools")
    assert code == 1
    assert report["complete"] is True, report["sources"]
    assert report["provenance"]["inputs"]["backend"].startswith("pip-compile")

    def pins(p: Path) -> set[str]:
        return {
            ln.split(" ")[0]
            for ln in (p / "requirements.lock").read_text().splitlines()
            if "==" in ln and not ln.startswith("#")
        }

    assert (
        pins(a)
        == pins(b)
        == {"claude-agent-sdk==0.2.95", "httpx-lite==1.0.0", "mcp==2.1.0", "typing-x==2.0.0"}
    )
    assert [
        f["evidence"]["child"] for f in findings(report, "AG101") if f["severity"] == "high"
    ] == ["mcp"]

    # pip-compile resolved for this interpreter only: the lock says so, and a lock that does
    # not cover requires-python (">=3.10") is a finding, at lock time and in --check.
    here = f"{sys.version_info.major}.{sys.version_info.minor}"
    env = {
        "platform_machine": platform.machine(),
        "python_version": here,
        "sys_platform": sys.platform,
    }
    marker = " and ".join(f"{k} == '{v}'" for k, v in sorted(env.items()))
    assert (b / "requirements.lock").read_text().splitlines()[1] == (
        f"# For one environment only: {marker} (resolved for the Python that ran it)."
    )
    data = tomllib.loads((b / "pylock.toml").read_text())
    assert data["environments"] == [marker]
    assert data["tool"]["agentguard"]["environment"] == env
    others = [f"3.{m}" for m in range(10, 15) if f"3.{m}" != here]
    expected = {
        "file": "pylock.toml",
        "environment": env,
        "requires_python": ">=3.10",
        "not_covered": others,
    }
    assert [f["evidence"] for f in findings(report, "AG103")] == [expected]
    code, checked, _ = run_json("lock", "--check", str(b))
    [cover] = findings(checked, "AG103")
    assert (code, cover["evidence"]) == (1, expected)
    assert cover["message"] == (
        f"pylock.toml was resolved for one environment only ({marker}); requires-python >=3.10 "
        f"also admits Python {', '.join(others)}, where it may miss a dependency and `pip "
        "install --require-hashes` of it can fail."
    )
    assert not any("in sync" in n for n in checked["notes"])
    # The universal lock (uv) covers every Python: no such finding.
    _, checked, _ = run_json("lock", "--check", str(a))
    assert findings(checked, "AG103") == []
    # requires-python narrowed to this Python: the one-environment lock covers it.
    write_project(b, ["claude-agent-sdk==0.2.95"], requires_python=f"=={here}.*")
    code, report, _ = _lock(b, agent_index, "--backend", "pip-tools")
    assert findings(report, "AG103") == []


def test_the_projects_config_shapes_lock_findings(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    extra = '\n[tool.agentguard.deps]\nspan-accepted = ["typing-x"]\n\n[tool.agentguard]\nfail-on = "info"\n'
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.100"], extra=extra)
    code, report, _ = _lock(project, agent_index)
    [tail] = findings(report, "AG101")
    assert (tail["evidence"]["child"], tail["severity"]) == ("typing-x", "info")
    assert "Accepted by policy" in tail["message"]
    assert code == 1  # the configured fail-on (info) applies when --fail-on is not given
    code, _, _ = run_json("lock", "--check", str(project), "--fail-on", "high")
    assert code == 0


def test_check_uses_the_config_file_it_was_given(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    _lock(project, agent_index)
    config = tmp_path / "team.toml"
    config.write_text('[deps]\nspan-accepted = ["mcp"]\n')
    _, report, _ = run_json("check", str(project), "--config", str(config))
    [mcp] = [f for f in findings(report, "AG101") if f["evidence"]["child"] == "mcp"]
    assert mcp["severity"] == "info"
    assert "Accepted by policy" in mcp["message"]


def test_a_relock_keeping_every_pin_uses_the_analysis_made_while_resolving(
    tmp_path: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard import lock_command as command
    from agentguard.engine.lock import speculation
    from agentguard.lock import analysis
    from agentguard.report.json_out import report_to_json

    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95", "mcp>=1,<2"])
    code, _, _ = _lock(project, agent_index)
    assert code == 0
    real = analysis.analyse
    calls: list[tuple[str, ...]] = []

    def counting(pins: Any, *args: Any, **kwargs: Any) -> Any:
        pins = list(pins)
        calls.append(tuple(f"{p.name}=={p.version}" for p in pins))
        return real(pins, *args, **kwargs)

    monkeypatch.setattr(analysis, "analyse", counting)

    def relock(*extra: str) -> dict[str, Any]:
        calls.clear()
        opts = command.LockOptions(project=project, index_url=agent_index["url"])
        for flag in extra:
            opts = command.dataclasses.replace(opts, **{flag: True})
        report, _ = command.run_lock(opts)
        return report_to_json(report)

    # Nothing changed: one analysis, of the previous pins, made while the resolver ran.
    kept = relock()
    assert len(calls) == 1 and "mcp==1.5.0" in calls[0]
    assert "The lock is up to date; files left untouched." in kept["notes"]

    # The same re-lock without the speculation reports exactly the same.
    speculate = speculation.speculate
    monkeypatch.setattr(speculation, "speculate", lambda *_a, **_k: None)
    plain = relock()
    assert len(calls) == 1
    volatile = ("made_at",)
    for doc in (kept, plain):
        for key in volatile:
            doc["provenance"].pop(key, None)
    assert kept == plain
    monkeypatch.setattr(speculation, "speculate", speculate)

    # The pins change (the cap is dropped and mcp upgraded): the speculation is dropped and
    # the new pins are analysed, as a first lock would.
    write_project(project, ["claude-agent-sdk==0.2.95"])
    changed = relock("upgrade")
    assert len(calls) == 2 and "mcp==1.5.0" in calls[0] and "mcp==2.1.0" in calls[1]
    assert [f["rule_id"] for f in changed["findings"] if f["rule_id"] == "AG102"] == ["AG102"]


def test_a_stuck_speculation_does_not_hold_a_relock_whose_pins_changed(
    tmp_path: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    # The analysis of the previous pins runs beside the resolver against the index the
    # previous lock names; when that index hangs and the resolver returns other pins, the
    # run goes on without it.
    import threading
    import time

    from agentguard import lock_command as command
    from agentguard.engine.lock import speculation
    from agentguard.report.json_out import report_to_json

    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95", "mcp>=1,<2"])
    assert _lock(project, agent_index)[0] == 0
    release = threading.Event()

    def stuck(*_args: Any, **_kwargs: Any) -> None:
        release.wait(120)

    monkeypatch.setattr(speculation, "speculate", stuck)
    write_project(project, ["claude-agent-sdk==0.2.95"])
    started = time.monotonic()
    try:
        report, _ = command.run_lock(
            command.LockOptions(
                project=project,
                index_url=agent_index["url"],
                upgrade=True,
                allow_major=("mcp",),
            )
        )
        waited = time.monotonic() - started
    finally:
        release.set()
    assert waited < 60
    doc = report_to_json(report)
    [crossing] = [f for f in doc["findings"] if f["rule_id"] == "AG102"]
    assert crossing["severity"] == "info" and crossing["evidence"]["new"] == "2.1.0"
    assert "mcp==2.1.0" in (project / "requirements.lock").read_text()


def test_a_failed_speculation_is_redone_not_reported(
    tmp_path: Path, agent_index: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentguard import lock_command as command
    from agentguard.engine.lock import speculation

    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.189"])
    assert _lock(project, agent_index)[0] == 1  # the mcp range spans majors 1 and 2
    before = {n: (project / n).read_bytes() for n in ("requirements.lock", "pylock.toml")}

    def broken(*_args: Any, **_kwargs: Any) -> None:
        raise RuntimeError("the side analysis broke")

    monkeypatch.setattr(speculation, "speculate", broken)
    report, _ = command.run_lock(command.LockOptions(project=project, index_url=agent_index["url"]))
    assert report.complete
    assert "AG101" in {f.rule_id for f in report.findings}
    assert "The lock is up to date; files left untouched." in report.notes
    assert {n: (project / n).read_bytes() for n in before} == before

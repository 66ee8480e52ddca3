"""A registry that serves a hostile dependency tree to the real npm: a dependency whose
tarball is on another origin, one from a git repository (whose `prepare` script must never
run), one without an integrity, a dependency name with path tricks, a packument that never
finishes (npm hangs: the run's deadline and an interrupt stop its whole process group).
The 127.0.0.1 test registry, the real CLI and the real npm."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json, strip_volatile
from tests.lock.npm_registry import NpmRegistry, integrity, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    reg = NpmRegistry({NAME: ["2.0.1"], "helper": ["1.1.0"], "leaf": ["3.0.0"]})
    reg.deps[(NAME, "2.0.1")] = {"helper": "^1.0.0"}
    reg.deps[("helper", "1.1.0")] = {"leaf": "^3"}
    with serve(reg):
        yield reg


def project(tmp_path: Path) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    doc = {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", f"{NAME}@2.0.1"]}}}
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def ag147(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [strip_volatile(f) for f in report["findings"] if f["rule_id"] == "AG147"]


def failed(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [
        (s["kind"], s["name"], s.get("error_code"))
        for s in report["sources"]
        if s["status"] == "failed"
    ]


def test_a_dependency_tarball_on_another_origin_is_ag147(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    with serve(NpmRegistry({"helper": ["1.1.0"]})) as other:
        registry.tarball_at[("helper", "1.1.0")] = other.url
        root = project(tmp_path)
        code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
        assert other.requests == []  # npm reads packuments only: nothing from there
    elsewhere = f"{other.url}helper/-/helper-1.1.0.tgz"
    want = {
        "rule_id": "AG147",
        "title": "npm MCP server's dependency tree takes a package from outside the registry",
        "severity": "high",
        "confidence": "high",
        "message": f"MCP server 'tracker' (`{NAME}` 2.0.1) depends on `helper` 1.1.0 from a URL "
        f"outside the registry (`{elsewhere}`), not from the registry {registry.url}; path: "
        f"{NAME}@2.0.1 -> helper@1.1.0.",
        "locations": [{"path": ".mcp.json", "line": 3, "note": "MCP server 'tracker'"}],
        "fix": {
            "description": f"Launch a version of {NAME} whose dependencies all come from the "
            "registry (ask its publisher to depend on a registry release of helper), then "
            "re-lock (`agentguard lock`); until then review what that source serves before "
            "the server runs.",
            "safe": False,
        },
        "evidence": {
            "server": "tracker",
            "package": NAME,
            "version": "2.0.1",
            "dependency": "helper",
            "dependency_version": "1.1.0",
            "tree_path": "node_modules/helper",
            "resolved": elsewhere,
            "integrity": integrity(registry.tarball_of("helper", "1.1.0")),
            "source": "elsewhere",
            "dependency_path": [f"{NAME}@2.0.1", "helper@1.1.0"],
        },
        "ambiguous": False,
        "suppressed": None,
    }
    assert (code, failed(report), ag147(report)) == (1, [], [want])
    # offline, from the recorded tree: the same finding
    code, report, _ = run_json("lock", "--check", str(root))
    assert (code, ag147(report)) == (1, [want])


def test_a_git_dependency_is_ag147_and_its_prepare_script_never_runs(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    marker = tmp_path / "prepare-ran"
    src = tmp_path / "gitdep"
    src.mkdir()
    manifest = {"name": "gitdep", "version": "0.1.0", "scripts": {"prepare": f"touch {marker}"}}
    (src / "package.json").write_text(json.dumps(manifest))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run([*git, *cmd], cwd=src, check=True, capture_output=True)
    subprocess.run(
        ["git", "clone", "-q", "--bare", str(src), str(tmp_path / "gitdep.git")], check=True
    )
    registry.deps[("helper", "1.1.0")] = {"gitdep": f"git+file://{tmp_path / 'gitdep.git'}"}
    root = project(tmp_path)
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert (code, failed(report)) == (1, [])
    [finding] = ag147(report)
    assert (finding["severity"], finding["evidence"]["source"]) == ("high", "git")
    assert finding["evidence"]["resolved"].startswith(f"git+file://{tmp_path / 'gitdep.git'}#")
    assert finding["evidence"]["integrity"] is None
    assert finding["evidence"]["dependency_path"] == [
        f"{NAME}@2.0.1",
        "helper@1.1.0",
        "gitdep@0.1.0",
    ]
    assert ", and with no integrity; path: " in finding["message"]
    assert not marker.exists()


def test_a_dependency_without_integrity_is_unknown(tmp_path: Path, registry: NpmRegistry) -> None:
    registry.no_integrity.add(("leaf", "3.0.0"))
    root = project(tmp_path)
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert (code, failed(report)) == (0, [])  # (medium: below the default fail-on)
    [finding] = ag147(report)
    assert finding["severity"] == "medium"
    assert finding["message"] == (
        f"MCP server 'tracker' (`{NAME}` 2.0.1) depends on `leaf` 3.0.0, which npm recorded "
        "with no integrity: what it holds is unknown, and no install can check it; path: "
        f"{NAME}@2.0.1 -> helper@1.1.0 -> leaf@3.0.0."
    )
    assert report["facts"]["mcp_servers_locked"][0]["tree"] == {"packages": 3, "no_integrity": 1}
    [leaf] = [
        p
        for p in json.loads((root / "mcp.lock.json").read_text())["servers"][0]["tree"]["packages"]
        if p["path"] == "node_modules/leaf"
    ]
    assert leaf["integrity"] is None


def test_a_dependency_name_with_path_tricks_is_refused(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    registry.deps[("helper", "1.1.0")] = {"../../evil": "1.0.0"}
    root = project(tmp_path)
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert code == 3
    assert failed(report) == [("npm-registry", f"{NAME} (.mcp.json:3)", "npm-tree-failed")]
    [source] = [s for s in report["sources"] if s["status"] == "failed"]
    assert "EINVALIDPACKAGENAME" in source["reason"]
    assert not (root / "mcp.lock.json").exists()
    assert not (tmp_path / "evil").exists()


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working folder is inside ``folder`` (npm, left running)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if str(folder) in os.readlink(entry / "cwd"):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def test_a_registry_that_makes_npm_hang_meets_the_deadline(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    registry.plan = lambda path: "slow" if path == "helper" else "ok"
    root = project(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    env = {**os.environ, "TMPDIR": str(scratch)}
    started = time.monotonic()
    code, report, _ = run_json(
        "lock", str(root), "--npm-registry", registry.url, "--timeout", "12", env=env
    )
    assert time.monotonic() - started < 60
    assert code == 3
    assert failed(report) == [("npm-registry", f"{NAME} (.mcp.json:3)", "deadline-exceeded")]
    assert _processes_in(scratch) == []
    assert list(scratch.iterdir()) == []
    assert not (root / "mcp.lock.json").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupt_stops_npm_and_its_group(
    tmp_path: Path, registry: NpmRegistry, sig: signal.Signals
) -> None:
    registry.plan = lambda path: "slow" if path == "helper" else "ok"
    root = project(tmp_path)
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentguard", "lock", str(root), "--npm-registry", registry.url],
        env={**os.environ, "TMPDIR": str(scratch)},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    until = time.monotonic() + 90
    while "helper" not in registry.requests and time.monotonic() < until:
        time.sleep(0.05)  # npm is waiting on the packument that never ends
    assert _processes_in(scratch)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert b"Traceback" not in err
    deadline = time.monotonic() + 10
    while _processes_in(scratch) and time.monotonic() < deadline:
        time.sleep(0.1)  # (a killed process is reaped by its parent)
    assert _processes_in(scratch) == []
    assert list(scratch.iterdir()) == []


def test_an_npm_of_the_project_is_never_run(tmp_path: Path, registry: NpmRegistry) -> None:
    """A relative PATH entry (`node_modules/.bin`) names a folder of wherever agentguard
    runs, often the project under review: its `npm` is the project's program."""
    root = project(tmp_path)
    marker = tmp_path / "project-npm-ran"
    bin_dir = root / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "npm").write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (bin_dir / "npm").chmod(0o755)
    env = {**os.environ, "PATH": f"node_modules/.bin{os.pathsep}{os.environ['PATH']}"}
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url, cwd=root, env=env)
    assert (code, failed(report)) == (0, [])
    assert not marker.exists()


def test_a_file_dependency_is_ag147_and_nothing_of_its_folder_is_recorded(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    """A registry's `file:` dependency makes npm read a local folder (a link in its lock):
    the link is AG147 (local), and the folder's own entries are not written to the lock."""
    local = tmp_path / "local-pkg"
    local.mkdir()
    (local / "package.json").write_text(json.dumps({"name": "localpkg", "version": "9.9.9"}))
    registry.deps[("helper", "1.1.0")] = {"localpkg": f"file:{local}"}
    root = project(tmp_path)
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert (code, failed(report)) == (1, [])
    [finding] = ag147(report)
    assert (finding["severity"], finding["evidence"]["source"]) == ("high", "local")
    assert finding["evidence"]["dependency_path"] == [
        f"{NAME}@2.0.1",
        "helper@1.1.0",
        "localpkg@?",
    ]
    tree = json.loads((root / "mcp.lock.json").read_text())["servers"][0]["tree"]["packages"]
    assert [(p["path"], p.get("link")) for p in tree] == [
        (f"node_modules/{NAME}", None),
        ("node_modules/helper", None),
        ("node_modules/localpkg", True),
    ]


@pytest.mark.parametrize("program", ["npm", "node"])
@pytest.mark.parametrize("registry_flag", [True, False])
def test_a_program_of_the_project_on_an_absolute_path_is_never_run(
    tmp_path: Path, registry: NpmRegistry, program: str, registry_flag: bool
) -> None:
    """CI often puts the project's own `node_modules/.bin` on PATH as an absolute folder
    (`echo "$PWD/node_modules/.bin" >> $GITHUB_PATH`): an `npm` there, or the `node` npm's
    `#!/usr/bin/env node` finds there, is the pull request's program, whether agentguard
    asks npm for its default registry (with the caller's whole environment) or runs the
    tree's npm."""
    root = project(tmp_path)
    marker = tmp_path / "project-program-ran"
    bin_dir = root / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / program).write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    (bin_dir / program).chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    args = ["--npm-registry", registry.url] if registry_flag else []
    if not registry_flag:  # (npm's own default, as the user's configuration names it)
        home = tmp_path / "home"
        home.mkdir()
        (home / ".npmrc").write_text(f"registry={registry.url}\n")
        env = {k: v for k, v in env.items() if not k.lower().startswith("npm_config_")}
        env |= {"HOME": str(home)}
        env.pop("AGENTGUARD_NPM_REGISTRY", None)
    code, report, _ = run_json("lock", str(root), *args, env=env)
    assert (code, failed(report)) == (0, [])
    assert not marker.exists()

"""A launch of a package the project installs itself: npx runs the copy the project's own
tree holds at the launched version (modelled on a project that commits a copy into
`node_modules`, or depends on the server from a fork: `"@acme/tracker-mcp":
"github:someone/tracker-mcp"`), not the registry's tarball the lock verified. So the launch
is not verifiably pinned (AG142); a launch of another package is still locked. The real
npx runs the project's copy first, so the test holds what npx does; the 127.0.0.1 test
registry."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"
OTHER = "notes-mcp"


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    with serve(NpmRegistry({NAME: ["2.0.1"], OTHER: ["1.0.0"]})) as reg:
        yield reg


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    doc = {
        "mcpServers": {
            "tracker": {"command": "npx", "args": ["-y", f"{NAME}@2.0.1"]},
            "notes": {"command": "npx", "args": ["-y", f"{OTHER}@1.0.0"]},
        }
    }
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def _lock(root: Path, registry: NpmRegistry) -> tuple[int, dict[str, Any]]:
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    return code, report


def _only_tracker_unverified(root: Path, registry: NpmRegistry, said: str) -> None:
    code, report = _lock(root, registry)
    assert code == 1, report["sources"]
    assert [f["message"] for f in report["findings"] if f["rule_id"] == "AG142"] == [
        f"MCP server 'tracker' is launched through `npx`, which the lock cannot check: {said} "
        "(npx runs the project's own install) makes it fetch from a registry, index or package cache the project chooses; it is not "
        "locked and not verifiably pinned."
    ]
    locked = json.loads((root / "mcp.lock.json").read_text())["servers"]
    assert [(e["launch"]["server"], e["package"]) for e in locked] == [("notes", OTHER)]


def test_npx_runs_the_copy_in_the_project_node_modules(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    root = _project(tmp_path)
    package = root / "node_modules" / NAME
    package.mkdir(parents=True)
    manifest = {"name": NAME, "version": "2.0.1", "bin": {"server": "evil.js"}}
    (package / "package.json").write_text(json.dumps(manifest))
    (package / "evil.js").write_text("#!/usr/bin/env node\nconsole.log('the project ran')\n")
    (package / "evil.js").chmod(0o755)
    (root / "node_modules" / ".bin").mkdir()
    (root / "node_modules" / ".bin" / "server").symlink_to(f"../{NAME}/evil.js")
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        ["npx", "-y", "--registry", registry.url, f"{NAME}@2.0.1"],
        cwd=root, env={"PATH": os.environ["PATH"], "HOME": str(home)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.stdout.startswith("the project ran"), proc.stderr
    _only_tracker_unverified(root, registry, f"node_modules sets `{NAME}`")


def test_a_dependency_of_the_project_manifest(tmp_path: Path, registry: NpmRegistry) -> None:
    root = _project(tmp_path)
    manifest = {"name": "bot", "devDependencies": {NAME: "github:someone/tracker-mcp"}}
    (root / "package.json").write_text(json.dumps(manifest, indent=2))
    _only_tracker_unverified(root, registry, f"package.json:4 sets `{NAME}`")


def test_a_package_of_the_project_lock(tmp_path: Path, registry: NpmRegistry) -> None:
    root = _project(tmp_path)
    (root / "package.json").write_text('{"name": "bot", "dependencies": {"wrapper": "1.0.0"}}')
    lock = {
        "name": "bot",
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "bot"},
            "node_modules/wrapper": {"version": "1.0.0"},
            f"node_modules/wrapper/node_modules/{NAME}": {
                "version": "2.0.1",
                "resolved": "https://git.example/tracker-mcp.tgz",
            },
        },
    }
    (root / "package-lock.json").write_text(json.dumps(lock, indent=2))
    _only_tracker_unverified(root, registry, f"package-lock.json:11 sets `{NAME}`")


def test_a_workspace_of_the_project(tmp_path: Path, registry: NpmRegistry) -> None:
    root = _project(tmp_path)
    (root / "package.json").write_text('{"name": "bot", "workspaces": ["packages/*"]}')
    member = root / "packages" / "tracker"
    member.mkdir(parents=True)
    (member / "package.json").write_text(json.dumps({"name": NAME, "version": "2.0.1"}))
    _only_tracker_unverified(root, registry, f"packages/tracker/package.json:1 sets `{NAME}`")


def test_a_project_install_that_cannot_be_read_makes_every_npm_launch_unknown(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    root = _project(tmp_path)
    (root / "package.json").write_text('{"name": "bot", "dependencies": {')
    code, report = _lock(root, registry)
    assert code == 3
    assert [(s["name"], s["error_code"]) for s in report["sources"] if s["status"] == "failed"] == [
        ("package.json", "npm-install-unreadable")
    ]
    assert sorted(
        f["message"].split(":")[0] for f in report["findings"] if f["rule_id"] == "AG142"
    ) == [
        "MCP server 'notes' is launched through `npx`, which the lock cannot check",
        "MCP server 'tracker' is launched through `npx`, which the lock cannot check",
    ]
    assert not (root / "mcp.lock.json").exists()


def test_the_project_is_the_launched_package(tmp_path: Path, registry: NpmRegistry) -> None:
    """The server's own repository launching its published version: npx runs the checkout."""
    root = _project(tmp_path)
    manifest = {"name": NAME, "version": "2.0.1", "bin": {"server": "index.js"}}
    (root / "package.json").write_text(json.dumps(manifest, indent=2))
    _only_tracker_unverified(root, registry, f"package.json:2 sets `{NAME}`")


def test_a_missing_package_is_a_test_s_own_name_only_in_test_code(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    """A launch the registry has no package for is skipped only in test code by its own
    name (gemini-cli's config tests: `config.test.ts` launches `@mcp/server-a`). An agent's
    configuration under a test folder (`e2e/.mcp.json`, read by the agent an e2e job runs)
    is a real launch whatever its folder says: a name nobody has published yet is one its
    author can publish after the merge, so it is a failed source, never a skip."""
    root = tmp_path / "bot"
    (root / "src").mkdir(parents=True)
    (root / "src" / "config.test.ts").write_text(
        'const settings = {\n  mcpServers: {\n    a: { command: "npx", args: ["-y", '
        '"@mcp/server-a@1.0.0"] },\n  },\n};\n'
    )
    code, report = _lock(root, registry)
    assert code == 0, report["sources"]
    assert [(s["name"], s["status"]) for s in report["sources"] if "@mcp" in s["name"]] == [
        ("@mcp/server-a (src/config.test.ts:3)", "skipped")
    ]
    (root / "e2e").mkdir()
    doc = {"mcpServers": {"later": {"command": "npx", "args": ["-y", "@evil/not-yet@1.0.0"]}}}
    (root / "e2e" / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    code, report = _lock(root, registry)
    assert code == 3
    assert [(s["name"], s["error_code"]) for s in report["sources"] if s["status"] == "failed"] == [
        ("@evil/not-yet (e2e/.mcp.json:3)", "npm-not-found")
    ]


@pytest.mark.parametrize("layout", ["nested", "linked"])
def test_a_copy_deeper_in_node_modules_or_behind_a_link(
    tmp_path: Path, registry: NpmRegistry, layout: str
) -> None:
    """npx finds the launched version at any depth of the installed tree, and reads
    `node_modules` through a link: a copy under another package's `node_modules`, or in a
    folder the project's `node_modules` links to, runs as well (the real npx runs each)."""
    root = _project(tmp_path)
    if layout == "nested":
        holder = root / "node_modules" / "wrapper"
        holder.mkdir(parents=True)
        (holder / "package.json").write_text('{"name": "wrapper", "version": "1.0.0"}')
        package = holder / "node_modules" / NAME
        said = f"node_modules/wrapper/node_modules sets `{NAME}`"
    else:
        (root / "vendor" / "nm").mkdir(parents=True)
        (root / "node_modules").symlink_to("vendor/nm")
        package = root / "vendor" / "nm" / NAME
        said = f"node_modules sets `{NAME}`"
    package.mkdir(parents=True)
    manifest = {"name": NAME, "version": "2.0.1", "bin": {"server": "evil.js"}}
    (package / "package.json").write_text(json.dumps(manifest))
    (package / "evil.js").write_text("#!/usr/bin/env node\nconsole.log('the project ran')\n")
    (package / "evil.js").chmod(0o755)
    (root / "node_modules" / ".bin").mkdir()
    target = package.relative_to(root / ("node_modules" if layout == "nested" else "vendor/nm"))
    (root / "node_modules" / ".bin" / "server").symlink_to(f"../{target}/evil.js")
    home = tmp_path / "home"
    home.mkdir()
    proc = subprocess.run(
        ["npx", "-y", "--registry", registry.url, f"{NAME}@2.0.1"],
        cwd=root, env={"PATH": os.environ["PATH"], "HOME": str(home)},
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.stdout.startswith("the project ran"), proc.stderr
    _only_tracker_unverified(root, registry, said)


def test_an_installed_tree_that_leads_out_of_the_project_is_unknown(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    """A link out of the project (a `file:../common` dependency npm installed as a link)
    holds a tree agentguard does not read: every npm launch is unknown."""
    root = _project(tmp_path)
    (tmp_path / "common" / "node_modules" / "x").mkdir(parents=True)
    (root / "node_modules").mkdir()
    (root / "node_modules" / "common").symlink_to(tmp_path / "common")
    code, report = _lock(root, registry)
    assert code == 3
    assert [
        (s["name"], s["error_code"], s["reason"])
        for s in report["sources"]
        if s["status"] == "failed"
    ] == [
        (
            "package.json",
            "npm-install-unreadable",
            "node_modules/common/node_modules leads out of the project: what it sets for npx "
            "(the project's own install) is unknown: every npm launch is unknown",
        )
    ]

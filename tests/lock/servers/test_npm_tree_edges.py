"""A tree's edges are what `npm ci` resolves again: it installs the locked package at a
path only while that package satisfies every edge to it, and an edge it does not satisfy
(or whose package the tree lacks) is fetched from the edge's own spec, a git repository or
a URL included, and installed when its version matches (npm ci compares versions only).
So a pull request that edits one dependency spec of the recorded tree (the digest
recomputed) must not read as a tree: `lock --check` reports it (AG142), a re-lock does not
keep it, and `--export-npm` never writes it. The real CLI, the real npm and git, the
127.0.0.1 test registry."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.facts.npm_tree import tree_digest
from agentguard.lock.servers.tree_lock import from_lock
from tests.lock.helpers import run_json
from tests.lock.npm_registry import NpmRegistry, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"
SERVER = f"node_modules/{NAME}"


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    reg = NpmRegistry({NAME: ["2.0.1"], "helper": ["1.1.0"], "leaf": ["3.0.0"]})
    reg.deps[(NAME, "2.0.1")] = {"helper": "^1.0.0"}
    reg.deps[("helper", "1.1.0")] = {"leaf": "^3"}
    with serve(reg):
        yield reg


@pytest.fixture()
def other() -> Iterator[NpmRegistry]:
    """Another origin, serving a `helper` 1.1.0 of other content (the same version)."""
    reg = NpmRegistry({"helper": ["1.1.0"], "evil": ["1.1.0"]})
    reg.replaced.add(("helper", "1.1.0"))
    with serve(reg):
        yield reg


def _git_helper(tmp_path: Path) -> Path:
    """A git repository holding a `helper` 1.1.0 of its own (with a `prepare` script)."""
    src = tmp_path / "helper-src"
    src.mkdir()
    manifest = {
        "name": "helper",
        "version": "1.1.0",
        "scripts": {"prepare": f"touch {tmp_path / 'prepare-ran'}"},
    }
    (src / "package.json").write_text(json.dumps(manifest))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t.invalid"]
    for cmd in (["init", "-q"], ["add", "."], ["commit", "-qm", "x"]):
        subprocess.run([*git, *cmd], cwd=src, check=True, capture_output=True)
    bare = tmp_path / "helper.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(src), str(bare)], check=True)
    return bare


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    doc = {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", f"{NAME}@2.0.1"]}}}
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def _edit_tree(root: Path, edit: Callable[[dict[str, dict[str, Any]]], None]) -> None:
    """Edit the recorded tree's packages (by path) and recompute its digest: a tree as
    consistent with itself as a pull request can make it."""
    data = json.loads((root / "mcp.lock.json").read_text())
    tree = data["servers"][0]["tree"]
    by_path = {p["path"]: p for p in tree["packages"]}
    edit(by_path)
    tree["packages"] = sorted(by_path.values(), key=lambda p: p["path"])
    tree["digest"] = tree_digest(from_lock(tree, "tree").packages)
    (root / "mcp.lock.json").write_text(json.dumps(data, indent=2) + "\n")


def _npm_ci(folder: Path, reg: NpmRegistry, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "npm_config_registry": reg.url}
    env["npm_config_cache"] = str(tmp_path / "npm-cache")
    return subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


EDITS: dict[str, Callable[[NpmRegistry, Path], Callable[[dict[str, dict[str, Any]]], None]]] = {
    # the server's edge to helper names a git repository (helper stays the registry's)
    "git": lambda other, git: (
        lambda t: t[SERVER].update({"dependencies": {"helper": f"git+file://{git}"}})
    ),
    # ... a tarball on another origin
    "tarball": lambda other, git: (
        lambda t: t[SERVER].update(
            {"dependencies": {"helper": f"{other.url}helper/-/helper-1.1.0.tgz"}}
        )
    ),
    # ... a registry alias of another package at the same version
    "alias": lambda other, git: (
        lambda t: t[SERVER].update({"dependencies": {"helper": "npm:evil@1.1.0"}})
    ),
    # an edge to a package the tree does not hold
    "missing": lambda other, git: (
        lambda t: t["node_modules/helper"].update(
            {"dependencies": {"leaf": "^3", "evil": f"{other.url}evil/-/evil-1.1.0.tgz"}}
        )
    ),
}


@pytest.mark.parametrize("kind", sorted(EDITS))
def test_an_edited_edge_is_no_tree_and_never_reaches_npm_ci(
    tmp_path: Path, registry: NpmRegistry, other: NpmRegistry, kind: str
) -> None:
    git = _git_helper(tmp_path)
    root = _project(tmp_path)
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url)
    assert code == 0
    good = (root / "mcp.lock.json").read_text()
    _edit_tree(root, EDITS[kind](other, git))

    # offline: the tree does not agree with itself
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 1
    [finding] = [f for f in report["findings"] if f["rule_id"] == "AG142"]
    [said] = finding["evidence"]["tree"]
    assert "npm ci would resolve it again from" in said, said

    # a re-lock does not keep it (npm resolves the tree again), and the kit is the registry's
    kit = tmp_path / "kit"
    code, report, _ = run_json(
        "lock", str(root), "--npm-registry", registry.url, "--export-npm", str(kit)
    )
    assert code == 0, report["sources"]
    assert (root / "mcp.lock.json").read_text() == good
    folder = kit / "acme__tracker-mcp-2.0.1"
    exported = json.loads((folder / "package-lock.json").read_text())["packages"]
    assert exported[SERVER]["dependencies"] == {"helper": "^1.0.0"}
    proc = _npm_ci(folder, registry, tmp_path)
    assert proc.returncode == 0, proc.stderr
    helper = json.loads((folder / "node_modules" / "helper" / "package.json").read_text())
    assert (helper["name"], helper["version"], "scripts" in helper) == ("helper", "1.1.0", False)
    assert not (folder / "node_modules" / "evil").exists()
    assert other.requests == []
    assert not (tmp_path / "prepare-ran").exists()


def test_each_tree_package_is_put_back_on_its_own_line_and_only_its_own() -> None:
    """The placeholders carry this writer's nonce; a string of the lock that looks like one
    with another nonce (a server's tool description) is left as it is. (One pattern for
    every nonce: a pattern that held it was a new text on each run.)"""
    import json

    from agentguard.lock.servers.tree_lock import OneLine

    writer = OneLine()
    entry = {"tree": {"packages": [{"name": "a"}, {"name": "b"}]}}
    marked = writer.mark(entry)
    other = f"tree-package-{'0' * 32}-0"
    text = json.dumps({"e": marked, "description": other})
    filled = writer.fill(text)
    assert json.loads(filled) == {"e": entry, "description": other}
    assert filled.count('{"name": "a"}') == 1 and filled.count('{"name": "b"}') == 1

"""Each npm MCP server's own dependency tree in `mcp.lock.json`: the real CLI, the real npm
(`npm install --package-lock-only` in a scratch folder) and the 127.0.0.1 test registry
serving real packuments and tarballs with dependencies. Recorded on a lock, kept (no npm
run, the same bytes) on a re-lock of unchanged inputs, re-resolved when the server moves,
checked offline by `lock --check`, and installed exactly by `npm ci` from `--export-npm`."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agentguard.facts.npm_tree import TreePackage, tree_digest
from tests.lock.helpers import run_cli, run_json, strip_volatile
from tests.lock.npm_registry import NpmRegistry, integrity, serve

pytestmark = pytest.mark.usefixtures("isolated_cache")

NAME = "@acme/tracker-mcp"
BIN = '{"server": "index.js"}'
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[3] / "agentguard" / "schemas" / "mcp-lock.json").read_text()
)


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    reg = NpmRegistry({NAME: ["2.0.1"], "helper": ["1.0.0", "1.1.0"], "leaf": ["3.0.0"]})
    reg.deps[(NAME, "2.0.1")] = {"helper": "^1.0.0"}
    reg.deps[("helper", "1.1.0")] = {"leaf": "^3"}
    with serve(reg):
        yield reg


def project(tmp_path: Path, spec: str = f"{NAME}@2.0.1") -> Path:
    root = tmp_path / "bot"
    root.mkdir(exist_ok=True)
    doc = {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", spec]}}}
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    return root


def lock(root: Path, reg: NpmRegistry, *extra: str) -> tuple[int, dict[str, Any]]:
    code, report, _ = run_json("lock", str(root), "--npm-registry", reg.url, *extra)
    return code, report


def entry(root: Path) -> dict[str, Any]:
    [one] = json.loads((root / "mcp.lock.json").read_text())["servers"]
    return one


def pkg(reg: NpmRegistry, name: str, version: str, **meta: str) -> TreePackage:
    base = name.rsplit("/", 1)[-1]
    return TreePackage(
        f"node_modules/{name}",
        version,
        f"{reg.url}{name}/-/{base}-{version}.tgz",
        integrity(reg.tarball_of(name, version)),
        tuple(sorted(meta.items(), key=lambda kv: ["bin", "dependencies"].index(kv[0]))),
    )


def failed(report: dict[str, Any]) -> list[tuple[str, str, str | None]]:
    return [
        (s["kind"], s["name"], s.get("error_code"))
        for s in report["sources"]
        if s["status"] == "failed"
    ]


def test_the_tree_is_recorded_kept_and_checked(tmp_path: Path, registry: NpmRegistry) -> None:
    root = project(tmp_path)
    code, report = lock(root, registry)
    assert (code, failed(report)) == (0, [])
    packages = [
        pkg(registry, NAME, "2.0.1", bin=BIN, dependencies='{"helper": "^1.0.0"}'),
        pkg(registry, "helper", "1.1.0", bin=BIN, dependencies='{"leaf": "^3"}'),
        pkg(registry, "leaf", "3.0.0", bin=BIN),
    ]
    assert entry(root)["tree"] == {
        "lockfile-version": 3,
        "digest": tree_digest(packages),
        "packages": [p.as_json() for p in packages],
    }
    text = (root / "mcp.lock.json").read_text()
    assert json.loads(text)["lock-version"] == 3
    jsonschema.validate(json.loads(text), SCHEMA)
    # one package a line: a moved dependency is one changed line of the diff
    assert '      {"path": "node_modules/helper", "version": "1.1.0", ' in text
    assert report["facts"]["mcp_servers_locked"][0]["tree"] == {"packages": 3, "no_integrity": 0}

    # a re-lock of unchanged inputs: no npm run (npm alone reads helper's packument), the
    # same bytes
    before = (root / "mcp.lock.json").read_bytes()
    registry.requests.clear()
    code, report = lock(root, registry)
    assert (code, failed(report)) == (0, [])
    assert registry.requests == [NAME, f"{NAME}/-/tracker-mcp-2.0.1.tgz"]
    assert (root / "mcp.lock.json").read_bytes() == before

    # offline: the tree is there and well-formed
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 0, report["findings"]

    # the server moves: its tree is resolved again (2.1.0 depends on leaf alone)
    registry.publish(NAME, "2.1.0")
    registry.deps[(NAME, "2.1.0")] = {"leaf": "3.0.0"}
    (root / ".mcp.json").write_text((root / ".mcp.json").read_text().replace("2.0.1", "2.1.0"))
    code, report = lock(root, registry)
    assert (code, failed(report)) == (0, [])
    assert [p["path"] for p in entry(root)["tree"]["packages"]] == [
        f"node_modules/{NAME}",
        "node_modules/leaf",
    ]


def test_upgrade_resolves_the_tree_again(tmp_path: Path, registry: NpmRegistry) -> None:
    root = project(tmp_path)
    lock(root, registry)
    registry.publish("helper", "1.2.0")
    code, _ = lock(root, registry)  # kept: the server did not move
    assert [p["version"] for p in entry(root)["tree"]["packages"]][1] == "1.1.0"
    code, report = lock(root, registry, "--upgrade-package", NAME)
    assert (code, failed(report)) == (0, [])
    assert [p["version"] for p in entry(root)["tree"]["packages"]] == ["2.0.1", "1.2.0"]


def _edit_lock(root: Path, edit: Any) -> None:
    data = json.loads((root / "mcp.lock.json").read_text())
    edit(data)
    (root / "mcp.lock.json").write_text(json.dumps(data, indent=2) + "\n")


def _ag142(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [strip_volatile(f) for f in report["findings"] if f["rule_id"] == "AG142"]


def test_lock_check_fails_on_a_missing_or_edited_tree(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    root = project(tmp_path)
    lock(root, registry)
    good = (root / "mcp.lock.json").read_text()

    def elsewhere(data: dict[str, Any]) -> None:
        data["servers"][0]["tree"]["packages"][1]["version"] = "1.0.0"

    _edit_lock(root, elsewhere)
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 1
    assert _ag142(report) == [
        {
            "rule_id": "AG142",
            "title": "MCP server launch does not match the MCP server lock",
            "severity": "high",
            "confidence": "high",
            "message": "The dependency tree mcp.lock.json records for MCP server 'tracker' "
            f"({NAME} 2.0.1) is not consistent: the tree's digest is not over the packages it "
            "lists (edited by hand?).",
            "locations": [{"path": "mcp.lock.json", "line": 6, "note": "MCP server 'tracker'"}],
            "fix": {
                "description": "Re-lock (`agentguard lock`): it records the tree npm resolves "
                f"for {NAME} 2.0.1 from the registry.",
                "safe": False,
            },
            "evidence": {
                "server": "tracker",
                "package": NAME,
                "locked": "2.0.1",
                "tree": ["the tree's digest is not over the packages it lists (edited by hand?)"],
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]

    # the server itself taken out of its tree (digest recomputed: consistent with itself)
    (root / "mcp.lock.json").write_text(good)

    def no_root(data: dict[str, Any]) -> None:
        tree = data["servers"][0]["tree"]
        tree["packages"] = tree["packages"][1:]
        kept = [TreePackage(p["path"], p["version"], p["resolved"], p["integrity"],
                            tuple((k, json.dumps(v, sort_keys=True)) for k, v in p.items()
                                  if k not in ("path", "version", "resolved", "integrity")))
                for p in tree["packages"]]  # fmt: skip
        tree["digest"] = tree_digest(kept)

    _edit_lock(root, no_root)
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 1
    assert [f["evidence"]["tree"] for f in _ag142(report)] == [
        [f"the tree does not hold {NAME} itself (node_modules/{NAME})"]
    ]

    # no tree at all (a lock an older agentguard wrote: version 1, no tree)
    (root / "mcp.lock.json").write_text(good)

    def old(data: dict[str, Any]) -> None:
        data["lock-version"] = 1
        del data["servers"][0]["tree"]

    _edit_lock(root, old)
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 1
    [finding] = _ag142(report)
    assert finding["message"] == (
        f"mcp.lock.json records no dependency tree for MCP server 'tracker' ({NAME} 2.0.1): "
        "its dependencies are resolved from their ranges at every start, so the lock pins "
        "the server's own tarball only."
    )
    assert finding["evidence"]["tree"] is None
    # and the next lock records it
    code, report = lock(root, registry)
    assert (code, failed(report)) == (0, [])
    assert (root / "mcp.lock.json").read_text() == good


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d.update({"lock-version": 2}), "which a lock of version 2 never does"),
        (
            lambda d: d["servers"][0]["tree"]["packages"][1].update(
                {"path": "node_modules/../../etc"}
            ),
            "the path: not a value of the expected form",
        ),
        (
            lambda d: d["servers"][0]["tree"]["packages"][1].update({"postinstall": "curl x"}),
            "fields a tree package does not have",
        ),
        (
            lambda d: d["servers"][0]["tree"]["packages"][1].update(
                {"bin": {"server": "../../../bin/sh"}}
            ),
            "points out of its package",
        ),
        (lambda d: d["servers"][0]["tree"].pop("digest"), "not a tree"),
    ],
)
def test_a_malformed_tree_is_a_failed_source(
    tmp_path: Path, registry: NpmRegistry, edit: Any, said: str
) -> None:
    root = project(tmp_path)
    lock(root, registry)
    _edit_lock(root, edit)
    code, report, _ = run_json("lock", "--check", str(root))
    assert code == 3
    [source] = [s for s in report["sources"] if s["status"] == "failed"]
    assert (source["name"], source["error_code"]) == ("mcp.lock.json", "mcp-lock-malformed")
    assert said in source["reason"]


def test_export_npm_installs_exactly_the_locked_tree(tmp_path: Path, registry: NpmRegistry) -> None:
    root = project(tmp_path)
    kit = tmp_path / "kit"
    code, report = lock(root, registry, "--export-npm", str(kit))
    assert (code, failed(report)) == (0, [])
    folder = kit / "acme__tracker-mcp-2.0.1"
    assert sorted(p.name for p in folder.iterdir()) == ["package-lock.json", "package.json"]
    assert (
        "Wrote kit/acme__tracker-mcp-2.0.1 (3 packages): `npm ci --ignore-scripts` there "
        f"installs exactly the locked tree of {NAME} 2.0.1; then launch "
        "`node_modules/.bin/server`." in report["notes"]
    )
    # a newer helper is out: npm ci still installs the locked one, and nothing else
    registry.publish("helper", "1.9.0")
    env = {**os.environ, "npm_config_registry": registry.url}
    env["npm_config_cache"] = str(tmp_path / "npm-cache")
    proc = subprocess.run(
        ["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
        cwd=folder, env=env, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    installed = {
        str(p.parent.relative_to(folder)): json.loads(p.read_text())["version"]
        for p in folder.glob("node_modules/**/package.json")
    }
    assert installed == {
        f"node_modules/{NAME}": "2.0.1",
        "node_modules/helper": "1.1.0",
        "node_modules/leaf": "3.0.0",
    }
    assert (folder / "node_modules" / ".bin" / "server").exists()

    proc = run_cli("lock", "--check", "--export-npm", str(kit), str(root))
    assert proc.returncode == 2
    assert "`lock --check` writes nothing" in proc.stderr


def test_two_launches_of_one_server_version_run_npm_once(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    root = tmp_path / "bot"
    root.mkdir()
    spec = f"{NAME}@2.0.1"
    doc = {
        "mcpServers": {
            "tracker": {"command": "npx", "args": ["-y", spec]},
            "tracker-ro": {"command": "npx", "args": ["-y", spec, "--read-only"]},
        }
    }
    (root / ".mcp.json").write_text(json.dumps(doc, indent=2) + "\n")
    code, report = lock(root, registry)
    assert (code, failed(report)) == (0, [])
    assert registry.requests.count("helper") == 1  # (npm's read: one npm run)
    trees = [e["tree"] for e in json.loads((root / "mcp.lock.json").read_text())["servers"]]
    assert len(trees) == 2 and trees[0] == trees[1]


def test_a_relock_of_unchanged_inputs_needs_no_npm(tmp_path: Path, registry: NpmRegistry) -> None:
    root = project(tmp_path)
    lock(root, registry)
    before = (root / "mcp.lock.json").read_bytes()
    empty = tmp_path / "no-npm"
    empty.mkdir()
    env = {**os.environ, "PATH": str(empty)}
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url, env=env)
    assert (code, failed(report)) == (0, [])
    assert (root / "mcp.lock.json").read_bytes() == before
    # a moved server needs npm: without it, a failed source, and the lock as it was
    registry.publish(NAME, "2.1.0")
    (root / ".mcp.json").write_text((root / ".mcp.json").read_text().replace("2.0.1", "2.1.0"))
    code, report, _ = run_json("lock", str(root), "--npm-registry", registry.url, env=env)
    assert (code, failed(report)) == (3, [("npm-registry", f"{NAME} (.mcp.json:3)", "npm-missing")])
    assert (root / "mcp.lock.json").read_bytes() == before

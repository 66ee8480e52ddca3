"""`agentguard lock` on the MCP servers a project launches, end to end: the real CLI, the
real resolver (uv) on a local index of real wheels, and an npm registry on 127.0.0.1
serving real tarballs: the example's copy launches `@acme/tracker-mcp`, a name this
registry stands in for (the example itself launches a real server, locked from the real
registry by the README's first command: tests/test_readme_commands.py)."""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.facts.npm_tree import TreePackage, tree_digest
from tests.lock.helpers import run_cli, run_json, strip_volatile, write_project
from tests.lock.npm_registry import NpmRegistry, integrity, serve, tarball
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "kontext-bot"
NAME = "@acme/tracker-mcp"
# the example's .mcp.json, in its own layout, launching the stand-in's package
STAND_IN = re.sub(r'"@[^"]+"(?=\]\n)', f'"{NAME}"', (EXAMPLE / ".mcp.json").read_text(), count=1)
assert NAME in STAND_IN


@pytest.fixture()
def index(agent_index: dict[str, Any]) -> str:
    """The agent index plus httpx (the example's other dependency) and a Python MCP server
    with two released majors."""
    wheels = agent_index["wheels"]
    build_wheel(wheels, "httpx", "0.28.1")
    build_wheel(wheels, "mcp-server-demo", "1.2.0", ["typing-x>=1"])
    build_wheel(wheels, "mcp-server-demo", "2.0.0", ["typing-x>=1"])
    return write_simple_index(wheels, agent_index["root"] / "simple-more")


@pytest.fixture()
def registry() -> Iterator[NpmRegistry]:
    with serve(NpmRegistry({NAME: ["1.3.0", "1.4.2", "2.0.0", "2.0.1"]})) as reg:
        yield reg


@pytest.fixture()
def example(tmp_path: Path) -> Path:
    dest = tmp_path / "kontext-bot"
    shutil.copytree(
        EXAMPLE, dest, ignore=shutil.ignore_patterns("pylock.toml", "*.lock", "mcp.lock.json")
    )
    (dest / ".mcp.json").write_text(STAND_IN)
    return dest


def lock(
    project: Path, index: str, registry: NpmRegistry, *extra: str
) -> tuple[int, dict[str, Any]]:
    code, report, _ = run_json(
        "lock", str(project), "--index-url", index, "--npm-registry", registry.url, *extra
    )
    return code, report


def ours(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        strip_volatile(f)
        for f in report["findings"]
        if f["rule_id"] in ("AG140", "AG141", "AG142", "AG143")
    ]


def mcp_sources(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [
        (s["kind"], s["name"], s["status"])
        for s in report["sources"]
        if s["name"] == "mcp.lock.json" or s["kind"] in ("npm-registry", "mcp-server")
    ]


def test_the_example_is_locked_pinned_and_checked(
    example: Path, index: str, registry: NpmRegistry
) -> None:
    code, report = lock(example, index, registry, "--write-launch")
    assert code == 1  # AG140 (and the Python stack's AG101) are high
    assert ours(report) == [
        {
            "rule_id": "AG140",
            "title": "MCP server launch admits more than one released major",
            "severity": "high",
            "confidence": "high",
            "message": "MCP server 'tracker' launches `@acme/tracker-mcp` (no version): it admits the "
            "released majors 1, 2; the lock holds 2.0.1.",
            "locations": [{"path": ".mcp.json", "line": 3, "note": "MCP server 'tracker'"}],
            "fix": {
                "description": "Launch the locked version: `npx -y @acme/tracker-mcp@2.0.1` (`agentguard "
                "lock --write-launch` rewrites the launch), and move it on purpose.",
                "safe": False,
                "snippet": "npx -y @acme/tracker-mcp@2.0.1",
            },
            "evidence": {
                "server": "tracker",
                "kind": "npm",
                "package": NAME,
                "requested": None,
                "majors": ["1", "2"],
                "locked": "2.0.1",
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]
    assert mcp_sources(report) == [("lockfile", "mcp.lock.json", "ok")]
    assert json.loads((example / "mcp.lock.json").read_text())["servers"] == [
        {
            "launch": {"path": ".mcp.json", "line": 3, "server": "tracker"},
            "kind": "npm",
            "package": NAME,
            "requested": "2.0.1",  # the launch as --write-launch left it
            "version": "2.0.1",
            "integrity": integrity(tarball(NAME, "2.0.1")),
            "tarball": f"{registry.url}{NAME}/-/tracker-mcp-2.0.1.tgz",
            "provenance": None,
            "signature": {"status": "absent"},  # (the test registry signs nothing here)
            "attestation": {
                "status": "absent",
                "checks": {},
                "why": "the registry lists no provenance",
            },
            "registry": registry.url,
            "majors": ["2"],
            "released-majors": ["1", "2"],
            "tree": {
                "lockfile-version": 3,
                "digest": tree_digest(
                    [
                        TreePackage(
                            f"node_modules/{NAME}",
                            "2.0.1",
                            f"{registry.url}{NAME}/-/tracker-mcp-2.0.1.tgz",
                            integrity(tarball(NAME, "2.0.1")),
                            (("bin", '{"server": "index.js"}'),),
                        )
                    ]
                ),
                "packages": [
                    {
                        "path": f"node_modules/{NAME}",
                        "version": "2.0.1",
                        "resolved": f"{registry.url}{NAME}/-/tracker-mcp-2.0.1.tgz",
                        "integrity": integrity(tarball(NAME, "2.0.1")),
                        "bin": {"server": "index.js"},
                    }
                ],
            },
        }
    ]
    mcp_json = STAND_IN.replace(f'"{NAME}"', f'"{NAME}@2.0.1"')
    assert (example / ".mcp.json").read_text() == mcp_json
    assert (
        ".mcp.json:3: MCP server 'tracker' now launches @acme/tracker-mcp@2.0.1." in report["notes"]
    )

    # offline: the launch matches the lock
    code, report, _ = run_json("lock", "--check", str(example))
    assert ours(report) == []
    assert ("lockfile", "mcp.lock.json", "ok") in mcp_sources(report)

    # edited back to unpinned: lock --check fails on it
    (example / ".mcp.json").write_text(STAND_IN)
    code, report, _ = run_json("lock", "--check", str(example))
    assert code == 1
    assert ours(report) == [
        {
            "rule_id": "AG142",
            "title": "MCP server launch does not match the MCP server lock",
            "severity": "high",
            "confidence": "high",
            "message": "MCP server 'tracker' launches `@acme/tracker-mcp`, which is not pinned to the "
            "locked @acme/tracker-mcp 2.0.1.",
            "locations": [{"path": ".mcp.json", "line": 3, "note": "MCP server 'tracker'"}],
            "fix": {
                "description": "Launch the locked version: `npx -y @acme/tracker-mcp@2.0.1` (`agentguard "
                "lock --write-launch` writes it: a re-lock keeps the locked version while the launch "
                "admits it).",
                "safe": False,
                "snippet": "npx -y @acme/tracker-mcp@2.0.1",
            },
            "evidence": {
                "server": "tracker",
                "package": NAME,
                "launch": NAME,
                "locked": "2.0.1",
            },
            "ambiguous": False,
            "suppressed": None,
        }
    ]


def _npm_project(tmp_path: Path, spec: str) -> Path:
    project = write_project(tmp_path / "bot", ["typing-x>=1,<2"])
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tracker": {"command": "npx", "args": ["-y", spec]}}}, indent=2)
    )
    return project


def test_a_relock_across_a_major_stops_unless_allowed(
    tmp_path: Path, index: str, registry: NpmRegistry
) -> None:
    project = _npm_project(tmp_path, f"{NAME}@^1 || ^2 || ^3")
    registry.packages[NAME] = ["1.4.2"]
    code, report = lock(project, index, registry)
    assert json.loads((project / "mcp.lock.json").read_text())["servers"][0]["version"] == "1.4.2"
    assert ours(report) == []  # one major released

    registry.publish(NAME, "3.0.0")
    code, report = lock(project, index, registry)  # kept: 1.4.2 is still admitted
    assert [f["rule_id"] for f in ours(report)] == ["AG140"]  # (now it admits 1 and 3)
    assert json.loads((project / "mcp.lock.json").read_text())["servers"][0]["version"] == "1.4.2"
    before = (project / "mcp.lock.json").read_bytes()

    code, report = lock(project, index, registry, "--upgrade")
    assert code == 1
    assert [(f["rule_id"], f["message"], f["fix"]["snippet"]) for f in ours(report)] == [
        (
            "AG140",
            "MCP server 'tracker' launches `@acme/tracker-mcp@^1 || ^2 || ^3` (`@^1 || ^2 || ^3`): it "
            "admits the released majors 1, 3; the lock still holds 1.4.2 (3.0.0, resolved today, "
            "was not locked).",
            "npx -y @acme/tracker-mcp@1.4.2",
        ),
        (
            "AG141",
            "A re-lock would move MCP server 'tracker' (`@acme/tracker-mcp`) from 1.4.2 to 3.0.0 "
            "(major 1 -> 3); mcp.lock.json was left as it was.",
            "agentguard lock --allow-major @acme/tracker-mcp",
        ),
    ]
    assert (project / "mcp.lock.json").read_bytes() == before

    code, report = lock(project, index, registry, "--upgrade", "--allow-major", NAME)
    assert "AG141" not in {f["rule_id"] for f in ours(report)}
    assert json.loads((project / "mcp.lock.json").read_text())["servers"][0]["version"] == "3.0.0"


def test_a_hostile_registry_answer_is_a_failed_source_and_nothing_is_written(
    tmp_path: Path, index: str, registry: NpmRegistry
) -> None:
    project = _npm_project(tmp_path, NAME)
    before = (project / ".mcp.json").read_text()
    registry.plan = lambda path: "bad-integrity"
    code, report = lock(project, index, registry, "--write-launch")
    assert code == 3
    [failed] = [s for s in report["sources"] if s["status"] == "failed"]
    assert (failed["kind"], failed["name"], failed["error_code"]) == (
        "npm-registry",
        f"{NAME} (.mcp.json:3)",
        "npm-integrity-mismatch",
    )
    assert not (project / "mcp.lock.json").exists()
    assert (project / ".mcp.json").read_text() == before
    assert (
        "mcp.lock.json was not written (a server could not be resolved); it holds what it held before."
        in report["notes"]
    )


def test_a_python_server_is_resolved_with_uv_and_hashed(
    tmp_path: Path, index: str, registry: NpmRegistry
) -> None:
    project = write_project(tmp_path / "bot", ["typing-x>=1,<2"])
    (project / ".vscode").mkdir()
    text = '{\n  // the demo server\n  "servers": {"demo": {"command": "uvx", "args": ["mcp-server-demo"]}}\n}\n'
    (project / ".vscode" / "mcp.json").write_text(text)
    code, report = lock(project, index, registry, "--write-launch")
    [entry] = json.loads((project / "mcp.lock.json").read_text())["servers"]
    hashes = sorted(
        f"sha256:{__import__('hashlib').sha256(p.read_bytes()).hexdigest()}"
        for p in (tmp_path / "wheels").glob("mcp_server_demo-2.0.0-*.whl")
    )
    typing_x = sorted(
        f"sha256:{__import__('hashlib').sha256(p.read_bytes()).hexdigest()}"
        for p in (tmp_path / "wheels").glob("typing_x-2.0.0-*.whl")
    )
    assert {k: v for k, v in entry.items() if k != "registry"} == {
        "launch": {"path": ".vscode/mcp.json", "line": 3, "server": "demo"},
        "kind": "pypi",
        "package": "mcp-server-demo",
        "requested": "==2.0.0",  # the launch as --write-launch left it
        "version": "2.0.0",
        "hashes": hashes,
        "environment": [
            {"name": "mcp-server-demo", "version": "2.0.0", "marker": None, "hashes": hashes},
            {"name": "typing-x", "version": "2.0.0", "marker": None, "hashes": typing_x},
        ],
        "majors": ["2"],
        "released-majors": ["1", "2"],
    }
    assert [f["rule_id"] for f in ours(report)] == ["AG140"]
    assert (project / ".vscode" / "mcp.json").read_text() == text.replace(
        '"mcp-server-demo"]', '"--from", "mcp-server-demo==2.0.0", "mcp-server-demo"]'
    )
    code, report, _ = run_json("lock", "--check", str(project))
    assert ours(report) == [] and code == 0


def test_a_project_without_python_inputs_locks_its_servers(
    tmp_path: Path, registry: NpmRegistry
) -> None:
    project = tmp_path / "ts-agent"
    project.mkdir()
    (project / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"tracker": {"command": "npx", "args": ["-y", f"{NAME}@^2"]}}})
    )
    code, report, _ = run_json("lock", str(project), "--npm-registry", registry.url)
    assert code == 0, report["findings"]
    assert [
        (s["kind"], s["status"], s.get("reason")) for s in report["sources"] if s["kind"] == "lock"
    ] == [
        ("lock", "skipped", "no pyproject.toml or requirements.in: no Python dependencies to lock")
    ]
    assert json.loads((project / "mcp.lock.json").read_text())["servers"][0]["version"] == "2.0.1"
    assert "Wrote mcp.lock.json (1 MCP server launch(es) pinned)." in report["notes"]
    assert not (project / "pylock.toml").exists()

    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_cli("lock", str(empty))
    assert proc.returncode == 2 and "no pyproject.toml or requirements.in to lock" in proc.stderr


def test_a_project_whose_servers_cannot_be_locked_gets_a_report_never_exit_2(
    tmp_path: Path,
) -> None:
    """MCP servers, none a registry launch the lock can take (an image named by a variable,
    an HTTP server): a report whose sources say so (it was a usage error, exit 2, "no
    pyproject.toml or requirements.in to lock", as if the folder held nothing)."""
    project = tmp_path / "agent"
    project.mkdir()
    servers = {
        "a": {"command": "docker", "args": ["run", "-i", "$IMG"]},
        "b": {"type": "http", "url": "https://tracker.example/mcp"},
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}) + "\n")
    code, report, _ = run_json("lock", str(project))
    assert code == 0, report["findings"]
    assert [(s["kind"], s["name"], s["status"], s.get("reason")) for s in report["sources"]] == [
        ("lock", str(project), "skipped",
         "no pyproject.toml or requirements.in: no Python dependencies to lock"),
        ("mcp-server", "a (.mcp.json:1)", "skipped",
         "`docker run` launch not locked: not an image reference"),
    ]  # fmt: skip
    assert not (project / "mcp.lock.json").exists()

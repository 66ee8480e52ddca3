"""AG147 from its fixtures (tests/fixtures/AG147/{fail,pass}: a project launching
`@acme/tracker-mcp@2.0.1` and the `mcp.lock.json` whose recorded tree holds a git
dependency, or none): `lock --check`, offline, gives exactly these findings. And the rule
over facts: every source a package can come from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentguard.facts.mcp_pins import NPM, ServerPin
from agentguard.facts.npm_tree import TreePackage, make_tree
from agentguard.findings import Severity
from agentguard.rules.mcp_tree import tree_findings, tree_state_findings
from tests.lock.helpers import run_json, strip_volatile

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "AG147"
NAME = "@acme/tracker-mcp"
REG = "https://registry.example/"
GIT = "git+ssh://git.example/left-pad.git#0123456789abcdef0123456789abcdef01234567"
A = "sha512-" + "A" * 86 + "=="


def check(kind: str, tmp_path: Path) -> tuple[int, list[dict[str, object]]]:
    project = tmp_path / kind
    shutil.copytree(FIXTURES / kind, project)
    code, report, _ = run_json("lock", "--check", str(project))
    assert [s for s in report["sources"] if s["status"] == "failed"] == []
    return code, [strip_volatile(f) for f in report["findings"]]


def test_the_fail_fixture_gives_exactly_ag147(tmp_path: Path) -> None:
    code, findings = check("fail", tmp_path)
    assert (code, findings) == (
        1,
        [
            {
                "rule_id": "AG147",
                "title": "npm MCP server's dependency tree takes a package from outside the "
                "registry",
                "severity": "high",
                "confidence": "high",
                "message": f"MCP server 'tracker' (`{NAME}` 2.0.1) depends on `left-pad` 1.3.0 "
                f"from a git repository (`{GIT}`), not from the registry {REG}, and with no "
                f"integrity; path: {NAME}@2.0.1 -> helper@1.1.0 -> left-pad@1.3.0.",
                "locations": [{"path": ".mcp.json", "line": 3, "note": "MCP server 'tracker'"}],
                "fix": {
                    "description": f"Launch a version of {NAME} whose dependencies all come "
                    "from the registry (ask its publisher to depend on a registry release of "
                    "left-pad), then re-lock (`agentguard lock`); until then review what that "
                    "source serves before the server runs.",
                    "safe": False,
                },
                "evidence": {
                    "server": "tracker",
                    "package": NAME,
                    "version": "2.0.1",
                    "dependency": "left-pad",
                    "dependency_version": "1.3.0",
                    "tree_path": "node_modules/left-pad",
                    "resolved": GIT,
                    "integrity": None,
                    "source": "git",
                    "dependency_path": [f"{NAME}@2.0.1", "helper@1.1.0", "left-pad@1.3.0"],
                },
                "ambiguous": False,
                "suppressed": None,
            }
        ],
    )


def test_the_pass_fixture_gives_none(tmp_path: Path) -> None:
    assert check("pass", tmp_path) == (0, [])


def pin_with(*packages: TreePackage) -> ServerPin:
    root = TreePackage(f"node_modules/{NAME}", "2.0.1", f"{REG}{NAME}/-/x.tgz", A)
    return ServerPin(
        NPM, NAME, "2.0.1", "tracker", ".mcp.json", 3, integrity=A, registry=REG,
        tree=make_tree([root, *packages]),
    )  # fmt: skip


@pytest.mark.parametrize(
    ("resolved", "integrity", "want"),
    [
        (f"{REG}dep/-/dep-1.0.0.tgz", A, None),
        (f"{REG}dep/-/dep-1.0.0.tgz", None, ("registry", Severity.MEDIUM)),
        ("https://cdn.evil.example/dep-1.0.0.tgz", A, ("elsewhere", Severity.HIGH)),
        ("github:evil/dep#abc", None, ("git", Severity.HIGH)),
        ("file:../../dep", None, ("local", Severity.HIGH)),
        (None, A, ("no-source", Severity.MEDIUM)),
    ],
)
def test_each_source_a_dependency_comes_from(
    resolved: str | None, integrity: str | None, want: tuple[str, Severity] | None
) -> None:
    got = tree_findings([pin_with(TreePackage("node_modules/dep", "1.0.0", resolved, integrity))])
    assert [(f.evidence["source"], f.severity) for f in got] == ([want] if want else [])


def test_a_consistent_tree_needs_no_state_finding_and_a_missing_one_does() -> None:
    pin = pin_with(TreePackage("node_modules/dep", "1.0.0", f"{REG}dep/-/d.tgz", A))
    assert tree_state_findings([pin]) == []
    no_tree = ServerPin(NPM, NAME, "2.0.1", "tracker", ".mcp.json", 3, integrity=A)
    [finding] = tree_state_findings([no_tree])
    assert (finding.rule_id, finding.severity, finding.evidence["tree"]) == (
        "AG142",
        Severity.HIGH,
        None,
    )
    assert json.dumps(finding.evidence)  # (JSON all the way down)

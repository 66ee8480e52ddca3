"""A committed lock from a pull request is hostile: an edge of ``[tool.agentguard]`` whose
child is a table, an array or a number (TOML gives any) is a malformed lock, named as such
(a failed read, exit 3), never an internal error of a rule that indexes or sorts edges by
their child (an attack on the edges-by-child index found the crash; main already crashed on
an array child beside a string one, or on a spanning edge)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.lock.helpers import run_cli, run_json, write_project

pytestmark = pytest.mark.usefixtures("isolated_cache")

_HOSTILE_EDGE = (
    '[[tool.agentguard.edges]]\nparent = "zzzz-unique"\nchild = {child}\nspecifier = ">=1"\n\n'
)


def _forked_lock_with_edge(tmp_path: Path, index: dict[str, Any], child: str) -> Path:
    """A lock whose spanning edge's parent is pinned once under a marker (a fork), so the
    rules ask which edges lead into the child, plus one edge whose child is ``child``."""
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    run_json("lock", str(project), "--index-url", index["url"])
    pylock = project / "pylock.toml"
    text = pylock.read_text()
    head = 'name = "claude-agent-sdk"\nversion = "0.2.95"\n'
    assert head in text
    text = text.replace(head, head + "marker = \"sys_platform == 'linux'\"\n", 1)
    at = text.index("[[tool.agentguard.edges]]")
    pylock.write_text(text[:at] + _HOSTILE_EDGE.format(child=child) + text[at:])
    req = project / "requirements.lock"
    pin = "claude-agent-sdk==0.2.95 \\"
    assert pin in req.read_text()
    req.write_text(
        req.read_text().replace(pin, "claude-agent-sdk==0.2.95 ; sys_platform == 'linux' \\")
    )
    return project


@pytest.mark.parametrize("child", ['["typing-x"]', '{ name = "typing-x" }', "1"])
def test_lock_check_names_an_edge_whose_child_is_not_a_name(
    tmp_path: Path, agent_index: dict[str, Any], child: str
) -> None:
    project = _forked_lock_with_edge(tmp_path, agent_index, child)
    proc = run_cli("lock", "--check", str(project), "--format", "json")
    assert "internal error" not in proc.stderr, proc.stderr
    assert "malformed [tool.agentguard] edge" in proc.stdout + proc.stderr


def test_check_reports_an_edge_whose_child_is_not_a_name_as_a_failed_read(
    tmp_path: Path, agent_index: dict[str, Any]
) -> None:
    project = _forked_lock_with_edge(tmp_path, agent_index, '["typing-x"]')
    code, report, err = run_json("check", str(project))
    assert "internal error" not in err, err
    assert code == 3 and report["complete"] is False  # (a read that failed, never "clean")
    failed = [s for s in report["sources"] if s["status"] == "failed"]
    assert any("malformed [tool.agentguard] edge" in s["reason"] for s in failed), failed


@pytest.mark.parametrize(
    ("table", "message"),
    [
        (
            '[[tool.agentguard.upstream-bounds]]\nparent = "a"\nparent-version = "1"\n'
            'child = ["x"]\nspecifier = "<2"\nlater-releases = ["2"]\n\n',
            "malformed [tool.agentguard] upstream-bounds",
        ),
        (
            '[[tool.agentguard.edges]]\nparent = "a"\nchild = "x"\nspecifier = 2\n\n',
            "malformed [tool.agentguard] edge",
        ),
    ],
)
def test_a_value_of_another_type_in_the_graph_tables_is_a_malformed_lock(
    tmp_path: Path, agent_index: dict[str, Any], table: str, message: str
) -> None:
    """(A list was written back as the text "['x']", a number taken where a specifier
    belongs: read as a name or a range nobody wrote.)"""
    project = write_project(tmp_path / "bot", ["claude-agent-sdk==0.2.95"])
    run_json("lock", str(project), "--index-url", agent_index["url"])
    pylock = project / "pylock.toml"
    text = pylock.read_text()
    at = text.index("[[tool.agentguard.edges]]")
    pylock.write_text(text[:at] + table + text[at:])
    proc = run_cli("lock", "--check", str(project), "--format", "json")
    assert "internal error" not in proc.stderr, proc.stderr
    assert message in proc.stdout + proc.stderr

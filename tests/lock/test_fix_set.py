"""AG101's first fixes, offered together, install together (the defect of #26's long tail).

Small real wheels on a local index whose simple JSON carries upload times; the real
resolver (uv). Each first fix was right alone; applied together they did not resolve:

- one child spanned by two parents built at different times (``referencing==0.37.0`` and
  ``jsonschema==4.26.0`` over rpds-py): one cap per parent, ``rpds-py>=0.27,<0.28`` and
  ``rpds-py>=0.30,<0.31``, which exclude each other. Now the child gets one cap, the major
  both parents predate nothing of;
- two children whose caps are each fine and together unsatisfiable (the old release of one
  needs the new major of the other): the set is resolved before it is offered, and the one
  that cannot join says which cap it conflicts with, with no snippet.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.hostile.index_server import serving
from tests.lock.helpers import findings, run_json, write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _serve_times(server: Any, wheels: Path, times: dict[str, str]) -> None:
    server.upload_times = {p.name: times[p.name.split("-py3")[0]] for p in wheels.glob("*.whl")}


def _spans(report: dict[str, Any], child: str) -> dict[str, dict[str, Any]]:
    return {
        f["evidence"]["parent"]: f
        for f in findings(report, "AG101")
        if f["evidence"]["child"] == child
    }


def _apply(project: Path, deps: list[str], report: dict[str, Any], url: str) -> str:
    """Every snippet offered, added to the requirements of a fresh lock: it must resolve."""
    snippets = sorted(
        {f["fix"]["snippet"] for f in findings(report, "AG101") if "snippet" in f["fix"]}
    )
    fresh = write_project(project.parent / "fresh", [*deps, *snippets])
    _, again, _ = run_json("lock", str(fresh), "--index-url", url)
    assert again["complete"] is True, again["sources"]
    return (fresh / "requirements.lock").read_text()


RPDS_TIMES = {
    "rp-0.27.0": "2025-07-01T00:00:00Z",
    "rp-0.30.0": "2025-12-01T00:00:00Z",
    "rp-2026.1.0": "2026-05-28T00:00:00Z",
    "ref-0.37.0": "2025-10-13T00:00:00Z",
    "js-4.26.0": "2026-01-07T00:00:00Z",
}


def test_a_child_two_parents_span_gets_one_cap_both_predate_nothing_of(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    for v in ("0.27.0", "0.30.0", "2026.1.0"):
        build_wheel(wheels, "rp", v)
    build_wheel(wheels, "ref", "0.37.0", ["rp>=0.7"])
    build_wheel(wheels, "js", "4.26.0", ["rp>=0.25", "ref>=0.28"])
    with serving(wheels) as server:
        _serve_times(server, wheels, RPDS_TIMES)
        deps = ["js==4.26.0"]
        project = write_project(tmp_path / "bot", deps)
        _, report, _ = run_json("lock", str(project), "--index-url", server.url)
        assert "rp==2026.1.0" in (project / "requirements.lock").read_text()
        spans = _spans(report, "rp")
        assert sorted(spans) == ["js", "ref"]
        # ref alone was built against 0.27 and js against 0.30: one cap, the one both
        # were uploaded after (0.30 came out after ref==0.37.0).
        assert spans["ref"]["fix"]["snippet"] == "rp>=0.27,<0.28"
        assert spans["js"]["fix"] == {
            "description": "Add `rp>=0.27,<0.28` to your requirements, then re-lock with "
            "`agentguard lock --allow-major rp` (the lock moves rp off 2026.1.0, a major "
            "crossing the re-lock gate stops otherwise): 2 packages declare rp (`js==4.26.0`, "
            "`ref==0.37.0`) and your requirements hold one cap of it: rp 0.27 first shipped "
            "before each of them was uploaded, as far as the index's upload times tell (this "
            "range alone would take `rp>=0.30,<0.31`).",
            "safe": False,
            "snippet": "rp>=0.27,<0.28",
        }
        assert spans["js"]["evidence"]["fix_set"] == "resolves"
        assert spans["js"]["evidence"]["first_fix"] == "rp>=0.27,<0.28"
        text = _apply(project, deps, report, server.url)
        assert "rp==0.27.0" in text


CONFLICT_TIMES = {
    "a-1.0.0": "2025-01-01T00:00:00Z",
    "a-2.0.0": "2025-08-01T00:00:00Z",
    "b-1.0.0": "2025-01-01T00:00:00Z",
    "b-2.0.0": "2025-09-01T00:00:00Z",
    "x-1.0.0": "2025-06-01T00:00:00Z",
}


def test_caps_right_alone_that_conflict_together_are_not_offered_together(
    tmp_path: Path,
) -> None:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "a", "1.0.0", ["b>=2"])  # a 1 needs the b major x predates
    build_wheel(wheels, "a", "2.0.0")
    build_wheel(wheels, "b", "1.0.0")
    build_wheel(wheels, "b", "2.0.0")
    build_wheel(wheels, "x", "1.0.0", ["a>=1", "b>=1"])
    with serving(wheels) as server:
        _serve_times(server, wheels, CONFLICT_TIMES)
        deps = ["x==1.0.0"]
        project = write_project(tmp_path / "bot", deps)
        _, report, _ = run_json("lock", str(project), "--index-url", server.url)
        lock = (project / "requirements.lock").read_text()
        assert "a==2.0.0" in lock and "b==2.0.0" in lock
        a, b = _spans(report, "a")["x"], _spans(report, "b")["x"]
        # each alone: x==1.0.0 predates a 2 and b 2, so `a<2` and `b<2` come first ...
        assert a["fix"]["snippet"] == "a>=1,<2"
        assert a["evidence"]["fix_set"] == "resolves"
        # ... but a 1 needs b 2: the pair does not resolve, and b's cap is not offered.
        assert b["fix"] == {
            "description": "No cap of b that `x==1.0.0` can all have been built against "
            "resolves together with the other first fixes: `b>=1,<2` does not resolve with "
            "`a>=1,<2` (checked with the resolver). Decide which of these packages to hold "
            "back, test your code with that choice, cap it, and re-lock; a cap at the locked "
            "b major only once your code has been tested against it.",
            "safe": False,
        }
        assert b["evidence"]["fix_set"] == "conflict"
        assert b["evidence"]["fix_conflicts_with"] == ["a>=1,<2"]
        text = _apply(project, deps, report, server.url)
        assert "a==1.0.0" in text and "b==2.0.0" in text

"""Property-based, through the whole command line (in process, `main()` as installed):
whatever the file, no traceback, no "internal error", output that parses, and an exit code
that never says "clean" when a source failed (3 incomplete, 2 usage; 0/1 only when every
source was read).
"""

from __future__ import annotations

import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agentguard.cli import main
from tests.hostile.profiles import hostile
from tests.hostile.promises import check_failed_source, within
from tests.inspect.image.tarballs import docker_save, f, layer

pytestmark = pytest.mark.fuzz

SAVED = docker_save([layer([f("app/CLAUDE.md", "notes"), f("app/agent.py", "x = 1\n")])]).tar


def run_main(args: list[str], cwd: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["agentguard", *args])
    monkeypatch.delenv("AGENTGUARD_DEBUG", raising=False)
    code = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main()
        except SystemExit as exc:
            code = int(exc.code or 0) if not isinstance(exc.code, str) else 1
    return code, out.getvalue(), err.getvalue()


@st.composite
def damaged_saves(draw: st.DrawFn) -> bytes:
    data = bytearray(SAVED)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["cut", "flip", "splice"]))
        pos = draw(st.integers(0, len(data)))
        if op == "cut":
            del data[pos:]
        elif op == "flip" and pos < len(data):
            data[pos] ^= draw(st.integers(1, 255))
        else:
            data[pos:pos] = draw(st.binary(min_size=1, max_size=600))
    return bytes(data)


TARGETS = st.one_of(
    st.tuples(st.just(("inspect", "archive")), damaged_saves()),
    st.tuples(st.just(("inspect", "archive")), st.binary(max_size=2000)),
    st.tuples(st.just(("inspect", "compose")), st.binary(max_size=600)),
    st.tuples(st.just(("lock-check", "pyproject")), st.binary(max_size=600)),
)


@hostile("cli-inputs")
@given(target=TARGETS, fmt=st.sampled_from(["json", "text", "sarif"]))
def test_whole_cli_over_hostile_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, target: tuple[tuple[str, str], bytes], fmt: str
) -> None:
    (command, kind), data = target
    work = Path(tempfile.mkdtemp(dir=tmp_path))  # a fresh folder: no config left by another example
    if command == "inspect":
        name = "image.tar" if kind == "archive" else "compose.yaml"
        (work / name).write_bytes(data)
        args = ["inspect", name, "--kind", kind, "--no-lock", "--format", fmt]
    else:
        (work / "pyproject.toml").write_bytes(data)
        args = ["lock", ".", "--check", "--format", fmt]
    with within(30):
        code, out, err = run_main(args, work, monkeypatch)
    event(f"{command} {kind}: exit {code}")
    assert "Traceback" not in err and "internal error" not in err, err
    assert code in (0, 1, 2, 3), code
    if code == 2:
        assert command != "inspect", err  # a file we were told to read is never a usage error
        assert err.startswith("agentguard: error: "), err
        event(f"usage: {err.splitlines()[0][-90:]}")
        return
    if fmt == "json":
        report = json.loads(out)
        failed = [s for s in report["sources"] if s["status"] == "failed"]
        for s in failed:
            check_failed_source(s)
        assert (code == 3) == bool(failed), (code, failed)
        assert report["complete"] is (not failed)
    elif fmt == "sarif":
        json.loads(out)
    elif code == 3:
        assert "INCOMPLETE" in out and "every source was read" not in out

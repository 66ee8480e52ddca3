"""A Python agent image assembled from this machine's own interpreter (no registry): the
interpreter, the shared libraries `ldd` names, and the standard-library modules the agent
imports, at their own paths, plus the project copied into /app and run with
`python -m package` -- the example project's shape. Hardened, the package still imports
(PYTHONPATH follows the code out of the working directory), every probe holds, and the
agent sees an empty working directory it cannot escape by writing to /.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any

import pytest

from tests.harden.support import harden_cli, json_report, sources_named
from tests.inspect.engine_support import Made, unique

pytestmark = pytest.mark.engine

APP = """\
import os
print("cwd=" + os.getcwd())
print("uid=%d" % os.getuid())
print("entries=%d" % len(os.listdir(".")))
try:
    open("/written-by-the-agent", "w")
    print("rootfs=writable")
except OSError as exc:
    print("rootfs=" + exc.strerror)
print("plan-still-in-image=%s" % os.path.exists("/app/docs/plan.md"))
"""


def _copy(src: Path, rootfs: Path) -> None:
    dest = rootfs / str(src).lstrip("/")
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(src, dest)


def _stdlib_files(app_dir: Path) -> set[Path]:
    """The standard-library files the app imports (run here once, with the same interpreter)."""
    probe = (
        "import runpy, sys\n"
        "runpy.run_module('kontext_probe', run_name='__main__')\n"
        "print('\\n'.join('MOD ' + m.__file__ for m in list(sys.modules.values()) "
        "if getattr(m, '__file__', None)))\n"
    )
    python = os.path.realpath(sys._base_executable)  # type: ignore[attr-defined]
    run = subprocess.run(
        [python, "-c", probe], cwd=app_dir, capture_output=True, text=True, check=True
    )
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = {Path(line[4:]) for line in run.stdout.splitlines() if line.startswith("MOD ")}
    keep = {f for f in files if stdlib in f.parents and "site-packages" not in f.parts}
    keep |= set((stdlib / "encodings").glob("*.py"))  # the codec the locale asks for at start
    keep.add(stdlib / "os.py")  # the landmark the interpreter finds its prefix by
    return keep


def _libraries(binary: str) -> set[Path]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return {Path(p) for p in re.findall(r"(/\S+\.so[.\d]*)", out)}


@pytest.fixture(scope="module")
def python_image(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    context = tmp_path_factory.mktemp("python-image")
    app = context / "proj"
    (app / "kontext_probe").mkdir(parents=True)
    (app / "kontext_probe" / "__init__.py").write_text("")
    (app / "kontext_probe" / "__main__.py").write_text(APP)
    (app / "docs").mkdir()
    (app / "docs" / "plan.md").write_text("# planning: internal\n")
    python = os.path.realpath(sys._base_executable)  # type: ignore[attr-defined]
    rootfs = context / "rootfs"
    for f in {Path(python), *_libraries(python), *_stdlib_files(app)}:
        _copy(f, rootfs)
    made = Made(docker_client)
    tag = f"{unique('harden-python')}:1"
    made.build(
        tag,
        context,
        f'FROM scratch\nCOPY rootfs/ /\nCOPY proj /app\nWORKDIR /app\nCMD ["{python}", "-m", "kontext_probe"]\n',
    )
    yield tag
    made.cleanup()


def test_a_python_agent_runs_hardened_and_every_probe_holds(
    python_image: str, tmp_path: Path
) -> None:
    out = tmp_path / "o"
    result = harden_cli(python_image, "--out", out, "--verify", "--format", "json")
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    probes = sources_named(report, "probe")
    assert sorted(
        k for k, (status, reason) in probes.items() if not str(reason).startswith("held")
    ) == [
        "helper (docker-run.sh)",
        "inside (docker-run.sh)",
    ]
    assert all(status == "ok" for status, _ in probes.values())
    # --verify started the agent with its own command: `python -m` found its package
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    started = next(
        v for v in report["facts"]["harden"]["verification"] if v["probe"] == "agent-start"
    )
    assert started["output"][:3] == ["cwd=/work", "uid=10001", "entries=0"]
    script = (out / "docker-run.sh").read_text()
    assert "--env PYTHONPATH=/app" in script

    run = subprocess.run(
        ["sh", str(out / "docker-run.sh")], capture_output=True, text=True, timeout=120, check=False
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "cwd=/work",
        "uid=10001",
        "entries=0",
        "rootfs=Read-only file system",
        # the working directory no longer holds the project, but the image still does:
        # AG201's note says to rebuild without it
        "plan-still-in-image=True",
    ]

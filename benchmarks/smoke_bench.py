"""The smoke run of the example against a cold `uv pip sync` of its lock, side by side.

    python benchmarks/smoke_bench.py [runs]

The example is copied to a temporary folder and locked there (not timed). Then, alternately,
a cold install (a new venv and a new, empty uv cache, as the smoke run makes) and the whole
smoke run (the same install, the probe child, the stdio server). Needs the network (the
index, and the npm registry for the example's `tracker` server)."""

from __future__ import annotations

import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cold_sync(project: Path) -> float:
    from agentguard.lock.backend import uv_binary
    from agentguard.smoke.install import pick_interpreter

    interp = pick_interpreter(">=3.11")
    assert not isinstance(interp, str), interp
    with tempfile.TemporaryDirectory() as tmp:
        from agentguard.smoke.proc import child_env

        env = child_env(tmp, {"UV_CACHE_DIR": f"{tmp}/cache", "UV_NO_CONFIG": "1"})
        started = time.monotonic()
        subprocess.run(
            [uv_binary(), "venv", "-q", "--python", interp.path, f"{tmp}/v"], env=env, check=True
        )
        subprocess.run(
            [
                uv_binary(),
                "pip",
                "sync",
                "-q",
                "--require-hashes",
                "--python",
                f"{tmp}/v/bin/python",
                str(project / "requirements.lock"),
            ],
            env=env,
            check=True,
        )
        return time.monotonic() - started


def smoke(project: Path) -> float:
    from agentguard.smoke.run import SmokeOptions, smoke_run

    started = time.monotonic()
    facts, _ = smoke_run(project, ">=3.11", SmokeOptions())
    assert facts.install is not None and facts.install.status == "ok"
    return time.monotonic() - started


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp) / "kontext-bot"
        shutil.copytree(ROOT / "examples" / "kontext-bot", project)
        subprocess.run(
            [sys.executable, "-m", "agentguard", "lock", "-q", str(project)], check=False
        )
        syncs, smokes = [], []
        for _ in range(runs):
            syncs.append(cold_sync(project))
            smokes.append(smoke(project))
        print("run  cold uv pip sync  smoke run  ratio")
        for i, (a, b) in enumerate(zip(syncs, smokes, strict=True), 1):
            print(f"{i:>3}  {a:>15.1f}s  {b:>8.1f}s  {b / a:>5.2f}")
        a, b = statistics.median(syncs), statistics.median(smokes)
        print(f"median {a:>12.1f}s  {b:>8.1f}s  {b / a:>5.2f}")


if __name__ == "__main__":
    main()

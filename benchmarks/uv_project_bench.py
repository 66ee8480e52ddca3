"""Side by side on a uv project: `uv lock` vs `agentguard lock` (which runs `uv lock` on a
copy and gates the new uv.lock), and `agentguard lock --check` (reads uv.lock only).

The project is modelcontextprotocol/servers' `src/time` as committed (its pyproject.toml and
uv.lock, carried in tests/fixtures/AG121/fail/pyproject-locked-by-uv), against the default
index. Warm: caches filled by one run first; the tools take turns, each tool's median is
reported. `--upgrade` rows move packages (and agentguard refuses the majors: exit 1).

    python benchmarks/uv_project_bench.py [--repeat N]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from installed import byte_compile  # benchmarks/installed.py
from lock_bench import run

PROJECT = (
    Path(__file__).resolve().parent.parent / "tests/fixtures/AG121/fail/pyproject-locked-by-uv"
)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    byte_compile()
    from agentguard.lock.backend import uv_binary

    uv = uv_binary()
    with tempfile.TemporaryDirectory(prefix="ag-uvbench-") as tmp:
        work = Path(tmp)
        env = {
            **__import__("os").environ,
            "UV_CACHE_DIR": str(work / "uvc"),
            "AGENTGUARD_CACHE_DIR": str(work / "agc"),
        }
        ag = [sys.executable, "-m", "agentguard"]
        cases = {
            "uv lock": [uv, "lock", "--python", sys.executable],
            "agentguard lock": [*ag, "lock", "."],
            "agentguard lock --check": [*ag, "lock", "--check", "."],
            "uv lock --upgrade --dry-run": [
                uv,
                "lock",
                "--upgrade",
                "--dry-run",
                "--python",
                sys.executable,
            ],
            "agentguard lock --upgrade": [*ag, "lock", "--upgrade", "."],
        }
        dirs = {}
        for name in cases:
            d = work / name.replace(" ", "_")
            d.mkdir()
            for f in ("pyproject.toml", "uv.lock"):
                shutil.copy(PROJECT / f, d / f)
            dirs[name] = d
        for name, cmd in cases.items():  # fill the caches
            run(cmd, dirs[name], env)
        times: dict[str, list[float]] = {n: [] for n in cases}
        for _ in range(args.repeat):
            for name, cmd in cases.items():
                t, _rss, _code = run(cmd, dirs[name], env)
                times[name].append(t)
        base = statistics.median(times["uv lock"])
        up = statistics.median(times["uv lock --upgrade --dry-run"])
        print(f"{'case':32} {'median s':>9} {'ratio':>7}")
        for name, ts in times.items():
            ref = up if "upgrade" in name else base
            print(f"{name:32} {statistics.median(ts):9.3f} {statistics.median(ts) / ref:7.2f}")


if __name__ == "__main__":
    main()

"""What each command costs before and around its work: modules loaded, CPU and wall time.

For each case below, one run of each agentguard per round (this one and, with
``--baseline``, another install: the version before a change), so that a busy minute of the
machine is shared, median of the rounds; wall time, CPU (user + system, of the process and
the children it waited for: the resolver of a lock) and the modules loaded when the command
ends (``sys.modules``, counted once per case in a separate run; agentguard's own apart).

* ``lock``: a re-lock of unchanged inputs of a scratch project (``--deps``, default
  ``letta-client``: 15 pins, Python >= 3.10), text and ``--format json``, beside
  ``uv pip compile --universal --python-version 3.10 --generate-hashes`` on the same
  inputs in the same rounds (the ratio is agentguard's median over uv's);
* ``inspect DIR --format json`` and text, warm (the content cache's pack in place), and
  ``--no-cache``; ``map DIR``; ``check DIR --format json`` (in a copy of DIR);
* for every DIR given (``--tree``): its extracted checkout; ``--warm-tree DIR``: only the
  warm ``inspect DIR --format json`` (large trees: what a re-run in CI pays).

Every agentguard runs byte-compiled, as ``pip install`` leaves it (an editable install under
``PYTHONDONTWRITEBYTECODE`` compiles every module on every run otherwise). Each build has its
own cache folder. The JSON reports of the two builds are compared (findings, sources, facts,
map) and a difference is printed.

Usage: python benchmarks/startup_bench.py --tree DIR [--warm-tree DIR...] [--rounds 7]
       [--baseline PATH/TO/OTHER/bin/agentguard] [--deps letta-client] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import byte_compile  # benchmarks/installed.py

VENV_BIN = Path(sys.executable).parent

# the command as `python -m agentguard` runs it, writing the modules loaded when it ends
_MODULES = """
import sys
import agentguard.__main__ as main
leave, names = main._leave, sys.argv.pop(1)
def _leave(code):
    open(names, "w").write("\\n".join(sorted(sys.modules)))
    leave(code)
main._leave = _leave
sys.argv[0] = "agentguard"
main.run()
"""


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float]:
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    _, _, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_utime + usage.ru_stime


def _modules(python: str, args: list[str], cwd: Path, env: dict[str, str]) -> tuple[int, int]:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "modules.txt"
        subprocess.run(
            [python, "-c", _MODULES, str(out), *args],
            cwd=cwd, env=env, capture_output=True, check=False,
        )  # fmt: skip
        names = out.read_text().split("\n") if out.exists() else []
    return len(names), sum(n == "agentguard" or n.startswith("agentguard.") for n in names)


def _python_of(agentguard: str) -> str:
    return str(Path(agentguard).parent / "python")


def _compile(python: str) -> None:
    subprocess.run(
        [python, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "from installed import byte_compile; byte_compile()", str(Path(__file__).parent)],
        check=True,
    )  # fmt: skip


def _cases(
    trees: list[Path], warm_trees: list[Path], work: Path, deps: list[str]
) -> list[tuple[str, list[str], Path, bool]]:
    """(name, arguments, folder it runs in, whether its JSON report is compared)."""
    project = work / "lock-project"
    project.mkdir()
    listed = ", ".join(json.dumps(d) for d in deps)
    (project / "pyproject.toml").write_text(
        f'[project]\nname = "x"\nversion = "0"\nrequires-python = ">=3.10"\n'
        f"dependencies = [{listed}]\n"
    )
    cases = [
        ("lock (re-lock, text)", ["lock", "."], project, False),
        ("lock (re-lock, json)", ["lock", ".", "--format", "json"], project, False),
    ]
    for tree in trees:
        name = tree.name
        cases += [
            (f"inspect {name} json, warm", ["inspect", str(tree), "--format", "json"], work, True),
            (f"inspect {name} text, warm", ["inspect", str(tree)], work, False),
            (f"inspect {name} json, --no-cache",
             ["inspect", str(tree), "--no-cache", "--format", "json"], work, True),
            (f"map {name}", ["map", str(tree)], work, False),
            (f"check {name} json", ["check", ".", "--format", "json"], tree, True),
        ]  # fmt: skip
    for tree in warm_trees:
        cases.append(
            (
                f"inspect {tree.name} json, warm",
                ["inspect", str(tree), "--format", "json"],
                work,
                True,
            )
        )
    return cases


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tree", type=Path, action="append", default=[])
    ap.add_argument("--warm-tree", type=Path, action="append", default=[])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--baseline")
    ap.add_argument("--deps", nargs="*", default=["letta-client"])
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    byte_compile()
    builds = {"this": str(VENV_BIN / "agentguard")}
    if args.baseline:
        builds["before"] = args.baseline
        _compile(_python_of(args.baseline))
    work = Path(tempfile.mkdtemp(prefix="agentguard-startup-"))
    uv = shutil.which("uv", path=str(VENV_BIN)) or "uv"
    try:
        cases = _cases(
            [t.resolve() for t in args.tree], [t.resolve() for t in args.warm_tree], work, args.deps
        )
        envs = {b: dict(os.environ, AGENTGUARD_CACHE_DIR=str(work / f"cache-{b}")) for b in builds}
        homes: dict[tuple[str, str], Path] = {}
        for b in builds:  # each build its own copy of each folder a command writes in
            for name, _argv, cwd, _ in cases:
                if cwd != work:
                    homes[(b, name)] = work / b / name.replace(" ", "_").replace(",", "")
                    shutil.copytree(cwd, homes[(b, name)], symlinks=True)
        times: dict[tuple[str, str], list[tuple[float, float]]] = {}
        uv_times: list[tuple[float, float]] = []
        uv_argv = [uv, "pip", "compile", "-q", "--universal", "--python-version", "3.10",
                   "--python", sys.executable, "--generate-hashes", "pyproject.toml",
                   "-o", str(work / "uv.txt")]  # fmt: skip
        loads = []
        for r in range(args.rounds + 1):  # (round 0 warms the caches: not counted)
            loads.append(os.getloadavg()[0])
            for name, argv, cwd, _ in cases:
                for b, ag in builds.items():
                    got = _run([ag, *argv], homes.get((b, name), cwd), envs[b])
                    if r:
                        times.setdefault((b, name), []).append(got)
                if name.startswith("lock (re-lock, text)"):
                    got = _run(uv_argv, cases[0][2], dict(os.environ))
                    if r:
                        uv_times.append(got)
        reports: dict[tuple[str, str], object] = {}
        rows = []
        for name, argv, cwd, compared in cases:
            row = [name]
            for b, ag in builds.items():
                where = homes.get((b, name), cwd)
                mods = _modules(_python_of(ag), argv, where, envs[b])
                wall = statistics.median(t[0] for t in times[(b, name)])
                cpu = statistics.median(t[1] for t in times[(b, name)])
                row.append(f"{mods[0]} ({mods[1]}) | {wall:.3f} s | {cpu:.3f} s")
                if compared:
                    out = where / f"report-{b}.json"
                    subprocess.run([ag, *argv, "--output", str(out)], cwd=where, env=envs[b],
                                   capture_output=True, check=False)  # fmt: skip
                    got = json.loads(out.read_text())
                    reports[(b, name)] = [got[k] for k in ("findings", "sources", "facts", "map")]
            rows.append(row)
            if (
                compared
                and len(builds) > 1
                and reports[("this", name)] != reports[("before", name)]
            ):
                print(f"DIFFERENT REPORTS: {name}", file=sys.stderr)
        uv_wall = statistics.median(t[0] for t in uv_times)
        uv_cpu = statistics.median(t[1] for t in uv_times)
        head = "| command | " + " | ".join(
            f"{b}: modules (agentguard's) | wall | CPU" for b in builds
        )
        print(head + " |")
        print("|---|" + "---|" * (3 * len(builds)))
        for row in rows:
            print("| " + " | ".join(row) + " |")
        print(f"| uv pip compile (same inputs) | | {uv_wall:.3f} s | {uv_cpu:.3f} s |")
        for b in builds:
            relock = statistics.median(t[0] for t in times[(b, "lock (re-lock, text)")])
            print(f"re-lock / uv ({b}): {relock / uv_wall:.2f}x")
        print(f"rounds {args.rounds}, load average {min(loads):.1f}-{max(loads):.1f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()

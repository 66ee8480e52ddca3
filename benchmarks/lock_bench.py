"""Side by side: `agentguard lock` vs `uv pip compile --generate-hashes` vs `pip-compile --generate-hashes`.

Same inputs, same (default) index, one run. "cold" starts every tool with empty caches;
"warm" runs it again with its cache and its previous output in place (a re-lock); the
tools take turns, one warm run each per round, and each tool's median is reported.
agentguard's time includes its analysis (index pages, metadata, majors, rules, both files),
and it runs byte-compiled, as ``pip install`` leaves it.

    python benchmarks/lock_bench.py [--skip-pip-compile] [--repeat N] [--large]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from installed import byte_compile  # benchmarks/installed.py

# name -> (requirements, lowest Python). The forked stack supports Python 3.10, which
# several of its packages' newest releases dropped: its universal lock pins them twice.
PROJECTS = {
    "example (kontext-bot)": (["claude-agent-sdk==0.2.95", "httpx>=0.27"], "3.11"),
    "agent stack": (
        ["claude-agent-sdk", "openai-agents", "anthropic", "langchain-mcp-adapters"],
        "3.11",
    ),
    "forked stack (smolagents)": (["smolagents[mcp,docker]"], "3.10"),
}
# `--large`: the stacks of issue 26's item 8, each on the lowest Python it supports
LARGE = {
    "browser-use (272 pins)": (["browser-use"], "3.11"),
    "fast-agent-mcp": (["fast-agent-mcp"], "3.12"),
    "letta-client": (["letta-client"], "3.10"),
}


def run(cmd: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, int, int]:
    """Wall seconds, peak RSS (MB) and exit code of one command."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if code not in (0, 1):
            raise SystemExit(f"{' '.join(cmd[:5])} exited {code}: {err.strip()[:500]}")
    return elapsed, usage.ru_maxrss // 1024, code


def bench(
    name: str, deps: list[str], python: str, work: Path, repeat: int, pip_compile: bool
) -> list[tuple[str, str, float, int]]:
    rows: list[tuple[str, str, float, int]] = []
    lines = ",\n".join(f'  "{d}"' for d in deps)
    tools: dict[str, tuple[list[str], Path]] = {}
    for tool in ("agentguard", "uv", "pip-compile"):
        d = work / tool
        d.mkdir(parents=True)
        if tool == "agentguard":
            (d / "pyproject.toml").write_text(
                f'[project]\nname = "bench"\nversion = "0"\nrequires-python = ">={python}"\n'
                f"dependencies = [\n{lines}\n]\n"
            )
        else:
            (d / "requirements.in").write_text("\n".join(deps) + "\n")
    tools["agentguard lock"] = (
        [sys.executable, "-m", "agentguard", "lock", ".", "-q", "-f", "json", "-o", os.devnull],
        work / "agentguard",
    )
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    tools["uv pip compile --generate-hashes"] = (
        [
            uv,
            "pip",
            "compile",
            "requirements.in",
            "--universal",
            "--generate-hashes",
            "-q",
            "-o",
            "requirements.txt",
            "--python",
            sys.executable,
            "--python-version",
            python,
        ],
        work / "uv",
    )
    if pip_compile:
        tools["pip-compile --generate-hashes"] = (
            [
                sys.executable,
                "-m",
                "piptools",
                "compile",
                "requirements.in",
                "--generate-hashes",
                "-q",
                "-o",
                "requirements.txt",
            ],
            work / "pip-compile",
        )
    envs: dict[str, dict[str, str]] = {}
    for label, (_cmd, cwd) in tools.items():
        env = dict(os.environ)
        caches = work / f"cache-{cwd.name}"
        env.update(
            AGENTGUARD_CACHE_DIR=str(caches / "ag"),
            UV_CACHE_DIR=str(caches / "uv"),
            PIP_CACHE_DIR=str(caches / "pip"),
            PIP_CONFIG_FILE=os.devnull,
        )
        envs[label] = env
    cold: dict[str, tuple[float, int]] = {}
    for label, (cmd, cwd) in tools.items():
        secs, rss, _ = run(cmd, cwd, envs[label])
        cold[label] = (secs, rss)
    # Warm runs take turns (agentguard, uv, pip-compile, agentguard, ...), so that a
    # slower or faster minute of a shared machine or index is shared by every tool.
    warm: dict[str, list[float]] = {label: [] for label in tools}
    peak: dict[str, int] = {label: 0 for label in tools}
    check_cmd = [sys.executable, "-m", "agentguard", "lock", "--check", ".", "-q", "-f", "json",
                 "-o", os.devnull]  # fmt: skip
    checks: list[float] = []
    for _ in range(repeat):
        for label, (cmd, cwd) in tools.items():
            secs, rss, _ = run(cmd, cwd, envs[label])
            warm[label].append(secs)
            peak[label] = max(peak[label], rss)
        checks.append(run(check_cmd, tools["agentguard lock"][1], envs["agentguard lock"])[0])
    for label in tools:
        rows.append((name, f"{label} (cold)", cold[label][0], cold[label][1]))
        rows.append((name, f"{label} (warm)", statistics.median(warm[label]), peak[label]))
        if label == "agentguard lock":
            rows.append((name, "agentguard lock --check", statistics.median(checks), peak[label]))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-pip-compile", action="store_true")
    ap.add_argument("--large", action="store_true", help="the large stacks instead")
    args = ap.parse_args()
    projects = LARGE if args.large else PROJECTS
    byte_compile()
    all_rows = []
    with tempfile.TemporaryDirectory(prefix="agentguard-bench-") as tmp:
        for i, (name, (deps, python)) in enumerate(projects.items()):
            print(f"benchmarking {name} ...", file=sys.stderr)
            all_rows += bench(
                name, deps, python, Path(tmp) / str(i), args.repeat, not args.skip_pip_compile
            )
    print("| project | tool | seconds | vs uv (same state) | peak RSS MB |")
    print("|---|---|---:|---:|---:|")
    for name, label, secs, rss in all_rows:
        state = "(cold)" if "(cold)" in label else "(warm)"
        base = next(
            (
                s
                for n, lbl, s, _ in all_rows
                if n == name and lbl == f"uv pip compile --generate-hashes {state}"
            ),
            None,
        )
        ratio = f"{secs / base:.2f}x" if base and "--check" not in label else ""
        print(f"| {name} | {label} | {secs:.2f} | {ratio} | {rss} |")


if __name__ == "__main__":
    main()

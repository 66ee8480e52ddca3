"""What the agent capability map costs on top of `inspect`, per project folder.

``python benchmarks/map_bench.py DIR...`` runs the project scan (`inspect`'s, in process)
on each folder, times the map's own work inside it (the joins made for it alone after the
files are read: Kubernetes agent containers and tools from other modules; building the map
from the facts, :func:`agentguard.engine.capability_map.build_map`) and each rendering
(JSON, text, Mermaid), and prints a Markdown row per folder, the shares against the scan
without the map: what `inspect`/`check` pay (joins + build + JSON) and what `map` adds
(joins + build + text), in wall time and in CPU time (the scan's CPU counts its reading
children: on a loaded machine the wall shares move with the scheduler, the CPU share less). Each folder is scanned ``--rounds`` times (medians). The files
parsed for tool decorations alone are counted in the scan (their sources say so).
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

Times = tuple[float, float]  # (wall seconds, CPU seconds)


def _now() -> Times:
    return time.perf_counter(), time.process_time()


def _since(t: Times) -> Times:
    return time.perf_counter() - t[0], time.process_time() - t[1]


def _cpu_all() -> float:
    """CPU seconds of this process and of its children that have ended (the readers)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def measure(folder: Path, rounds: int) -> tuple[int, Times, dict[str, Times]]:
    """(agents, inspect (wall, CPU), {part: (wall, CPU)}) as medians over ``rounds``
    scans. The inspect CPU counts the reading children; a map part runs in this process."""
    import agentguard.engine.capability_map as cm
    import agentguard.inspect.project.k8s_agents as k8s
    import agentguard.inspect.project.python_tool_imports as ti
    from agentguard.engine.project import inspect_project
    from agentguard.facts.capabilities_json import map_to_json
    from agentguard.findings import Provenance, Report
    from agentguard.report.map_mermaid import render_map_mermaid
    from agentguard.report.map_text import render_map_text

    spent: list[Times] = []
    joins: list[Times] = []
    original = cm.build_map
    originals = (k8s.k8s_agent_services, ti.join_imported_tools)

    def timer(fn: Callable[..., Any], into: list[Times]) -> Callable[..., Any]:
        def run(*args: Any, **kwargs: Any) -> Any:
            start = _now()
            try:
                return fn(*args, **kwargs)
            finally:
                into.append(_since(start))

        return run

    totals: list[Times] = []
    parts: dict[str, list[Times]] = {k: [] for k in ("joins", "build", "json", "text", "mermaid")}
    n = 0
    for _ in range(rounds):
        spent.clear()
        joins.clear()
        cm.build_map = timer(original, spent)  # finish() looks these up at call time
        k8s.k8s_agent_services = timer(originals[0], joins)
        ti.join_imported_tools = timer(originals[1], joins)
        start, cpu = time.perf_counter(), _cpu_all()
        try:
            result = inspect_project(folder)
        finally:
            cm.build_map = original
            k8s.k8s_agent_services, ti.join_imported_tools = originals
        totals.append((time.perf_counter() - start, _cpu_all() - cpu))
        for name, got in (("build", spent), ("joins", joins)):
            parts[name].append((sum(w for w, _ in got), sum(c for _, c in got)))
        m = result.capabilities
        n = len(m.agents) if m is not None else 0
        report = Report(Provenance("map", "", "", str(folder), {}), (), result.sources)
        for name in ("json", "text", "mermaid"):
            t = _now()
            if name == "json" and m is not None:
                map_to_json(m)
            elif name == "text":
                render_map_text(report, m)
            elif name == "mermaid":
                render_map_mermaid(m)
            parts[name].append(_since(t))

    def median(xs: list[Times]) -> Times:
        return statistics.median(w for w, _ in xs), statistics.median(c for _, c in xs)

    return n, median(totals), {k: median(v) for k, v in parts.items()}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("folders", nargs="+", type=Path)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    print(
        "| repository | agents | inspect | joins | build | JSON | text | Mermaid "
        "| inspect pays (joins + build + JSON) | map adds (joins + build + text) "
        "| inspect CPU | map adds, CPU |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for folder in args.folders:
        n, (total, total_cpu), p = measure(folder, args.rounds)
        w = {k: v[0] for k, v in p.items()}
        c = {k: v[1] for k, v in p.items()}
        ms = {k: f"{v * 1000:.1f} ms" for k, v in w.items()}
        scan = total - w["build"] - w["joins"]
        scan_cpu = total_cpu - c["build"] - c["joins"]
        own = w["joins"] + w["build"]
        own_cpu = c["joins"] + c["build"] + c["text"]
        print(
            f"| {folder.name} | {n} | {scan:.2f} s | {ms['joins']} | {ms['build']} "
            f"| {ms['json']} | {ms['text']} | {ms['mermaid']} | {(own + w['json']) / scan:.1%} "
            f"| {(own + w['text']) / scan:.1%} | {scan_cpu:.2f} s | {own_cpu / scan_cpu:.1%} |"
        )


if __name__ == "__main__":
    main()

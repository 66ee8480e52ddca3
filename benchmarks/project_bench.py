"""Project-folder benchmark: `agentguard inspect DIR` beside ripgrep and ruff.

Generates (once, deterministically) a tree of 20,000 Python files -- about 2 million
lines -- with agent code scattered in (Claude SDK options, openai-agents tools, MCP
server mappings, model fallbacks) and a few hundred configuration files (Claude Code
settings, .mcp.json, Dockerfiles, compose files, package.json, shell scripts,
TypeScript agents). Then times, on a warm page cache, best of N runs:

* ``agentguard inspect DIR`` (the whole command: start-up, walk, parse, rules, report);
* ``rg -l`` for the SDK import names (the cost of just reading the files);
* ``ruff check --select S --no-cache`` (a static security check users already run);
* a plain Python walk-and-search of the same bytes for the SDK import names (what any
  Python tool pays just to read the tree: the floor for one).

agentguard is run the way ``pip install`` leaves it: with its modules byte-compiled
(``compileall`` runs first, as pip does on install).

Peak memory is each process's own maximum resident set (``wait4``).

``--shape agents`` times a tree shaped like openai-agents-python instead (920 Python
files, most of them importing the SDK, many MCP launches: see ``agents_tree.py``), and
adds ``trivy fs --scanners misconfig,secret`` as a column where trivy is installed (run
offline: ``--offline-scan --skip-db-update``).

Usage: python benchmarks/project_bench.py [--shape flat|agents] [--dir DIR] [--files 20000]
       [--runs 3] [--markdown]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents_tree import generate_agents_tree  # benchmarks/agents_tree.py
from installed import byte_compile  # benchmarks/installed.py

HERE = Path(__file__).resolve().parent
VENV_BIN = Path(sys.executable).parent

_WORDS = [
    "account",
    "order",
    "invoice",
    "customer",
    "ledger",
    "payment",
    "report",
    "batch",
    "queue",
    "worker",
    "cache",
    "index",
    "record",
    "parser",
    "token",
    "stream",
    "buffer",
    "session",
    "profile",
    "export",
    "import",
    "schedule",
    "metric",
]

_AGENT_SNIPPETS = [
    # Claude SDK with an allow-list only
    """from claude_agent_sdk import ClaudeAgentOptions, query

TOOLS = ["Read", "Grep"]


async def review(prompt: str) -> None:
    options = ClaudeAgentOptions(allowed_tools=TOOLS, cwd=".")
    async for message in query(prompt=prompt, options=options):
        print(message)
""",
    # Claude SDK with bypass and a fallback model
    """import os
from pathlib import Path

from claude_agent_sdk import ClaudeAgentOptions, ClaudeSDKClient


def make_client() -> ClaudeSDKClient:
    opts = ClaudeAgentOptions(
        permission_mode=os.environ.get("AGENT_MODE", "bypassPermissions"),
        cwd=Path(__file__).resolve().parent,
        fallback_model="claude-haiku-4-5",
        mcp_servers={"fs": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem"]}},
    )
    return ClaudeSDKClient(options=opts)
""",
    # openai-agents tools
    """from agents import Agent, WebSearchTool, ShellTool


def build(executor):
    return Agent(name="ops", tools=[WebSearchTool(), ShellTool(executor=executor)])
""",
    # silent fallback in an except handler
    """import anthropic

client = anthropic.Anthropic()
PRIMARY = "claude-sonnet-4-5"


def ask(text: str) -> str:
    try:
        reply = client.messages.create(model=PRIMARY, max_tokens=512, messages=[{"role": "user", "content": text}])
    except anthropic.APIError:
        reply = client.messages.create(model="claude-haiku-4-5", max_tokens=512, messages=[{"role": "user", "content": text}])
    return reply.content[0].text
""",
]

_TS_AGENT = """import { query } from "@anthropic-ai/claude-agent-sdk";

export async function run(prompt: string) {
  for await (const m of query({ prompt, options: { allowedTools: ["Read"], permissionMode: "acceptEdits" } })) {
    console.log(m);
  }
}
"""
_SETTINGS = '{\n  "permissions": {\n    "allow": ["Bash(npm run test:*)", "Read"]\n  }\n}\n'
_MCP = '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git"]}}}\n'
_DOCKERFILE = (
    "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
    "RUN pip install claude-agent-sdk==0.2.95\n"
    'CMD ["claude", "-p", "triage", "--dangerously-skip-permissions"]\n'
)
_COMPOSE = (
    "services:\n  agent:\n    build: .\n    working_dir: /app\n    volumes:\n      - .:/app\n"
)
_PACKAGE = '{"name": "svc", "scripts": {"agent": "claude -p review --allowedTools Read"}}\n'
_SCRIPT = '#!/bin/sh\nset -e\npython -m app.main "$@"\n'
# The same kinds of files, written the careful way (most of a real tree looks like this).
_SETTINGS_OK = (
    '{\n  "permissions": {\n    "allow": ["Read"],\n    "deny": ["Bash", "WebFetch"]\n  }\n}\n'
)
_MCP_OK = '{"mcpServers": {"git": {"command": "uvx", "args": ["mcp-server-git==2025.1.14"]}}}\n'
_DOCKERFILE_OK = (
    "FROM python:3.12-slim\nWORKDIR /srv/agent\nCOPY dist/app.whl /tmp/\n"
    "RUN pip install --require-hashes -r /tmp/requirements.lock\nUSER 10001\n"
    'CMD ["python", "-m", "app"]\n'
)
_COMPOSE_OK = (
    "services:\n  agent:\n    build: .\n    user: '10001'\n    read_only: true\n"
    "    security_opt: [no-new-privileges:true]\n    volumes:\n      - scratch:/work\n"
    "volumes:\n  scratch: {}\n"
)
_PACKAGE_OK = '{"name": "svc", "scripts": {"test": "vitest run"}}\n'


def _module(rng: random.Random, lines: int) -> str:
    out = [
        '"""Generated module for the benchmark."""',
        "",
        "from __future__ import annotations",
        "",
    ]
    out += ["import json", "import logging", "from dataclasses import dataclass", "", ""]
    out.append("log = logging.getLogger(__name__)")
    while len(out) < lines:
        a, b = rng.sample(_WORDS, 2)
        out += [
            "",
            "",
            "@dataclass",
            f"class {a.title()}{b.title()}:",
            f'    """A {a} of {b} records."""',
            "",
            f"    {a}_id: int  # primary key of the {a} in the upstream service",
            f"    {b}_name: str = ''  # display name, may be empty for legacy {b} rows",
            "",
            f"    def to_{b}(self, scale: int = {rng.randint(1, 99)}) -> dict[str, object]:",
            f'        """Map this {a} to a {b} record, scaled for the downstream report."""',
            f"        total = self.{a}_id * scale + len(self.{b}_name)  # {b} weight",
            f"        if total > {rng.randint(100, 9999)}:",
            f'            log.info("large {a}: %s", total)',
            f'        return {{"{a}": self.{a}_id, "{b}": self.{b}_name, "total": total}}',
            "",
            "    def dump(self) -> str:",
            f"        return json.dumps(self.to_{b}(), sort_keys=True)",
        ]
    return "\n".join(out) + "\n"


def generate(root: Path, files: int, seed: int = 4) -> dict[str, int]:
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    counts = {"python": 0, "agent_python": 0, "config": 0, "lines": 0}
    per_pkg = 100
    for i in range(files):
        pkg = root / f"svc{i // 2000:02d}" / f"pkg{(i // per_pkg) % 20:02d}"
        if i % per_pkg == 0:
            pkg.mkdir(parents=True, exist_ok=True)
            (pkg / "__init__.py").write_text("")
        if i % 200 == 37:  # 0.5% agent code
            text = _module(rng, 60) + "\n\n" + _AGENT_SNIPPETS[(i // 200) % len(_AGENT_SNIPPETS)]
            counts["agent_python"] += 1
        else:
            text = _module(rng, rng.randint(60, 140))
        (pkg / f"mod{i % per_pkg:03d}.py").write_text(text)
        counts["python"] += 1
        counts["lines"] += text.count("\n")
    configs = [
        (".claude/settings.json", _SETTINGS),
        (".mcp.json", _MCP),
        ("Dockerfile", _DOCKERFILE),
        ("compose.yaml", _COMPOSE),
        ("package.json", _PACKAGE),
        ("scripts/run.sh", _SCRIPT),
        ("web/agent.ts", _TS_AGENT),
    ]
    careful = [
        (".claude/settings.json", _SETTINGS_OK),
        (".mcp.json", _MCP_OK),
        ("Dockerfile", _DOCKERFILE_OK),
        ("compose.yaml", _COMPOSE_OK),
        ("package.json", _PACKAGE_OK),
        ("scripts/run.sh", _SCRIPT),
        ("web/agent.ts", _TS_AGENT),
    ]
    for svc in sorted(root.iterdir()):
        for j in range(5):
            sub = svc / f"tool{j:02d}"
            for rel, text in configs if j == 0 else careful:  # one folder in five is careless
                path = sub / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
                counts["config"] += 1
    return counts


# os.walk, read every file, search it for the SDK import names: one process.
_PLAIN_SEARCH = """
import os, sys
needles = (b"claude_agent_sdk", b"claude_code_sdk", b"@anthropic-ai/claude-agent-sdk")
hits = 0
for folder, _dirs, files in os.walk(sys.argv[1]):
    for name in files:
        with open(os.path.join(folder, name), "rb") as fh:
            data = fh.read()
        hits += any(n in data for n in needles)
print(hits)
"""


def _measure(argv: list[str]) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, peak RSS in MiB of the largest process, exit code)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, cpu, usage.ru_maxrss // 1024, proc.returncode


def best_of(argv: list[str], runs: int) -> tuple[float, float, int, int]:
    results = [_measure(argv) for _ in range(runs)]
    best = min(results, key=lambda r: r[0])
    return best[0], min(r[1] for r in results), max(r[2] for r in results), best[3]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--dir", type=Path, default=Path(tempfile.gettempdir()) / "agentguard-bench" / "project"
    )
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--markdown", action="store_true", help="print the README table rows")
    parser.add_argument("--shape", choices=("flat", "agents"), default="flat")
    args = parser.parse_args()
    if args.shape == "agents" and args.dir == parser.get_default("dir"):
        args.dir = args.dir.with_name("agents-tree")

    marker = args.dir / ".bench.json"
    if args.regenerate or not marker.is_file():
        counts = (
            generate_agents_tree(args.dir)
            if args.shape == "agents"
            else generate(args.dir, args.files)
        )
        marker.write_text(json.dumps(counts))
    counts = json.loads(marker.read_text())
    size = sum(p.stat().st_size for p in args.dir.rglob("*") if p.is_file())

    agentguard = [str(VENV_BIN / "agentguard"), "inspect", str(args.dir), "--format", "json",
                  "--output", os.devnull]  # fmt: skip
    rg = ["rg", "-l", "-e", "claude_agent_sdk", "-e", "claude_code_sdk", "-e",
          "@anthropic-ai/claude-agent-sdk", str(args.dir)]  # fmt: skip
    ruff = [str(VENV_BIN / "ruff"), "check", "--select", "S", "--no-cache", "--quiet",
            "--exit-zero", str(args.dir)]  # fmt: skip
    plain = [sys.executable, "-c", _PLAIN_SEARCH, str(args.dir)]
    trivy_bin = shutil.which("trivy")
    trivy = [trivy_bin or "trivy", "fs", "--scanners", "misconfig,secret", "--offline-scan",
             "--skip-db-update", "--quiet", str(args.dir)]  # fmt: skip
    byte_compile()
    tools = [rg, ruff, plain, agentguard] + ([trivy] if trivy_bin else [])
    for argv in tools:  # warm the page cache
        _measure(argv)
    rows = [
        ("ripgrep `rg -l` (SDK import names)", best_of(rg, args.runs)),
        ("ruff check --select S", best_of(ruff, args.runs)),
        ("plain Python walk-and-search", best_of(plain, args.runs)),
        ("agentguard inspect DIR", best_of(agentguard, args.runs)),
    ]
    if trivy_bin:
        rows.append(("trivy fs --scanners misconfig,secret", best_of(trivy, args.runs)))
    else:
        print("trivy not installed: its column is left out")
    rg_time = rows[0][1][0]
    print(
        f"tree: {counts['python']} Python files ({counts['lines']} lines, "
        f"{counts['agent_python']} with agent code), {counts['config']} config files, "
        f"{size / 1e6:.0f} MB; {os.cpu_count()} CPUs; best of {args.runs}"
    )
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    for name, (secs, cpu, rss, code) in rows:
        line = f"| {name} | {secs:.2f} s | {cpu:.2f} s | {secs / rg_time:.1f}x | {rss} MB |"
        print(line if args.markdown else f"{name:40} {secs:6.2f} s wall  {cpu:5.2f} s CPU  "
              f"{secs / rg_time:4.1f}x rg  peak {rss} MB  exit {code}")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())

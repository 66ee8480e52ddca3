"""A tree shaped like openai-agents-python (about 920 Python files, 28 MB): the SDK's own
modules, hundreds of examples and tests that import it, many of them handing tools to an
agent and launching MCP servers. Every one of those files passes agentguard's pre-filter
and is parsed and evaluated: the opposite of the 20k-file tree, where 0.5% is agent code."""

from __future__ import annotations

import random
import shutil
from pathlib import Path

_EXAMPLE = '''\
import asyncio
import os

from agents import Agent, Runner, ShellTool, WebSearchTool, function_tool
from agents.mcp import MCPServerStdio


@function_tool
def lookup_{n}(query: str) -> str:
    """Look something up for example {n}."""
    return query.upper()


async def main() -> None:
    root = os.path.dirname(os.path.abspath(__file__))
    async with MCPServerStdio(
        name="fs-{n}",
        params={{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", root]}},
    ) as server:
        agent = Agent(
            name="assistant-{n}",
            instructions="Answer briefly.",
            tools=[lookup_{n}, WebSearchTool(), ShellTool(executor=None, needs_approval={approval})],
            mcp_servers=[server],
        )
        result = await Runner.run(agent, "What is in this folder?")
        print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main())
'''

_TEST_HEAD = """\
from __future__ import annotations

import pytest

from agents import Agent, Runner, function_tool
from agents.mcp import MCPServerStdio

"""
_TEST_CASE = """

@pytest.mark.asyncio
async def test_case_{n}_{m}() -> None:
    server = MCPServerStdio(params={{"command": "uvx", "args": ["mcp-server-time"]}})
    agent = Agent(name="t{n}_{m}", instructions="reply {m}", mcp_servers=[server])
    result = await Runner.run(agent, "ping {m}")
    assert result.final_output is not None
    values = [{values}]
    assert sum(values) == {total}
"""

_LIB_CASE = '''

class Component{n}_{m}:
    """Part {m} of module {n}: a typed record with a few helpers."""

    def __init__(self, name: str, limit: int = {m}) -> None:
        self.name = name
        self.limit = limit
        self.items: list[str] = []

    def add(self, item: str) -> None:
        if len(self.items) >= self.limit:
            raise ValueError(f"{{self.name}}: full at {{self.limit}}")
        self.items.append(item)

    def render(self) -> str:
        return ", ".join(sorted(self.items)) or "(empty)"
'''


def generate_agents_tree(root: Path, seed: int = 11) -> dict[str, int]:
    rng = random.Random(seed)
    if root.exists():
        shutil.rmtree(root)
    counts = {"python": 0, "agent_python": 0, "config": 0, "lines": 0}

    def write(rel: str, text: str, agent: bool) -> None:
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        counts["python"] += 1
        counts["agent_python"] += agent
        counts["lines"] += text.count("\n")

    for n in range(300):  # the SDK itself (relative imports: not agent code by itself)
        body = "from __future__ import annotations\n\nfrom .items import Item  # noqa\n"
        body += "".join(_LIB_CASE.format(n=n, m=m) for m in range(rng.randint(20, 80)))
        write(f"src/agents/part{n // 50}/mod{n:03d}.py", body, False)
    for n in range(250):
        write(f"examples/topic{n // 25}/example_{n:03d}.py", _EXAMPLE.format(
            n=n, approval="True" if n % 3 else "False"), True)  # fmt: skip
    for n in range(370):
        cases = []
        for m in range(rng.randint(20, 60)):
            values = [rng.randint(0, 99) for _ in range(rng.randint(4, 30))]
            cases.append(_TEST_CASE.format(n=n, m=m, values=", ".join(map(str, values)),
                                           total=sum(values)))  # fmt: skip
        write(f"tests/area{n // 40}/test_{n:03d}.py", _TEST_HEAD + "".join(cases), True)
    for rel, text in (
        ("pyproject.toml", '[project]\nname = "agents"\nversion = "0.1.0"\n'),
        (".github/workflows/tests.yml", "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n"),
        ("mkdocs.yml", "site_name: agents\n"),
    ):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
        counts["config"] += 1
    return counts

"""The TS/JS readers find the nodes they read with a tree-sitter query (issue 25, speed):
the same nodes, in the same order, as the walk of every named node they replaced, on every
TS/JS file of the project, on gemini-cli-shaped tests the grammar cannot wholly parse, and
on nested tables where a parent and its child start at the same byte."""

from __future__ import annotations

from pathlib import Path

import pytest
import tree_sitter as ts

from agentguard.inspect.project.ts_agents import _language
from agentguard.inspect.project.ts_eval import _descendants, typed_descendants
from agentguard.inspect.project.ts_mcp_servers import _NAMED_BODIES, _READ

ROOT = Path(__file__).resolve().parents[3]
_KINDS = [_READ, _NAMED_BODIES, ("call_expression",), ("variable_declarator",)]

# gemini-cli packages/cli/src/config/config.test.ts: `importOriginal<typeof import("x")>()`
# is beyond the grammar (an ERROR node), tables and calls on both sides of it
_BROKEN = b"""
vi.mock('os', async (importOriginal) => {
  const actualOs = await importOriginal<typeof import('os')>();
  return { ...actualOs, homedir: vi.fn(() => '/mock/home/user') };
});
const settings = { mcpServers: { a: { command: 'node', args: f(g(1)) } } };
settings.mcpServers.b = { command: h(i(), j({ k: 1 })) };
x ??= y(z = w(), { p: q });
"""


def _same(path: str, data: bytes) -> int:
    language = _language(path)
    root = ts.Parser(language).parse(data).root_node
    every = _descendants(root)
    for kinds in _KINDS:
        walked = [n.id for n in every if n.type in kinds]
        assert [n.id for n in typed_descendants(root, language, kinds)] == walked, (path, kinds)
    return len(every)


def test_the_query_finds_what_the_walk_found_on_every_ts_file_of_the_project() -> None:
    files = [p for ext in ("ts", "tsx", "js", "mjs") for p in ROOT.glob(f"tests/**/*.{ext}")]
    assert len(files) >= 5
    assert sum(_same(str(p), p.read_bytes()) for p in files) > 500


@pytest.mark.parametrize("path", ["config.test.ts", "config.test.tsx", "config.test.js"])
def test_the_query_finds_what_the_walk_found_in_a_tree_with_errors(path: str) -> None:
    language = _language(path)
    assert ts.Parser(language).parse(_BROKEN).root_node.has_error
    assert _same(path, _BROKEN) > 50

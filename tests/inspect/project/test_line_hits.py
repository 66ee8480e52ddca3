"""The line readers find their lines without splitting the text, and the ``mcpServers``
test runs as two literal-led scans: each answers as the slower form it replaced.

Modelled on the field: pydantic-ai's 1,400 recorded HTTP exchanges (150 MB of YAML) name
``gemini`` and ``claude`` models in every response; the ``codex``/``gemini`` and ``claude``
line readers split each of them into lines and stripped every line (2.3 s of a 5 s run).
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project import cli_flags, engine_cli, servers_needle
from agentguard.inspect.project.line_hits import lines_holding


def _holding(text: str, words: tuple[str, ...]) -> list[int]:
    return [i for i, line in enumerate(text.splitlines()) if any(w in line for w in words)]


_PIECES = st.sampled_from(
    [
        "claude", "codex", "gemini", "claude_args:", "--yolo", "-s", "x", " ", "  ", "\t",
        "\n", "\r\n", "\r", "\v", "\x1c", "\u2028", "\\", "\\\n", "#", "//", "[", "]", "(",
        ")", ",", '"', "é",
    ]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=30))
def test_the_lines_found_are_those_of_splitlines(pieces: list[str]) -> None:
    text = "".join(pieces)
    for words in (("claude",), ("codex", "gemini")):
        hits, lines = lines_holding(text, words)
        assert hits == _holding(text, words)
        assert len(lines) == len(text.splitlines())
        assert list(lines) == text.splitlines()
        assert [lines[i] for i in reversed(range(len(lines)))] == text.splitlines()[::-1]


def _old_engine_lines(text: str) -> list[tuple[int, str]]:
    """engine_cli's reader as it was: every line visited."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start, line = i, lines[i]
        if line.lstrip().startswith(("#", "//")) or ("codex" not in line and "gemini" not in line):
            i += 1
            continue
        parts = [line]
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines) and i - start < 30:
            i += 1
            parts.append(lines[i])
        out.append((start + 1, " ".join(p.rstrip().rstrip("\\") for p in parts)))
        i += 1
    return out


def _old_claude_lines(text: str) -> list[tuple[int, str]]:
    """cli_flags' reader as it was: every line visited."""
    lines = text.splitlines()
    out: list[tuple[int, str]] = []
    i = 0
    while i < len(lines):
        start = i
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(("#", "//")) or "claude" not in line:
            i += 1
            continue
        parts = [line]
        if stripped.startswith("claude_args:"):
            indent = len(line) - len(stripped)
            while i + 1 < len(lines) and i - start < 30:
                nxt = lines[i + 1]
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                i += 1
                parts.append(nxt)
            out.append((start + 1, " ".join(p.strip() for p in parts)))
            i += 1
            continue
        depth = line.count("[") - line.count("]") + line.count("(") - line.count(")")
        while i + 1 < len(lines) and depth >= 0:
            tail = parts[-1].rstrip()
            if not (tail.endswith(("\\", ",")) or depth > 0) or i - start >= 30:
                break
            i += 1
            nxt = lines[i]
            if not nxt.lstrip().startswith(("#", "//")):
                parts.append(nxt)
                depth += nxt.count("[") - nxt.count("]") + nxt.count("(") - nxt.count(")")
        out.append((start + 1, " ".join(p.rstrip().rstrip("\\") for p in parts)))
        i += 1
    return out


@settings(max_examples=600, deadline=None)
@given(st.lists(_PIECES, max_size=40))
def test_the_logical_lines_are_those_of_the_line_by_line_readers(pieces: list[str]) -> None:
    text = "".join(pieces)
    assert engine_cli._logical_lines(text) == _old_engine_lines(text)
    assert cli_flags._logical_lines(text) == _old_claude_lines(text)


def _cpu(fn: object, text: str) -> tuple[float, object]:
    best, got = float("inf"), None
    for _ in range(3):
        start = time.process_time()
        got = fn(text)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best, got


def test_a_cassette_costs_less_than_a_loop_over_its_lines() -> None:
    # 8 MB of short lines that name a model on one line in fifty, as pydantic-ai's
    # recorded exchanges do (66 MB, 330,000 lines: 0.37 s of CPU line by line, 0.2 s now)
    named = "      model: gemini-2.5-flash  # claude-3-5-haiku answered before\n"
    body = "      - '%s'\n" % ("bG9yZW0gaXBzdW0gZG9sb3Igc2l0IGFtZXQ=" * 6)
    block = named + body * 49
    text = block * (8_000_000 // len(block))

    pairs = [
        (engine_cli._logical_lines, _old_engine_lines),
        (cli_flags._logical_lines, _old_claude_lines),
    ]
    for new, old in pairs:  # each reader against its own line-by-line form
        took, before = float("inf"), float("inf")
        for _ in range(3):  # (alternated, best of each: robust to a loaded machine)
            t, fast = _cpu(new, text)
            b, slow = _cpu(old, text)
            took, before = min(took, t), min(before, b)
        assert fast == slow
        # (0.6 on one CPU, 0.75-0.92 on another, where the line split is cheaper: never
        # more than the loop it replaced)
        assert took < before, (new.__module__, took, before)


_LETTERS = st.sampled_from(
    ["m", "c", "p", "S", "e", "r", "v", "s", "\\u006d", "\\x63", "\\u{70}", "\\u0053",
     "\\x65", "\\u{072}", "\\u0076", "\\x73", "\\u00", "\\x", "\\", "mcpServers", "x"]
)  # fmt: skip


@settings(max_examples=600, deadline=None)
@given(st.lists(_LETTERS, max_size=24))
def test_the_servers_needle_answers_as_its_pattern(pieces: list[str]) -> None:
    data = "".join(pieces).encode()
    expected = b"mcpServers" in data or servers_needle.spelled_bytes().search(data) is not None
    assert servers_needle.names_servers(data) is expected

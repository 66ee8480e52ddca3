"""Property-based: generated hostile project folders and lock inputs.

The folders are real (the walk runs): hostile contents (alias bombs, runaway nesting,
bad encodings, NUL bytes, SDK-laden garbage, mutated real fixtures) under the names the
scan reads, plus symlinks (loops, to folders, outside), FIFOs and deep folder chains. The
promise: a result, never an exception; every failure a well-formed failed source; the
folder left as it was; bounded time. For `lock`'s own inputs, the only outcome besides
success is a usage error.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from agentguard.engine import UsageError
from agentguard.engine.project import inspect_project
from agentguard.findings import SourceStatus
from agentguard.lock.inputs import read_inputs
from tests.hostile.profiles import hostile
from tests.hostile.promises import failed, snapshot, within

pytestmark = pytest.mark.fuzz

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SEEDS = sorted(
    p.read_bytes()[:4000]
    for p in FIXTURES.glob("AG*/*/*/**/*")
    if p.is_file() and p.name != "expected.json" and p.stat().st_size < 20_000
)
NAMES = [
    "compose.yaml",
    "docker-compose.yml",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".devcontainer/devcontainer.json",
    "Dockerfile",
    "pyproject.toml",
    "requirements.txt",
    "agent.py",
    "pkg/__init__.py",
    "agent.ts",
    "scripts/run.sh",
    "package.json",
    "CLAUDE.md",
]


def _alias_bomb(width: int, depth: int) -> bytes:
    lines = ["x-0: &a0 [" + ",".join(["lol"] * width) + "]"]
    for i in range(1, depth):
        lines.append(f"x-{i}: &a{i} [" + ",".join([f"*a{i - 1}"] * width) + "]")
    lines.append(f"services:\n  agent:\n    image: x\n    environment: *a{depth - 1}\n")
    return "\n".join(lines).encode()


@st.composite
def contents(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["seed", "nest", "bomb", "encoding", "sdk", "bytes", "mutated"]))
    event(f"content: {kind}")
    if kind == "seed":
        return draw(st.sampled_from(SEEDS))
    if kind == "nest":
        n = draw(st.sampled_from([50, 101, 1000, 30_000]))
        opener, closer = draw(
            st.sampled_from([("[", "]"), ('{"a":', "}"), ("a = [", "]"), ("- ", "")])
        )
        middle = "1" if opener.endswith(":") else ""
        return (opener * n + middle + closer * n).encode()
    if kind == "bomb":
        return _alias_bomb(draw(st.integers(2, 9)), draw(st.integers(2, 9)))
    if kind == "encoding":
        text = draw(st.sampled_from(SEEDS)).decode("utf-8", "replace")
        codec = draw(st.sampled_from(["utf-16", "utf-32", "latin-1", "cp1252", "utf-8-sig"]))
        return text.encode(codec, "replace")
    if kind == "sdk":
        head = draw(
            st.sampled_from(
                [
                    b"from claude_agent_sdk import ClaudeAgentOptions, query\n",
                    b'import { query } from "@anthropic-ai/claude-agent-sdk";\n',
                    b"claude -p x --dangerously-skip-permissions ",
                ]
            )
        )
        return head + draw(st.binary(max_size=300))
    if kind == "bytes":
        return draw(st.binary(max_size=500))
    seed = bytearray(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 5))):
        pos = draw(st.integers(0, max(0, len(seed))))
        seed[pos:pos] = draw(
            st.sampled_from([b"\x00", b"\xff", b"{", b"*a", b"&a ", b"\\\n", b'"', b"[["])
        )
    return bytes(seed)


@st.composite
def projects(draw: st.DrawFn) -> dict[str, bytes]:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=6, unique=True))
    return {name: draw(contents()) for name in names}


SPECIALS = st.lists(
    st.sampled_from(["loop", "dir-link", "outside-link", "fifo", "deep", "dangling"]),
    max_size=3,
    unique=True,
)


def _specials(root: Path, outside: Path, which: list[str]) -> None:
    for s in which:
        if s == "loop":
            (root / "loop.py").symlink_to("loop.py")
        elif s == "dir-link":
            (root / "up").symlink_to("..", target_is_directory=True)
        elif s == "outside-link":
            (root / ".mcp.json").unlink(missing_ok=True)
            (root / ".mcp.json").symlink_to(outside)
        elif s == "fifo":
            (root / "compose.yaml").unlink(missing_ok=True)
            os.mkfifo(root / "compose.yaml")
        elif s == "deep":
            deep = root.joinpath(*["d"] * 60)
            deep.mkdir(parents=True)
            (deep / "agent.py").write_text("from claude_agent_sdk import query\n")
        elif s == "dangling":
            (root / "gone.py").symlink_to(root / "nowhere.py")


@hostile("config-files")
@given(files=projects(), specials=SPECIALS)
def test_generated_project_folders(
    tmp_path: Path, files: dict[str, bytes], specials: list[str]
) -> None:
    work = tmp_path / "w"
    if work.exists():
        import shutil

        shutil.rmtree(work)
    root = work / "project"
    root.mkdir(parents=True)
    outside = work / "outside.json"
    outside.write_text('{"mcpServers": {}}')
    for rel, data in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(data)
    _specials(root, outside, specials)
    before = snapshot(work)
    with within(30):
        result = inspect_project(root)
    assert snapshot(work) == before
    for s in failed(result.sources):
        event(f"failed: {s.error_code}")
    for s in result.sources:
        assert s.status in (SourceStatus.OK, SourceStatus.FAILED, SourceStatus.SKIPPED)
    for finding in result.findings:
        assert finding.rule_id and finding.fix.description and finding.locations
        json.dumps(finding.to_json())
    json.dumps(result.facts)


# -- lock's own inputs ---------------------------------------------------------------------

TOML_VALUES = st.recursive(
    st.none().map(lambda _: '"x"')
    | st.integers(-3, 3).map(str)
    | st.text(max_size=10).map(json.dumps),
    lambda inner: st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
    max_leaves=8,
)
REQUIREMENTS = st.sampled_from(
    [
        "mcp>=1",
        "claude-agent-sdk==0.2.95",
        "mcp[cli]>=1,<2 ; python_version >= '3.10'",
        "-r base.in",
        "-r requirements.in",
        "-r ../outside.in",
        "-r /etc/hostname",
        "--index-url http://x",
        "-e .",
        "git+https://example.invalid/x.git",
        "mcp==",
        "\x00",
        "\\",
        "mcp \\",
        "# comment",
        "",
    ]
)


@hostile("lock-inputs")
@given(
    kind=st.sampled_from(["pyproject", "requirements"]),
    deps=st.lists(REQUIREMENTS, max_size=6),
    extra=TOML_VALUES,
    nest=st.sampled_from([0, 10, 5000]),
    raw=st.one_of(st.none(), st.binary(max_size=200)),
)
def test_generated_lock_inputs(
    tmp_path: Path, kind: str, deps: list[str], extra: str, nest: int, raw: bytes | None
) -> None:
    root = tmp_path / "lockin"
    root.mkdir(exist_ok=True)
    for p in root.iterdir():
        p.unlink()
    (root / "base.in").write_text("mcp>=1\n-r requirements.in\n")
    if kind == "pyproject":
        listed = ", ".join(json.dumps(d) for d in deps)
        text = f'[project]\nname = "bot"\nversion = "0.1"\ndependencies = [{listed}]\nx = {extra}\n'
        text += "y = " + "[" * nest + "]" * nest + "\n"
        (root / "pyproject.toml").write_bytes(raw if raw is not None else text.encode())
    else:
        (root / "requirements.in").write_bytes(raw if raw is not None else "\n".join(deps).encode())
    with within(20):
        try:
            inputs = read_inputs(root)
        except UsageError as exc:
            event("usage error")
            assert str(exc).strip()
        else:
            event("read")
            assert inputs.input_hash.startswith("sha256:")

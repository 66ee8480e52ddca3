"""claude-code-action steps in GitHub workflows: a step is an agent even without
``claude_args`` (its defaults apply). A line reader over the step's block, like
:mod:`.cli_flags`; facts only. (Who may start the step, its ref and its inputs are read by
:mod:`.workflows` for AG330/AG331.)"""

from __future__ import annotations

import re

from agentguard.inspect.project.model import AgentConfig
from agentguard.inspect.project.needles import ACTION_NEEDLE

NEEDLE = ACTION_NEEDLE
# the action itself: `anthropics/claude-code-action@ref`, not an action kept in a folder of
# its repository (`anthropics/claude-code-action/agent-approval-check@main` runs no agent)
_USES = re.compile(
    r"^(\s*)(?:-\s+)?uses:\s*['\"]?anthropics/claude-code(?:-base)?-action(?=@|['\"\s]|$)"
)
_KEY = re.compile(r"^\s*([A-Za-z_][\w-]*):\s*(.*?)\s*(?:#.*)?$")


def _value(raw: str) -> str:
    return raw.strip().strip("'\"")


def action_steps(path: str, data: bytes, *, origin: str = "project") -> list[AgentConfig]:
    """A configuration per step without claude_args (the action's defaults apply)."""
    lines = data.decode("utf-8", "replace").splitlines()
    configs: list[AgentConfig] = []
    for i, line in enumerate(lines):
        m = _USES.match(line)
        if m is None or line.lstrip().startswith("#"):
            continue
        start, end = _step_block(lines, i, len(m.group(1)))
        keys: dict[str, tuple[int, str]] = {}
        for j in range(start, end):
            km = _KEY.match(lines[j])
            if km is not None and not lines[j].lstrip().startswith("#"):
                keys.setdefault(km.group(1), (j + 1, km.group(2)))
        if "claude_args" not in keys:
            configs.append(
                AgentConfig(
                    engine="claude CLI",
                    path=path,
                    line=i + 1,
                    label="claude-code-action step (no claude_args: the action's defaults)",
                    origin=origin,
                )
            )
    return configs


def _step_block(lines: list[str], at: int, indent: int) -> tuple[int, int]:
    """Lines of the step holding line ``at``: from its `- ` to the next step (or less
    indented text). ``indent``: the indentation of the `uses:` line."""
    first = at
    while first > 0:
        prev = lines[first - 1]
        if prev.strip() and len(prev) - len(prev.lstrip()) < indent:
            if prev.lstrip().startswith("- "):
                first -= 1
            break
        first -= 1
    dash = len(lines[first]) - len(lines[first].lstrip())
    last = at + 1
    while last < len(lines):
        nxt = lines[last]
        if nxt.strip() and not nxt.lstrip().startswith("#"):
            depth = len(nxt) - len(nxt.lstrip())
            if depth < dash or (depth == dash and nxt.lstrip().startswith("- ")):
                break
        last += 1
    return first, last

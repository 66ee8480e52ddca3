"""The hardened replacement of a ``codex``/``gemini`` command line or an agent-action input
(pure, no I/O): the same line with only the flags that switch the sandbox or the approval
step off changed, in the line's own syntax (a shell line, or the JSON/YAML list of an
exec-form ``ENTRYPOINT``/``command``).

- Codex: ``--dangerously-bypass-approvals-and-sandbox`` (``--yolo``) becomes ``--sandbox
  workspace-write`` (plus ``--ask-for-approval on-request`` for the interactive CLI;
  ``codex exec`` never asks, so it gets the sandbox alone); a ``danger-full-access`` or
  run-time sandbox value becomes ``workspace-write``; an ``approval_policy``/``-a`` of
  ``never`` becomes ``on-request`` (interactive only).
- Gemini: ``--yolo``/``-y`` dropped, ``--approval-mode yolo`` becomes ``default``, a sandbox
  switched off is switched on, ``--allowed-tools`` loses the bare ``run_shell_command``.
- openai/codex-action: ``sandbox: workspace-write``; ``codex-args`` as a ``codex exec``
  line; ``safety-strategy: drop-sudo``.

Flags are changed only after the command word, so ``npx -y @google/gemini-cli`` keeps
npx's ``-y``.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from agentguard.harden.engine_configs import CODEX_APPROVAL, CODEX_SANDBOX
from agentguard.inspect.project.engine_settings import SHELL_TOOL_NAMES

_COMMAND = re.compile(
    r"(?:^|(?<=[\s\"'`\[(/;&|=]))(@openai/codex|@google/gemini-cli|codex|gemini)\b(@[\w.^~-]+)?"
)
_Q = r"[\"']"
_SEP = r"(?:\s+|=|[\"']\s*,\s*[\"'])"  # flag and value: `-s v`, `-s=v`, `"-s", "v"`
_VALUE = r"[^\s\"',\]\\]+"


def command_at(line: str, engine: str) -> int | None:
    """Where the command word of ``engine`` ("codex"/"gemini") ends in ``line``."""
    for m in _COMMAND.finditer(line):
        if engine in m.group(1):
            return m.end()
    return None


def _quoted(line: str, start: int, end: int) -> str | None:
    """The quote around line[start:end] when it is one element of an exec-form list."""
    if start > 0 and end < len(line) and line[start - 1] == line[end] and line[end] in "\"'":
        return line[end]
    return None


def _replace_flag(line: str, flag: re.Pattern[str], shell: str, listed: list[str]) -> str:
    out, last = [], 0
    for m in flag.finditer(line):
        q = _quoted(line, m.start(), m.end())
        new = shell if q is None else f"{q}, {q}".join(listed)
        out += [line[last : m.start()], new]
        last = m.end()
    return "".join(out) + line[last:]


_BYPASS = re.compile(r"(?<![\w-])(?:--dangerously-bypass-approvals-and-sandbox|--yolo)(?![\w-])")
_CODEX_SANDBOX = re.compile(rf"((?<![\w-])(?:--sandbox|-s){_SEP}{_Q}?)({_VALUE})")
_SANDBOX_KEY = re.compile(rf"(sandbox_mode\s*=\s*\\?{_Q}?)({_VALUE})")
_CODEX_ASK = re.compile(rf"((?<![\w-])(?:--ask-for-approval|-a){_SEP}{_Q}?)never\b")
_APPROVAL_KEY = re.compile(rf"(approval_policy\s*=\s*\\?{_Q}?)never\b")


def _codex(rest: str, headless: bool) -> str:
    flags = ["--sandbox", CODEX_SANDBOX]
    if not headless:
        flags += ["--ask-for-approval", CODEX_APPROVAL]
    rest = _replace_flag(rest, _BYPASS, " ".join(flags), flags)

    def sandbox(m: re.Match[str]) -> str:
        return m.group(1) + (m.group(2) if m.group(2) == "read-only" else CODEX_SANDBOX)

    rest = _SANDBOX_KEY.sub(sandbox, _CODEX_SANDBOX.sub(sandbox, rest))
    if not headless:
        rest = _APPROVAL_KEY.sub(
            rf"\g<1>{CODEX_APPROVAL}", _CODEX_ASK.sub(rf"\g<1>{CODEX_APPROVAL}", rest)
        )
    return rest


_GEMINI_YOLO_LISTED = re.compile(
    r"\s*[\"'](?:--yolo|-y)[\"']\s*,|,\s*[\"'](?:--yolo|-y)[\"'](?=\s*\])"
)
_GEMINI_YOLO = re.compile(r"[ \t]+(?:--yolo|-y)(?=\s|$|[;&|)\"'])")
_GEMINI_MODE = re.compile(rf"((?<![\w-])--approval-mode{_SEP}{_Q}?)yolo\b")
_GEMINI_SANDBOX_OFF = re.compile(
    r"(?<![\w-])(?:--sandbox=(?:false|0|no)|--no-sandbox)(?![\w-])", re.I
)
_GEMINI_ALLOWED = re.compile(rf"((?<![\w-])--allowed-?[Tt]ools{_SEP}{_Q}?)([^\s\"']+)")


def _gemini(rest: str) -> str:
    rest = _GEMINI_YOLO.sub("", _GEMINI_YOLO_LISTED.sub("", rest))
    rest = _GEMINI_MODE.sub(r"\g<1>default", rest)
    rest = _GEMINI_SANDBOX_OFF.sub("--sandbox", rest)

    def allowed(m: re.Match[str]) -> str:
        tools = [t for t in m.group(2).split(",") if t and t.strip() not in SHELL_TOOL_NAMES]
        return m.group(1) + ",".join(tools) if tools else m.group(0)

    return _GEMINI_ALLOWED.sub(allowed, rest)


def rewrite_lines(lines: list[str], engine: str, *, headless: bool) -> list[str]:
    """One logical command line (its physical lines, joined by backslashes), hardened."""
    at = command_at(lines[0], engine) if lines else None
    if at is None:
        return list(lines)
    change: Callable[[str], str] = (lambda s: _codex(s, headless)) if engine == "codex" else _gemini
    return [lines[0][:at] + change(lines[0][at:]), *(change(rest) for rest in lines[1:])]


_ACTION_SANDBOX = re.compile(r"^(\s*sandbox:\s*)([\"']?)[^\"'#\s]+\2")
_ACTION_ARGS = re.compile(r"^(\s*codex-args:\s*)(.*)$")
_SAFETY = re.compile(r"^(\s*safety-strategy:\s*)([\"']?)(?:unsafe|read-only)\2")


def rewrite_action_line(line: str) -> str:
    """One ``with:`` input line of openai/codex-action, hardened."""
    if _ACTION_SANDBOX.match(line):
        return _ACTION_SANDBOX.sub(rf"\g<1>{CODEX_SANDBOX}", line)
    if _SAFETY.match(line):
        return _SAFETY.sub(r"\g<1>drop-sudo", line)
    m = _ACTION_ARGS.match(line)
    if m:  # the flags `codex exec` gets
        return m.group(1) + _codex(m.group(2), headless=True)
    return line

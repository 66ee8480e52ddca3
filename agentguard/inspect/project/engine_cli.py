"""``codex`` and ``gemini`` command lines in scripts, Dockerfiles, compose files, workflows.

A line-level reader like :mod:`.cli_flags` (which reads ``claude``): it finds the command
word (``codex``, ``/usr/local/bin/gemini``, ``npx @openai/codex``, ``npx
@google/gemini-cli``), joins backslash continuations, and reads the flags that decide
the sandbox and the approval step. Flag names are those of the engines' own parsers:

- Codex CLI: ``--sandbox``/``-s`` (read-only | workspace-write | danger-full-access),
  ``--ask-for-approval``/``-a`` (untrusted | on-failure | on-request | never),
  ``--full-auto`` (workspace-write + on-request), ``--dangerously-bypass-approvals-and-sandbox``
  (alias ``--yolo``: danger-full-access + never), ``-c``/``--config key=value`` for
  ``sandbox_mode`` and ``approval_policy``, ``--profile``/``-p``; ``codex exec`` never asks.
- Gemini CLI: ``--yolo``/``-y``, ``--approval-mode`` (default | auto_edit | plan | yolo),
  ``--sandbox``/``-s`` (and ``--sandbox=false``, ``--no-sandbox``), ``--allowed-tools``.

A command line without any of these flags says nothing about the policy and yields
nothing (``codex --version`` is not a configuration).
"""

from __future__ import annotations

import re

from agentguard.inspect.project.engine_model import CODEX, GEMINI, EnginePolicy
from agentguard.inspect.project.line_hits import lines_holding
from agentguard.inspect.project.model import Option, Unknown
from agentguard.inspect.project.needles import has_engine_cli_use as has_engine_cli_use
from agentguard.inspect.project.shell_words import shell_words

_COMMAND = re.compile(rb"(?:^|[\s\"'`\[(/;&|=])(?:codex|gemini|@openai/codex|@google/gemini-cli)\b")
_SEPARATORS = {"&&", "||", "|", ";", "&", "(", ")"}
_PACKAGES = {"@openai/codex": CODEX, "@google/gemini-cli": GEMINI}
_RUNNERS = ("npx", "bunx", "-y", "--yes", "exec", "dlx", "pnpx")
MAX_JOIN = 30


def _logical_lines(text: str) -> list[tuple[int, str]]:
    """(number, text) of each line that holds ``codex`` or ``gemini`` and is no comment,
    joined with its backslash continuations (a line joined is not read again)."""
    hits, lines = lines_holding(text, ("codex", "gemini"))
    out: list[tuple[int, str]] = []
    i = 0
    for start in hits:
        if start < i:
            continue  # (joined to the line before)
        i = start
        line = lines[i]
        if line.lstrip().startswith(("#", "//")):
            i += 1
            continue
        parts = [line]
        while parts[-1].rstrip().endswith("\\") and i + 1 < len(lines) and i - start < MAX_JOIN:
            i += 1
            parts.append(lines[i])
        out.append((start + 1, " ".join(p.rstrip().rstrip("\\") for p in parts)))
        i += 1
    return out


# The engine as a command inside a quoted script: at its start or after a shell operator,
# after `VAR=value` words (`sh -c "cd /w && codex exec ..."`).
_EMBEDDED = re.compile(
    r"(?:^|&&|\|\||[;|&(])\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:exec\s+)?"
    r"(?:(?:\S*/)?(?:codex|gemini)(?:\s|$)|(?:npx|bunx|pnpx)\s+(?:-y\s+|--yes\s+)?"
    r"(?:@openai/codex|@google/gemini-cli)(?:@\S*)?(?:\s|$))"
)
_SHELL_C = re.compile(r"-[a-z]*c[a-z]*")  # -c, -lc, -ec, -xec
_SHELLS = frozenset({"sh", "bash", "ash", "dash", "zsh"})
MAX_DEPTH = 2  # quoted scripts inside quoted scripts split again


def _is_script(before: list[str]) -> bool:
    """The quoted word after ``before`` is a script: the argument of a shell's ``-c`` or
    the whole value of a key (a compose ``command:``, a workflow ``run:``, a package.json
    script). A prompt that mentions the engine (``gemini -p "ask codex ..."``, ``echo
    "codex ..."``) is not."""
    if not before:
        return False
    if before[-1].endswith(":"):
        return True
    if not _SHELL_C.fullmatch(before[-1]):
        return False
    for word in reversed(before[:-1]):
        if word in _SEPARATORS:
            return False
        if word.rsplit("/", 1)[-1] in _SHELLS:
            return True
    return False


def _tokens(line: str, depth: int = 0) -> list[str]:
    """Tokens of a line; a quoted shell script that holds an engine command is split again
    (in brackets, so that flags end with it), with the escapes of a double-quoted string
    (JSON's, the shell's) undone."""
    out: list[str] = []
    for text, quoted in shell_words(line):  # (a double-quoted string's escapes are undone)
        script = quoted and len(text.split()) > 1  # one word is an argv item
        if script and depth < MAX_DEPTH and _is_script(out) and _EMBEDDED.search(text):
            out.extend(["(", *_tokens(text, depth + 1), ")"])
        else:
            out.append(text)
    return out


def _engine_of(tokens: list[str], i: int) -> str | None:
    tok = tokens[i]
    base = tok.rsplit("/", 1)[-1]
    if base == "codex" and not tok.startswith("@"):
        return CODEX
    if base == "gemini" and not tok.startswith("@"):
        return GEMINI
    pkg = tok.split("@", 2)
    name = "@" + pkg[1] if tok.startswith("@") and len(pkg) > 1 else tok
    if name in _PACKAGES and i > 0 and tokens[i - 1] in _RUNNERS:
        return _PACKAGES[name]
    return None


def engine_cli_policies(path: str, data: bytes) -> list[EnginePolicy]:
    """Every ``codex``/``gemini`` invocation in ``data`` that sets the sandbox or approvals."""
    text = data.decode("utf-8", "replace")
    out: list[EnginePolicy] = []
    for line_no, line in _logical_lines(text):
        tokens = _tokens(line)
        for i in range(len(tokens)):
            engine = _engine_of(tokens, i)
            if engine is None:
                continue
            policy = read_flags(engine, path, line_no, tokens[i + 1 :], "command line")
            if policy is not None:
                out.append(policy)
            break
    return out


def _value(args: list[str], i: int, inline: str | None) -> tuple[str | None, int]:
    if inline is not None:
        return inline, i
    if i < len(args) and not args[i].startswith("-") and args[i] not in _SEPARATORS:
        return args[i], i + 1
    return None, i


def _literal(value: str, expr: str) -> object:
    """A flag value as read: text, or unknown when it is filled in at run time."""
    if "$" in value:
        return Unknown(expr, "set at run time")
    return value.strip("'\"")


def read_flags(
    engine: str, path: str, line: int, args: list[str], label: str
) -> EnginePolicy | None:
    """The policy one invocation's arguments set; None when they set none of it."""
    sandbox: Option | None = None
    approval: Option | None = None
    preapproved: Option | None = None
    profile: str | None = None
    headless = bool(args) and args[0] == "exec" and engine == CODEX
    i = 0
    while i < len(args):
        tok = args[i]
        if tok in _SEPARATORS:
            break
        flag, eq, rest = tok.partition("=")
        inline = rest if eq else None
        i += 1
        if engine == CODEX:
            if flag in ("--dangerously-bypass-approvals-and-sandbox", "--yolo"):
                sandbox = Option("danger-full-access", line, flag)
                approval = Option("never", line, flag)
            elif flag == "--full-auto":
                sandbox = Option("workspace-write", line, flag)
                approval = Option("on-request", line, flag)
            elif flag in ("--sandbox", "-s"):
                value, i = _value(args, i, inline)
                if value is not None:
                    sandbox = Option(_literal(value, tok), line, f"{flag} {value}")
            elif flag in ("--ask-for-approval", "-a"):
                value, i = _value(args, i, inline)
                if value is not None:
                    approval = Option(_literal(value, tok), line, f"{flag} {value}")
            elif flag in ("-c", "--config"):
                value, i = _value(args, i, inline)
                if value and value.endswith("=") and i < len(args):  # key="quoted value"
                    value, i = value + args[i], i + 1
                key, _, setting = (value or "").partition("=")
                if key.strip() == "sandbox_mode":
                    sandbox = Option(_literal(setting, value or ""), line, f"{flag} {value}")
                elif key.strip() == "approval_policy":
                    approval = Option(_literal(setting, value or ""), line, f"{flag} {value}")
            elif flag in ("--profile", "-p"):
                value, i = _value(args, i, inline)
                profile = value
        else:
            if flag in ("--yolo", "-y"):
                approval = Option("yolo", line, flag)
            elif flag == "--approval-mode":
                value, i = _value(args, i, inline)
                if value is not None:
                    approval = Option(_literal(value, tok), line, f"{flag} {value}")
            elif flag in ("--sandbox", "-s"):
                on = inline is None or inline.lower() not in ("false", "0", "no")
                sandbox = Option("true" if on else "false", line, tok)
            elif flag == "--no-sandbox":
                sandbox = Option("false", line, flag)
            elif flag in ("--allowed-tools", "--allowedTools"):
                value, i = _value(args, i, inline)
                tools = tuple(t for t in re.split(r"[,\s]+", value or "") if t)
                if any(t in ("run_shell_command", "ShellTool") for t in tools):
                    preapproved = Option(tools, line, f"{flag} {value}")
    if sandbox is None and approval is None and preapproved is None:
        return None
    name = "codex" if engine == CODEX else "gemini"
    return EnginePolicy(
        engine=engine,
        path=path,
        line=line,
        label=f"{name} {label}",
        sandbox=sandbox,
        approval=approval,
        shell_preapproved=preapproved,
        headless=headless,
        profile=profile,
    )

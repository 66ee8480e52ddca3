"""The Codex and Gemini CLI change: hardened configuration files, replacement lines, and
which AG301/AG305 (and codex-action AG401) finding each one fixes. Pure: the files' text
was read by :func:`~agentguard.harden.code_gather.engine_texts`.

- A project ``.codex/config.toml`` or ``.gemini/settings.json`` with a finding (or whose
  sandbox setting a command line or action relies on) is written, hardened, at the same
  path in the output folder (:mod:`.engine_configs`). A file holding a literal secret is
  never copied: the finding stays open.
- A command line or a codex-action input gets its exact replacement in SUMMARY.md
  (:mod:`.engine_lines`). A replacement is claimed only when the rule, run over the
  replacement, reports nothing again.
- run-gemini-cli always runs ``gemini --yolo``: its hardened ``settings`` input (sandbox
  on, tools limited) lowers the finding but cannot remove it, so it stays open.
"""

from __future__ import annotations

import dataclasses
import posixpath
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agentguard.escape import md_code, md_fence, md_text
from agentguard.findings import Finding
from agentguard.harden.engine_configs import (
    action_settings_input,
    hardened_codex_config,
    hardened_gemini_settings,
    holds_secret,
    parse_config,
    still_reported,
)
from agentguard.harden.engine_lines import command_at, rewrite_action_line, rewrite_lines
from agentguard.harden.model import Claim, Open
from agentguard.inspect.project.engine_model import CODEX, GEMINI
from agentguard.inspect.project.model import Option, Unknown, redact_text

SUMMARY = "SUMMARY.md"
_CONFIG_LABELS = ("config.toml", "settings.json")
_GEMINI_ACTIONS = ("google-github-actions/run-gemini-cli", "google-gemini/gemini-cli-action")
_CODEX_HOW = 'sandbox_mode = "workspace-write", approval_policy = "on-request"; other keys kept'
_GEMINI_HOW = (
    "tools.sandbox on, security.disableYoloMode (the CLI refuses --yolo), tools.allowed "
    "without the bare run_shell_command; other keys kept"
)


@dataclass(frozen=True)
class LineChange:
    """Replace ``old`` (lines ``first``.. of ``path``) with ``new``; ``old`` empty: add
    ``new`` after line ``first``."""

    path: str
    first: int
    old: tuple[str, ...]
    new: tuple[str, ...]
    what: str


@dataclass
class EngineChanges:
    files: dict[str, str] = field(default_factory=dict)  # output file -> text
    written: dict[str, str] = field(default_factory=dict)  # original -> output file
    blocked: dict[str, str] = field(default_factory=dict)  # original -> why not written
    lines: dict[tuple[str, int], LineChange] = field(default_factory=dict)
    relies: set[tuple[str, int]] = field(default_factory=set)  # lines whose sandbox is a file's
    hows: dict[str, str] = field(default_factory=dict)  # original -> what the written one does
    still: dict[str, frozenset[str]] = field(default_factory=dict)  # ... and still reports
    notes: list[str] = field(default_factory=list)


def engine_finding(f: Finding) -> bool:
    if f.rule_id in ("AG301", "AG305"):
        return f.evidence.get("engine") in (CODEX, GEMINI)
    return f.rule_id == "AG401" and f.evidence.get("action") == "openai/codex-action"


def _where(f: Finding) -> tuple[str, int, str]:
    loc = f.locations[0]
    return loc.path or "", loc.line or 1, loc.note or ""


def _logical(lines: Sequence[str], first: int) -> tuple[str, ...]:
    end = first
    while end < len(lines) and lines[end - 1].rstrip().endswith("\\") and end - first < 30:
        end += 1
    return tuple(lines[first - 1 : end])


def _command_change(f: Finding, text: str) -> LineChange | None:
    path, line, note = _where(f)
    lines = text.splitlines()
    if not 0 < line <= len(lines):
        return None
    old = _logical(lines, line)
    word = "codex" if f.evidence.get("engine") == CODEX else "gemini"
    at = command_at(old[0], word)
    rest = old[0][at:].replace('"', " ").replace("'", " ").replace(",", " ").split()
    headless = word == "codex" and bool(rest) and rest[0] == "exec"
    return LineChange(
        path, line, old, tuple(rewrite_lines(list(old), word, headless=headless)), note
    )


def _still_found(change: LineChange, f: Finding, configs_fixed: bool) -> bool:
    """Does the rule, run over the replacement, still report ``f``'s rule?"""
    from agentguard.inspect.project.engine_cli import engine_cli_policies
    from agentguard.rules.agent_engines import check_engine_policy

    text = "\n".join(change.new).encode()
    for p in engine_cli_policies(change.path, text):
        if p.sandbox is None and configs_fixed:
            continue  # the sandbox comes from the hardened configuration file
        if p.sandbox is None:  # ... from a file that was not hardened: whatever it says
            why = "the project's file was not hardened"
            p = dataclasses.replace(p, sandbox=Option(Unknown("", why), p.line, why))
        if any(g.rule_id == f.rule_id for g in check_engine_policy(p)):
            return True
    return False


def _step_settings(f: Finding, text: str) -> LineChange | None:
    """The hardened ``settings`` input of the run-gemini-cli step ``f`` is about."""
    from agentguard.inspect.project.jsonc import load_jsonc
    from agentguard.inspect.project.lined import DocumentError
    from agentguard.inspect.project.workflows import read_workflow

    path, line, note = _where(f)
    try:
        steps = read_workflow(path, text.encode())
    except DocumentError:
        return None
    step = next((s for s in steps if s.line == line), None)
    lines = text.splitlines()
    if step is None or not 0 < line <= len(lines):
        return None
    indent = " " * (len(lines[line - 1]) - len(lines[line - 1].lstrip(" -")) + 2)
    got = step.input("settings")
    if got is None:  # added after the step's `with:` (or with one, after its `uses:`)
        added = tuple(action_settings_input({}, indent))
        given = [n for _k, _v, n in step.inputs]
        if not given:
            return LineChange(path, line, (), (f"{indent[:-2]}with:", *added), note)
        at = min(given) - 1
        if not (0 < at <= len(lines) and lines[at - 1].strip() == "with:"):
            return None
        return LineChange(path, at, (), added, note)
    value, at = got
    if not isinstance(value, str) or "${{" in value:
        return None
    try:
        doc = load_jsonc(value).value
    except DocumentError:
        return None
    if not isinstance(doc, dict):
        return None
    key_indent = len(lines[at - 1]) - len(lines[at - 1].lstrip())
    end = at
    while end < len(lines) and (
        not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > key_indent
    ):
        end += 1
    old = tuple(lines[at - 1 : end])
    return LineChange(path, at, old, tuple(action_settings_input(doc, " " * key_indent)), note)


def _config_paths(policies: Sequence[Mapping[str, Any]], engine: str) -> list[str]:
    return sorted(
        {
            str(p.get("path"))
            for p in policies
            if p.get("engine") == engine and str(p.get("label", "")).startswith(_CONFIG_LABELS)
        }
    )


def _relies_on_config(f: Finding, policies: Sequence[Mapping[str, Any]]) -> bool:
    path, line, _ = _where(f)
    return any(
        p.get("path") == path and p.get("sandbox") is None and p.get("line") == line
        for p in policies
        if not str(p.get("label", "")).startswith(_CONFIG_LABELS)
    )


def _safe_rel(path: str) -> bool:
    norm = posixpath.normpath(path)
    return not path.startswith("/") and ".." not in norm.split("/") and norm == path


def plan_engines(
    findings: Sequence[Finding],
    texts: Mapping[str, str],
    policies: Sequence[Mapping[str, Any]],
    header: Sequence[str],
) -> EngineChanges:
    from agentguard.secret_text import redact_step

    out = EngineChanges()
    wanted: set[str] = set()
    keep_yolo = False  # a run-gemini-cli step without `settings` reads the project's file
    for f in findings:
        if not engine_finding(f) or not f.locations:
            continue
        path, line, note = _where(f)
        text = texts.get(path)
        if note.startswith(_CONFIG_LABELS):
            wanted.add(path)
            continue
        if _relies_on_config(f, policies):
            out.relies.add((path, line))
            wanted.update(_config_paths(policies, str(f.evidence.get("engine"))))
        if text is None:
            continue
        lines = text.splitlines()
        if note.endswith("command line"):
            change = _command_change(f, text)
        elif note.startswith(_GEMINI_ACTIONS):
            change = _step_settings(f, text)
            # (unknown, or no `settings`: the step may read the project's file with --yolo)
            keep_yolo = keep_yolo or change is None or not change.old
        elif 0 < line <= len(lines):
            old = lines[line - 1]
            change = LineChange(path, line, (old,), (rewrite_action_line(old),), note)
        else:
            change = None
        if change is not None and change.new != change.old:
            out.lines[(path, line)] = change
    for path in sorted(wanted):
        text = texts.get(path)
        if text is None or not _safe_rel(path):
            continue
        doc = parse_config(path, text)
        if not isinstance(doc, dict):
            continue
        if redact_step(text) != text or holds_secret(doc):
            out.blocked[path] = (
                "it holds a literal secret value, which harden never copies into its output"
            )
            continue
        if path.endswith(".toml"):
            out.files[path] = hardened_codex_config(text, [*header, f"Hardened from {path}."])
        else:
            out.files[path] = hardened_gemini_settings(
                doc, [*header, f"Hardened from {path}."], disable_yolo=not keep_yolo
            )
            if keep_yolo:
                out.notes.append(
                    f"{path}: security.disableYoloMode is not set, since a run-gemini-cli step "
                    "without a `settings` input reads this file and always runs `gemini --yolo`"
                )
        out.written[path] = path
        out.hows[path] = _CODEX_HOW if path.endswith(".toml") else _gemini_how(not keep_yolo)
        out.still[path] = still_reported(path, out.files[path])
    return out


def _gemini_how(disable_yolo: bool) -> str:
    if disable_yolo:
        return _GEMINI_HOW
    return "tools.sandbox on, tools.allowed without the bare run_shell_command; other keys kept"


def decide_engine(f: Finding, changes: EngineChanges) -> Claim | Open | None:
    """Claim or Open for a Codex/Gemini finding; None for any other finding."""
    if not engine_finding(f) or not f.locations:
        return None
    path, line, note = _where(f)
    if note.startswith(_CONFIG_LABELS):
        if path in changes.written and f.rule_id not in changes.still[path]:
            return Claim(f, (changes.written[path],), changes.hows[path])
        if path in changes.written:
            return Open(f, "the hardened file still sets it", "See the finding's fix.")
        if path in changes.blocked:
            return Open(
                f,
                changes.blocked[path],
                "Move the secret out of the file (pass it by name), then harden again.",
            )
        return Open(
            f,
            "harden rewrites a project's own configuration files; this one was not read",
            "See the finding's fix.",
        )
    configs = tuple(
        changes.written[p]
        for p in sorted(changes.written)
        if p.endswith(".toml") == (f.evidence.get("engine") == CODEX)
    )
    change = changes.lines.get((path, line))
    if note.startswith(_GEMINI_ACTIONS):
        return Open(
            f,
            "the action always runs `gemini --yolo`: YOLO mode cannot be switched off there",
            f"Replace the step's `settings` input with the one in {SUMMARY} (the sandbox on, "
            "`tools.core` limited to what the task needs, shell commands one by one)"
            if change
            else "Give the step a `settings` input with the sandbox on and `tools.core` limited.",
        )
    if note.endswith("command line"):
        uses_config = (path, line) in changes.relies and bool(configs)
        if change is None:
            if uses_config:
                return Claim(f, configs, "its sandbox comes from the hardened configuration file")
            return Open(f, "no replacement could be made for this line", "See the finding's fix.")
        if _still_found(change, f, uses_config):
            return Open(f, "the replacement line still switches it off", "See the finding's fix.")
        files = (SUMMARY, *configs) if uses_config else (SUMMARY,)
        return Claim(f, files, f"replace {path}:{change.first} with the line in {SUMMARY}")
    if change is None:
        return Open(f, "no replacement could be made for this input", "See the finding's fix.")
    return Claim(f, (SUMMARY,), f"replace {path}:{change.first} with the line in {SUMMARY}")


def _block(lines: Sequence[str]) -> list[str]:
    body = textwrap.dedent("\n".join(redact_text(x) for x in lines)).split("\n")
    return md_fence(body, "  ")


def render_engine_section(changes: EngineChanges) -> list[str]:
    """SUMMARY.md lines: the written files and the exact replacement lines."""
    if not (changes.written or changes.lines or changes.blocked):
        return []
    out = ["", "## Codex and Gemini CLI changes", ""]
    for src, dst in sorted(changes.written.items()):
        out.append(
            f"- {md_code(dst)}: use it instead of {md_code(src)} ({md_text(changes.hows[src])})"
        )
        if dst.endswith(".json") and not any(src in n for n in changes.notes):
            out.append(
                "  - with it, `gemini --yolo` refuses to start (YOLO mode is disabled): start the "
                "CLI without `--yolo` (the replacement lines below)"
            )
    out += [f"  - {md_text(n)}" for n in changes.notes]
    for src, why in sorted(changes.blocked.items()):
        out.append(f"- {md_code(src)} was not copied: {md_text(why)}")
    for change in sorted(changes.lines.values(), key=lambda c: (c.path, c.first)):
        if change.old:
            out.append(
                f"- {md_code(f'{change.path}:{change.first}')} ({md_text(change.what)}): replace"
            )
            out += _block(change.old)
            out.append("  with")
        else:
            out.append(
                f"- {md_code(f'{change.path}:{change.first}')} ({md_text(change.what)}): add after that line"
            )
        out += _block(change.new)
        if "dockerfile" in posixpath.basename(change.path).lower():
            out.append("  and rebuild the image: the line is part of it")
    return out


def replaced(text: str, change: LineChange) -> str:
    """``text`` with ``change`` applied (the tests apply every replacement this way)."""
    lines = text.splitlines()
    start = change.first - 1
    if change.old:
        lines[start : start + len(change.old)] = change.new
    else:
        lines[start + 1 : start + 1] = change.new
    return "\n".join(lines) + "\n"

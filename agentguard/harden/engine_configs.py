"""Hardened counterparts of the Codex and Gemini CLI configuration files (pure, no I/O).

- Codex ``config.toml``: the sandbox on (``sandbox_mode = "workspace-write"`` where it was
  ``danger-full-access`` or unset) and the approval step on (``approval_policy =
  "on-request"`` where it was ``never`` or unset), in the top-level table and in each
  profile that turned the sandbox off. Every other key (model, ``[mcp_servers.*]``,
  comments) is kept: the file is edited line by line, and the edit is checked by parsing
  it again; when the layout defeats the line edit, the parsed document is written instead.
- Gemini ``settings.json``: ``tools.sandbox: true``, ``security.disableYoloMode: true``
  (the CLI then refuses ``--yolo``), and ``tools.allowed`` without the bare shell tool.
- The ``settings`` input of google-github-actions/run-gemini-cli (which always runs
  ``gemini --yolo``, so YOLO mode cannot be disabled there): the sandbox on and
  ``tools.core`` limited to the read-only built-ins plus the single commands the original
  pre-approved.

Before a written file is claimed, :func:`still_reported` runs the rules over it, and
:func:`holds_secret` keeps a file with a literal secret from being copied at all.
"""

from __future__ import annotations

import copy
import json
import re
import sys
from collections.abc import Sequence
from typing import Any

import tomli_w

from agentguard.inspect.project.engine_settings import SHELL_TOOL_NAMES

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

CODEX_SANDBOX = "workspace-write"
CODEX_APPROVAL = "on-request"
# gemini-cli packages/core/src/tools/definitions/base-declarations.ts: the tools that read
GEMINI_READ_TOOLS = ("read_file", "read_many_files", "list_directory", "glob", "grep_search")

_TABLE = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(?:#.*)?$")
_SETTING = re.compile(r"^(\s*)(sandbox_mode|approval_policy)(\s*=\s*)(.*)$")


def _harden_table(table: dict[str, Any], *, top: bool) -> None:
    sandbox = table.get("sandbox_mode")
    turned_off = sandbox == "danger-full-access"
    if turned_off or (top and sandbox is None):
        table["sandbox_mode"] = CODEX_SANDBOX
    approval = table.get("approval_policy")
    if (top and approval in (None, "never")) or (turned_off and approval == "never"):
        table["approval_policy"] = CODEX_APPROVAL


def hardened_codex_doc(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    _harden_table(out, top=True)
    profiles = out.get("profiles")
    for spec in profiles.values() if isinstance(profiles, dict) else ():
        if isinstance(spec, dict):
            _harden_table(spec, top=False)
    return out


def _profile(doc: dict[str, Any], table: str) -> Any:
    profiles = doc.get("profiles")
    if not table.startswith("profiles.") or not isinstance(profiles, dict):
        return None
    return profiles.get(table.removeprefix("profiles."))


def _edit_codex_text(text: str, want: dict[str, Any]) -> str:
    lines = text.splitlines()
    table = ""
    seen_top: set[str] = set()
    first_table: int | None = None
    out: list[str] = []
    for line in lines:
        m = _TABLE.match(line)
        if m:
            table = m.group(1).replace('"', "").replace("'", "")
            if first_table is None:
                first_table = len(out)
            out.append(line)
            continue
        s = _SETTING.match(line)
        target = want if table == "" else _profile(want, table)
        if s and isinstance(target, dict):
            key = s.group(2)
            if table == "":
                seen_top.add(key)
            new = target.get(key)
            old = s.group(4).split("#", 1)[0].strip()
            if isinstance(new, str) and old != json.dumps(new):
                line = f"{s.group(1)}{key}{s.group(3)}{json.dumps(new)}  # agentguard harden: was {old}"
        out.append(line)
    missing = [
        f"{key} = {json.dumps(want[key])}  # agentguard harden: added"
        for key in ("sandbox_mode", "approval_policy")
        if key not in seen_top and isinstance(want.get(key), str)
    ]
    at = len(out) if first_table is None else first_table
    while at > 0 and out[at - 1].strip() == "" and first_table is not None:
        at -= 1
    out[at:at] = missing
    return "\n".join(out) + "\n"


def hardened_codex_config(text: str, header: Sequence[str]) -> str:
    """The hardened ``config.toml`` text. ``text`` is a file inspect has parsed."""
    doc = tomllib.loads(text)
    want = hardened_codex_doc(doc)
    edited = _edit_codex_text(text, want)
    try:
        ok = tomllib.loads(edited) == want
    except tomllib.TOMLDecodeError:
        ok = False
    if not ok:  # a layout the line edit does not follow (dotted keys, inline tables)
        edited = tomli_w.dumps(want)
    return "".join(f"# {h}\n" for h in header) + edited


def _bare_shell(name: object) -> bool:
    return isinstance(name, str) and name.strip() in SHELL_TOOL_NAMES


def _section(doc: dict[str, Any], key: str) -> dict[str, Any]:
    value = doc.get(key)
    if not isinstance(value, dict):
        value = {}
        doc[key] = value
    return value


def _without_bare_shell(doc: dict[str, Any], tools: dict[str, Any]) -> None:
    for holder, key in ((tools, "allowed"), (doc, "allowedTools")):
        value = holder.get(key)
        if isinstance(value, list) and any(_bare_shell(v) for v in value):
            holder[key] = [v for v in value if not _bare_shell(v)]


def hardened_gemini_doc(doc: dict[str, Any], *, disable_yolo: bool = True) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out.pop("sandbox", None)  # the flat key of earlier releases: tools.sandbox replaces it
    tools = _section(out, "tools")
    tools["sandbox"] = True
    _without_bare_shell(out, tools)
    general = out.get("general")
    if isinstance(general, dict) and general.get("defaultApprovalMode") == "yolo":
        general["defaultApprovalMode"] = "default"
    if disable_yolo:
        _section(out, "security")["disableYoloMode"] = True
    return out


def hardened_gemini_settings(
    doc: dict[str, Any], header: Sequence[str], *, disable_yolo: bool = True
) -> str:
    """The hardened ``settings.json`` text (Gemini reads comments in it)."""
    body = json.dumps(hardened_gemini_doc(doc, disable_yolo=disable_yolo), indent=2)
    return "".join(f"// {h}\n" for h in header) + body + "\n"


def action_settings_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """run-gemini-cli's ``settings``: YOLO mode stays (the action passes ``--yolo``), so the
    tools it approves are limited instead, and they run in the sandbox."""
    out = hardened_gemini_doc(doc, disable_yolo=False)
    tools = _section(out, "tools")
    single = [
        t
        for t in (*(tools.get("core") or ()), *(tools.get("allowed") or ()))
        if isinstance(t, str) and "(" in t and t.split("(", 1)[0].strip() in SHELL_TOOL_NAMES
    ]
    core = tools.get("core")
    if isinstance(core, list):
        tools["core"] = [t for t in core if not _bare_shell(t)]
    else:
        tools["core"] = [*GEMINI_READ_TOOLS, *dict.fromkeys(single)]
    out.pop("coreTools", None)
    return out


def action_settings_input(doc: dict[str, Any], indent: str) -> list[str]:
    """The ``settings: |-`` input lines, at the step's ``with:`` indentation."""
    body = json.dumps(action_settings_doc(doc), indent=2).splitlines()
    return [f"{indent}settings: |-", *(f"{indent}  {line}" for line in body)]


def holds_secret(doc: Any, name: str = "") -> bool:
    """A string value that is a literal secret (by its key's name or its own format)."""
    from agentguard.secret_text import classify, value_format

    if isinstance(doc, dict):
        return any(holds_secret(v, str(k)) for k, v in doc.items())
    if isinstance(doc, list):
        return any(holds_secret(v, name) for v in doc)
    return isinstance(doc, str) and (classify(name, doc) is not None or bool(value_format(doc)))


def parse_config(path: str, text: str) -> Any:
    """The file's document; None when it does not parse (inspect reported that)."""
    from agentguard.inspect.project.jsonc import load_jsonc
    from agentguard.inspect.project.lined import DocumentError

    try:
        return tomllib.loads(text) if path.endswith(".toml") else load_jsonc(text).value
    except (tomllib.TOMLDecodeError, DocumentError):
        return None


def still_reported(path: str, text: str) -> frozenset[str]:
    """The rule ids the inspector still reports on the written file (none, normally)."""
    from agentguard.inspect.project.engine_settings import (
        parse_codex_config,
        parse_gemini_settings,
    )
    from agentguard.inspect.project.lined import DocumentError
    from agentguard.rules.agent_engines import check_engine_policy

    try:
        if path.endswith(".toml"):
            policies = parse_codex_config(path, text.encode())[0]
        else:
            policies = [parse_gemini_settings(path, text.encode())[0]]
    except DocumentError:
        return frozenset({"AG301", "AG305"})
    return frozenset(f.rule_id for p in policies for f in check_engine_policy(p))

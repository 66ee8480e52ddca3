"""The inputs of an ``anthropics/claude-code-action`` (or ``claude-code-base-action``) step,
read as the action documents them, into one :class:`AgentConfig` per step.

- ``allowed_tools`` / ``disallowed_tools``: tool names, comma- or newline-separated
  (``Bash(git diff:*)`` is one name);
- ``settings``: inline JSON (``permissions.allow`` pre-approves like ``allowed_tools``,
  ``permissions.deny`` removes, ``permissions.defaultMode``, ``sandbox``) or a path to a
  settings file (read where the file is: this step records only that it is one);
- ``fallback_model``, ``model``;
- ``claude_env``: ``NAME: value`` lines; the names whose value is a ``secrets.`` context are
  the secrets the agent's tools can read from their environment;
- ``claude_args``: the flags of the ``claude`` command line (:mod:`.cli_flags`).

A value GitHub fills in (``${{ ... }}``) is resolved by ``resolve`` when the caller knows
it (a composite action called with ``with:``), otherwise it is unknown: the configuration
is then open-ended, never read as if the input were empty. Facts only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agentguard.inspect.project.cli_flags import read_flag_text
from agentguard.inspect.project.engine_model import ActionStep
from agentguard.inspect.project.model import AgentConfig, Option, Unknown

CLAUDE_ACTIONS = ("anthropics/claude-code-action", "anthropics/claude-code-base-action")
_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)
_ENV_LINE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*[:=]\s*(.*?)\s*$")
_SECRET_REF = re.compile(r"\$\{\{\s*secrets\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

# a workflow expression's value: text, or None when it cannot be known here
Resolver = Callable[[str], str | None]


def _no_context(_: str) -> str | None:
    return None


HOLE = "\x00"  # marks each value not known in :func:`substitute`'s output: \x00<n>\x00
_HOLE = re.compile("\x00(\\d+)\x00")


def substitute(text: str, resolve: Resolver, *, holes: list[str] | None = None) -> str | Unknown:
    """``text`` with every ``${{ ... }}`` replaced by its value, or unknown when one of
    them cannot be known (given ``holes``: that one replaced by a numbered mark, its text
    appended to ``holes``)."""
    out: list[str] = []
    pos = 0
    for m in _EXPR.finditer(text):
        value = resolve(m.group(0)[3:-2])
        if value is None and holes is not None:
            holes.append(m.group(0))
            value = f"{HOLE}{len(holes) - 1}{HOLE}"
        if value is None:
            return Unknown(" ".join(text.split())[:80], "set by a workflow expression")
        out += [text[pos : m.start()], value]
        pos = m.end()
    out.append(text[pos:])
    return "".join(out)


def split_tools(text: str) -> tuple[str, ...]:
    """Tool names separated by commas or new lines, a comma inside ``Tool(...)`` kept."""
    out: list[str] = []
    depth = 0
    current: list[str] = []
    for ch in text:
        if ch in ",\n" and depth == 0:
            out.append("".join(current))
            current = []
            continue
        depth += (ch == "(") - (ch == ")")
        current.append(ch)
    out.append("".join(current))
    return tuple(t.strip().strip("'\"") for t in out if t.strip().strip("'\""))


def _secret_names(text: str) -> tuple[str, ...]:
    names: list[str] = []
    for raw in text.splitlines():
        m = _ENV_LINE.match(raw)
        if m is not None and _SECRET_REF.search(m.group(2)):
            names.append(m.group(1))
    return tuple(names)


def _unhole(opt: Option, holes: list[str], shown: str) -> Option:
    """A flag's value with the marks of values not known: a tool name keeps the expression
    as written (`Bash(gh api repos/${{ github.repository }}/...)`), a scalar is unknown."""

    def back(text: str) -> str:
        return _HOLE.sub(lambda m: holes[int(m.group(1))], text)

    if isinstance(opt.value, tuple):
        return Option(
            tuple(back(v) if isinstance(v, str) else v for v in opt.value), opt.line, opt.expr
        )
    if isinstance(opt.value, str) and HOLE in opt.value:
        return Option(Unknown(shown, "set by a workflow expression"), opt.line, opt.expr)
    return opt


def _holes_in_keys(text: str) -> bool:
    """Whether an expression in settings JSON may set what is read (its permissions), or
    is not inside a JSON string (so the text is no JSON until it is filled in)."""
    try:
        doc = json.loads(text)
    except ValueError:
        return True
    perms = doc.get("permissions") if isinstance(doc, dict) else None
    return "${{" in json.dumps(perms)


def _settings(text: str, line: int, options: dict[str, Option]) -> str | None:
    """Read inline settings JSON into ``options``; why it could not be read, or None."""
    stripped = text.strip()
    if not stripped.startswith("{"):
        options["settings"] = Option(stripped, line, "settings: (a settings file)")
        return None
    try:
        doc = json.loads(stripped)
    except ValueError:
        return "its `settings` input is not valid JSON"
    if not isinstance(doc, dict):
        return "its `settings` input is not a JSON object"
    options["settings"] = Option(stripped, line, "settings:")
    perms = doc.get("permissions")
    if isinstance(perms, dict):
        for key, name in (("allow", "allowed_tools"), ("deny", "disallowed_tools")):
            entries = perms.get(key)
            if isinstance(entries, list) and all(isinstance(e, str) for e in entries):
                prior = options.get(name)
                merged = tuple(dict.fromkeys((prior.value if prior else ()) + tuple(entries)))
                at = prior.line if prior else line
                options[name] = Option(merged, at, f"settings: permissions.{key}")
        mode = perms.get("defaultMode")
        if isinstance(mode, str):
            options["permission_mode"] = Option(mode, line, "settings: permissions.defaultMode")
    return None


def claude_step_config(
    step: ActionStep,
    *,
    origin: str = "project",
    resolve: Resolver = _no_context,
    label: str | None = None,
) -> AgentConfig:
    """The configuration one claude-code-action step gives the ``claude`` it runs."""
    options: dict[str, Option] = {}
    open_ended: list[str] = []
    raw: dict[str, tuple[Any, int]] = {k: (v, ln) for k, v, ln in step.inputs}

    def text_of(key: str) -> tuple[str | Unknown, int] | None:
        got = raw.get(key)
        if got is None or got[0] is None:
            return None
        return substitute(str(got[0]), resolve), got[1]

    args = raw.get("claude_args")
    if args is not None and args[0] is not None:
        holes: list[str] = []
        text = substitute(str(args[0]), resolve, holes=holes)
        assert isinstance(text, str)  # (a mark stands for each value not known)
        flags, contained = read_flag_text(text, args[1], HOLE)
        shown = " ".join(str(args[0]).split())[:80]
        for name, opt in flags.items():
            flags[name] = _unhole(opt, holes, shown)
        options.update(flags)
        if not contained:
            open_ended.append(f"claude_args: {shown}")
    for key, name in (("allowed_tools", "allowed_tools"), ("disallowed_tools", "disallowed_tools")):
        got = text_of(key)
        if got is None:
            continue
        value, line = got
        if isinstance(value, Unknown):
            options[name] = Option(value, line, f"{key}:")
            continue
        prior = options.get(name)
        before = prior.value if prior and isinstance(prior.value, tuple) else ()
        merged = tuple(dict.fromkeys(before + split_tools(value)))
        options[name] = Option(merged, line, f"{key}:")
    settings = text_of("settings")
    if settings is not None:
        value, line = settings
        if isinstance(value, Unknown) and not _holes_in_keys(str(raw["settings"][0])):
            value = str(raw["settings"][0])  # JSON whose strings hold expressions: read it
        why = (
            "its `settings` input is filled in by the workflow"
            if isinstance(value, Unknown)
            else _settings(value, line, options)
        )
        if why is not None:
            options["settings"] = Option(
                value if isinstance(value, Unknown) else Unknown(value[:80], why), line, "settings:"
            )
            open_ended.append(f"settings: {why}")
    for key in ("fallback_model", "model"):
        got = text_of(key)
        if got is not None and got[0] != "":
            options[key] = Option(got[0], got[1], f"{key}:")
    env = raw.get("claude_env")
    if env is not None and isinstance(env[0], str):
        secrets = _secret_names(env[0])
        if secrets:
            options["env_secrets"] = Option(secrets, env[1], "claude_env:")
    return AgentConfig(
        engine="claude CLI",
        path=step.path,
        # the claude_args line where there is one (where the command line is written, and
        # where the line reader of earlier versions put it: fingerprints stay), else `uses:`
        line=args[1] if args is not None else step.line,
        label=label or f"{step.action} step (job {step.job})",
        options=options,
        origin=origin,
        open_ended="; ".join(open_ended) or None,
    )

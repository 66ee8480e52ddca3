"""The capability model's joins over one agent configuration, made here once and read by
the rules from the model: which built-in tools exist under it (AG301-AG303 read the
``tools`` rows) and whether each reading of its ``cwd`` names the project (AG210, AG211
and AG305 read ``workdir.cwd``). Facts in, records out; no I/O, no gatherer, no rule."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from agentguard.facts.agents import AgentConfig
from agentguard.facts.builtin_tools import BUILTIN_TOOLS, listed_names, option_syntax
from agentguard.facts.capabilities import CwdReading
from agentguard.facts.values import PathSym, Unknown, alternatives, describe


@dataclass(frozen=True)
class LiveTools:
    certain: frozenset[str]  # live on every reading of the configuration
    maybe: frozenset[str]  # live on some reading, or depending on a value not known
    reason: str


def live_tools(cfg: AgentConfig) -> LiveTools:
    """Which built-in tools exist under this configuration."""
    builtin = frozenset(BUILTIN_TOOLS)
    tools = cfg.option("tools")
    per_alt: list[frozenset[str]] = []
    maybe: set[str] = set()
    if tools is None:
        per_alt.append(builtin)
        reason = f"`{option_syntax(cfg, 'tools')}` is not set, so the whole built-in set is live"
    else:
        reason = f"`{option_syntax(cfg, 'tools')}` = {describe(tools.value)}"
        for alt in alternatives(tools.value):
            if alt is None or (isinstance(alt, dict) and alt.get("preset") == "claude_code"):
                per_alt.append(builtin)
            elif isinstance(alt, tuple | str):
                names, complete = listed_names(alt)
                if isinstance(alt, str) and alt.strip() == "default":
                    names = set(builtin)
                per_alt.append(frozenset(names & builtin))
                if not complete:
                    maybe |= builtin
            else:
                per_alt.append(frozenset())
                maybe |= builtin
    certain = frozenset.intersection(*per_alt) if per_alt else frozenset()
    maybe |= set().union(*per_alt) - certain
    disallowed = cfg.option("disallowed_tools")
    if disallowed is not None:
        removed_all: frozenset[str] | None = None
        removed_some: set[str] = set()
        unknown_removal = False
        for alt in alternatives(disallowed.value):
            names, complete = listed_names(alt) if alt is not None else (set(), True)
            unknown_removal |= not complete
            removed_some |= names
            removed_all = frozenset(names) if removed_all is None else removed_all & names
        removed_all = removed_all or frozenset()
        maybe = (maybe | (certain & (removed_some - removed_all))) - removed_all
        certain = certain - removed_some
        if unknown_removal:
            maybe |= certain
            certain = frozenset()
        reason += f"; `{option_syntax(cfg, 'disallowed_tools')}` = {describe(disallowed.value)}"
    return LiveTools(certain, frozenset(maybe - certain), reason)


def _names_project(value: Any, workdir: str | None) -> bool | None:
    """True: the project (or an ancestor of it); False: something else; None: unknown."""
    if isinstance(value, PathSym):
        if value.base in ("process-cwd", "source-dir", "source-file"):
            return not value.sub
        return value.base == "home"
    if isinstance(value, str):
        norm = posixpath.normpath(value) if value else "."
        if norm in (".", "/"):
            return True
        if workdir and norm.startswith("/"):
            wd = posixpath.normpath(workdir)
            return norm == wd or wd.startswith(norm.rstrip("/") + "/")
        return False
    if isinstance(value, Unknown):
        return None
    return False


def cwd_reading(cfg: AgentConfig, image_workdir: str | None) -> CwdReading:
    """The configuration's ``cwd``, and per reading whether it names the project: the
    checkout (or an ancestor of it), or the image's working directory ``image_workdir``
    (files collected from an image)."""
    opt = cfg.option("cwd")
    if opt is None:
        return CwdReading(False, cfg.line, (True,), image_workdir)
    readings = tuple(_names_project(a, image_workdir) for a in alternatives(opt.value))
    return CwdReading(True, opt.line, readings, image_workdir)

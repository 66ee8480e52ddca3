"""The Agent Workflow Firewall of GitHub Agentic Workflows (gh-aw) around a command line.

A compiled gh-aw workflow (``*.lock.yml``) starts its agent as
``awf --config FILE [flags] -- /bin/bash -c '... claude ...'``: awf runs the command in
its own container, with network egress through a proxy that admits only the domains of
the config's ``network.allowDomains``. This reader credits only what the file shows: the
wrapper's flags as written, and the allow-list of the JSON the same file writes to the
config path before the wrapper runs (``printf '%s\\n' '{...}' > FILE``). A later rewrite
of that file whose new content cannot be read leaves the allow-list unknown; one made by
``jq`` with a filter that does not touch ``network`` (the chroot patch gh-aw adds) keeps it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any

from agentguard.facts.agents import FirewallContainer

Words = Callable[[str], list[tuple[str, bool]]]

_SEPARATORS = {"&&", "||", "|", ";", "&"}
_ONE_VALUE = {"--config", "--container-workdir", "--mount", "--exclude-env"}
_ASSIGN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def wrapper_of(words: Sequence[tuple[str, bool]], at: int) -> int | None:
    """The index of ``awf`` when the word at ``at`` is part of the command it wraps
    (after its ``--``, in the same simple command); None otherwise."""
    start = at
    while start > 0 and words[start - 1][0] not in _SEPARATORS:
        start -= 1
    i = start
    while i < at and _ASSIGN.match(words[i][0]) and not words[i][1]:
        i += 1  # VAR=value before the command
    if i >= at or words[i][0].rsplit("/", 1)[-1] != "awf":
        return None
    if not any(w == "--" and not q for w, q in words[i + 1 : at]):
        return None
    return i


def read_awf(
    lines: Sequence[str], line: int, words: Sequence[tuple[str, bool]], at: int, split: Words
) -> FirewallContainer:
    """What the awf invocation at ``words[at]`` (on 1-based ``line``) and the file's
    lines before it say about its container."""
    config: str | None = None
    workdir: str | None = None
    env_all = False
    excluded: list[str] = []
    mounts: list[str] = []
    i = at + 1
    while i < len(words) and words[i][0] != "--":
        flag = words[i][0]
        value = words[i + 1][0] if flag in _ONE_VALUE and i + 1 < len(words) else None
        if flag == "--config":
            config = value
        elif flag == "--container-workdir":
            workdir = value
        elif flag == "--mount" and value is not None:
            mounts.append(value)
        elif flag == "--exclude-env" and value is not None:
            excluded.append(value)
        elif flag == "--env-all":
            env_all = True
        i += 2 if value is not None else 1
    domains, domains_line, unread = (
        _allow_list(lines, line, config, split)
        if config is not None
        else (None, None, "awf is started without `--config`")
    )
    return FirewallContainer(
        wrapper="awf",
        line=line,
        allow_domains=domains,
        domains_line=domains_line,
        domains_unread=unread,
        workdir=workdir,
        env_all=env_all,
        excluded_env=tuple(excluded),
        mounts=tuple(mounts),
    )


def _writes_to(words: Sequence[tuple[str, bool]], path: str) -> bool:
    """A redirect of the line's output to ``path`` (`> PATH`, or `>PATH` as one word)."""
    return any(
        (w in (">", ">|") and i + 1 < len(words) and words[i + 1][0] == path) or w == ">" + path
        for i, (w, _q) in enumerate(words)
    )


def _allow_list(
    lines: Sequence[str], line: int, config: str, split: Words
) -> tuple[tuple[str, ...] | None, int | None, str | None]:
    """The allow-list of the nearest literal JSON written to ``config`` above ``line``,
    and whether a rewrite between that write and ``line`` keeps it."""
    rewrites: list[int] = []
    for n in range(line - 1, 0, -1):
        text = lines[n - 1]
        if config not in text:
            continue
        words = split(text)
        if not _writes_to(words, config):
            continue
        literals = [w for w, q in words if q and w.lstrip().startswith("{")]
        if not literals:
            rewrites.append(n)
            continue
        if len(literals) > 1:  # two candidates: which one is written is not read here
            return None, None, f"the config written at line {n} holds {len(literals)} JSON texts"
        data = _json_written(literals[0], double_quoted='{\\"' in text)
        if data is None:
            return None, None, f"the config written at line {n} is not JSON"
        domains = data.get("network", {}).get("allowDomains") if isinstance(data, dict) else None
        if not isinstance(domains, list) or not all(isinstance(d, str) for d in domains):
            return None, None, f"the config written at line {n} has no `network.allowDomains`"
        if any("$" in d or "`" in d for d in domains):  # (the shell's, or escaped: unknown)
            return None, None, f"the allow-list written at line {n} holds a shell expansion"
        for r in rewrites:
            if not _keeps_network(lines, n, r, config, split):
                return None, None, f"line {r} rewrites the config with content not read"
        return tuple(domains), n, None
    if rewrites:
        return None, None, f"line {rewrites[0]} writes the config with content not read"
    return None, None, f"nothing above line {line} writes the config {config}"


# `"maxAiCredits":${GH_AW_MAX_AI_CREDITS}`: a variable where a whole JSON value stands, in a
# double-quoted shell word (the shell writes whatever it holds there)
_VALUE_EXPANSION = re.compile(r"(?<=[:\[,])(\s*)\$(?:\{[A-Za-z_]\w*\}|[A-Za-z_]\w*)(?=\s*[,}\]])")


def _json_written(literal: str, *, double_quoted: bool) -> Any:
    """The JSON the line writes, or None. In a double-quoted word a variable that stands
    for a whole value is read as an unknown value (null: never one of the allow-list's
    strings, which are checked apart); anything else that is not JSON is not read."""
    try:
        return json.loads(literal)
    except ValueError:
        if not double_quoted:
            return None
    try:
        return json.loads(_VALUE_EXPANSION.sub(r"\1null", literal))
    except ValueError:
        return None


def _keeps_network(lines: Sequence[str], first: int, at: int, config: str, split: Words) -> bool:
    """Whether the rewrite of ``config`` at line ``at`` writes a variable that a line
    between ``first`` and ``at`` sets from ``jq`` over the same file with a filter that
    does not mention ``network``."""
    words = split(lines[at - 1])
    sources = [w for w, _q in words if w.startswith("$") and w != config]
    if len(sources) != 1:
        return False
    name = sources[0].strip("${}")
    for n in range(at - 1, first, -1):
        text = lines[n - 1].strip()
        if not text.startswith(f"{name}=$(jq "):
            continue
        inner = split(text[len(name) + 3 :].rsplit(")", 1)[0])
        filters = [w for w, q in inner if q and w.startswith(".")]
        return (
            bool(inner)
            and inner[-1][0] == config
            and len(filters) == 1
            and ("network" not in filters[0])
        )
    return False

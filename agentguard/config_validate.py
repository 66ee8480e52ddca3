"""Validation of one configuration layer: its keys, rule ids, severities and options.

Split from :mod:`agentguard.config` (which reads and merges the layers); every error names
the file and the key (exit 2).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agentguard.errors import ConfigError
from agentguard.facts.names import canonical_name
from agentguard.rules.deps_policy import DepsPolicy
from agentguard.severity import Severity

TOP_KEYS = (
    "policy",
    "fail-on",
    "disable",
    "severity",
    "ignore",
    "rules",
    "deps",
    "build",
    "min-release-age",
    "exclude",
    "context",
    "context-severity",
    "smoke",
    "delta",
)
# `[delta] fail-on-growth`: what a change may not add (`check --base`); honoured only
# from --config. lock-major: a lock moves a package to a new major; the others are the
# agent capability model's (agentguard.delta.capabilities).
GROWTH_KINDS = (
    "lock-major",
    "agent",
    "shell-tool",
    "pre-approval",
    "host-mount",
    "unpinned-server",
    "secret",
    "open-trigger",
    "fallback",
)
# `min-release-age`: a count and a unit, e.g. "7d", "36h", "2w" (days by default).
AGE = re.compile(r"^\s*(\d{1,5})\s*(d|day|days|h|hour|hours|w|week|weeks)?\s*$")
DEPS_KEYS = (
    "watched",
    "span-accepted",
    "watched-severity",
    "watched-parent-severity",
    "tail-severity",
)
RULE_ID = re.compile(r"^AG[1-9]\d\d$")


@dataclass(frozen=True)
class Layer:
    label: str  # file name shown in errors
    prefix: str  # "tool.agentguard." in pyproject.toml, "" elsewhere
    data: dict[str, Any]


def _names(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of package names")
    return frozenset(canonical_name(v) for v in value)


def parse_deps(deps: Any) -> DepsPolicy:
    """A ``[deps]`` table, validated."""
    unknown = set(deps) - set(DEPS_KEYS)
    if unknown:
        raise ConfigError(f"unknown key(s) in [deps]: {', '.join(sorted(unknown))}")
    try:
        return DepsPolicy(
            watched=_names(deps.get("watched", []), "deps.watched"),
            span_accepted=_names(deps.get("span-accepted", []), "deps.span-accepted"),
            watched_severity=Severity.parse(deps.get("watched-severity", "high")),
            watched_parent_severity=Severity.parse(deps.get("watched-parent-severity", "medium")),
            tail_severity=Severity.parse(deps.get("tail-severity", "low")),
        )
    except ValueError as exc:
        raise ConfigError(f"[deps]: {exc}") from None


# -- validation and merging -----------------------------------------------------------


class _KnownRules:
    """The registered rule ids (a static list the tests keep equal to the registry)."""

    def __contains__(self, rule: object) -> bool:
        from agentguard.rules import RULE_IDS

        return rule in RULE_IDS


def _known_rules() -> _KnownRules:
    return _KnownRules()


def _rule_key(lay: Layer, key: str, rule: str, known: _KnownRules, *, star: bool = False) -> None:
    if star and rule == "*":
        return
    if not RULE_ID.match(rule):
        raise ConfigError(f"{lay.label}: {lay.prefix}{key}: {rule!r} is not a rule id (AGnnn)")
    if rule not in known:
        raise ConfigError(
            f"{lay.label}: {lay.prefix}{key}: unknown rule {rule} (`agentguard rules` lists them)"
        )


def validate_layer(lay: Layer) -> None:
    d, p, label = lay.data, lay.prefix, lay.label
    for key in d:
        if key not in TOP_KEYS:
            raise ConfigError(
                f"{label}: unknown key `{p}{key}` (known keys: {', '.join(TOP_KEYS)})"
            )
    known = _known_rules()
    if "policy" in d and not isinstance(d["policy"], str):
        raise ConfigError(f"{label}: {p}policy must be a policy name (a string)")
    if "fail-on" in d:
        severity_of(lay, "fail-on", d["fail-on"])
    if "build" in d and not isinstance(d["build"], bool):
        raise ConfigError(f"{label}: {p}build must be true or false")
    if "smoke" in d and not isinstance(d["smoke"], bool):
        raise ConfigError(f"{label}: {p}smoke must be true or false")
    if "delta" in d:
        _validate_delta(d["delta"], f"{label}: {p}delta")
    if "min-release-age" in d:
        age = d["min-release-age"]
        if not isinstance(age, (str, int)) or isinstance(age, bool) or not AGE.match(str(age)):
            raise ConfigError(
                f'{label}: {p}min-release-age must be a duration such as "7d", "36h" or '
                f'"2w" (got {age!r})'
            )
    disable = d.get("disable", [])
    if not isinstance(disable, list) or not all(isinstance(r, str) for r in disable):
        raise ConfigError(f"{label}: {p}disable must be a list of rule ids")
    for rule in disable:
        _rule_key(lay, "disable", rule, known)
    from agentguard.context import validate_keys

    validate_keys(d, p, label)
    for table in ("severity", "ignore", "rules", "deps"):
        if table in d and not isinstance(d[table], dict):
            raise ConfigError(f"{label}: {p}{table} must be a table")
    for rule, sev in d.get("severity", {}).items():
        _rule_key(lay, "severity", rule, known)
        severity_of(lay, f"severity.{rule}", sev)
    for rule, patterns in d.get("ignore", {}).items():
        _rule_key(lay, "ignore", rule, known, star=True)
        if not isinstance(patterns, list) or not all(isinstance(x, str) for x in patterns):
            raise ConfigError(f"{label}: {p}ignore.{rule} must be a list of paths (or path:line)")
    for rule, opts in d.get("rules", {}).items():
        _rule_key(lay, "rules", rule, known)
        _validate_options(lay, rule, opts)
    for key in d.get("deps", {}):
        if key not in DEPS_KEYS:
            raise ConfigError(
                f"{label}: unknown key `{p}deps.{key}` (known keys: {', '.join(DEPS_KEYS)})"
            )
    if "deps" in d:
        try:
            parse_deps(d["deps"])
        except ConfigError as exc:
            raise ConfigError(f"{label}: {p}deps: {str(exc).removeprefix('[deps]: ')}") from None


def severity_of(lay: Layer, key: str, value: Any) -> Severity:
    try:
        return Severity.parse(value if isinstance(value, str) else repr(value))
    except ValueError as exc:
        raise ConfigError(f"{lay.label}: {lay.prefix}{key}: {exc}") from None


def _validate_options(lay: Layer, rule_id: str, opts: Any) -> None:
    from agentguard.rules.base import get_rule

    where = f"{lay.label}: {lay.prefix}rules.{rule_id}"
    if not isinstance(opts, dict):
        raise ConfigError(f"{where} must be a table of options")
    # a rule declares its options as `options = {"name": "what it does"}` on its class
    declared: Mapping[str, str] = getattr(get_rule(rule_id), "options", {})
    for key in opts:
        if key not in declared:
            takes = ", ".join(sorted(declared)) or "none"
            raise ConfigError(f"{where}: unknown option `{key}` ({rule_id} takes: {takes})")


def _validate_delta(table: Any, where: str) -> None:
    if not isinstance(table, dict) or set(table) - {"fail-on-growth"}:
        raise ConfigError(f"{where} must be a table with the one key `fail-on-growth`")
    kinds = table.get("fail-on-growth", [])
    if not isinstance(kinds, list) or not all(k in GROWTH_KINDS for k in kinds):
        raise ConfigError(
            f"{where}.fail-on-growth must be a list of {', '.join(GROWTH_KINDS)} (got {kinds!r})"
        )

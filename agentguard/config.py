"""Policy and configuration: shipped policies/*.toml and a project's [tool.agentguard]."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from importlib import resources
from typing import Any

from packaging.utils import canonicalize_name

from agentguard.findings import Severity

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


class ConfigError(Exception):
    """A configuration file is malformed or has an unknown key (exit 2)."""


@dataclass(frozen=True)
class DepsPolicy:
    watched: frozenset[str]
    span_accepted: frozenset[str]
    watched_severity: Severity
    tail_severity: Severity

    def is_watched(self, name: str) -> bool:
        return canonicalize_name(name) in self.watched


def load_policy_data(name: str = "default") -> dict[str, Any]:
    text = resources.files("agentguard.policies").joinpath(f"{name}.toml").read_text("utf-8")
    return tomllib.loads(text)


def _names(value: Any, where: str) -> frozenset[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of package names")
    return frozenset(canonicalize_name(v) for v in value)


def deps_policy(data: dict[str, Any] | None = None) -> DepsPolicy:
    deps = (data or load_policy_data()).get("deps", {})
    known = {"watched", "span-accepted", "watched-severity", "tail-severity"}
    unknown = set(deps) - known
    if unknown:
        raise ConfigError(f"unknown key(s) in [deps]: {', '.join(sorted(unknown))}")
    try:
        return DepsPolicy(
            watched=_names(deps.get("watched", []), "deps.watched"),
            span_accepted=_names(deps.get("span-accepted", []), "deps.span-accepted"),
            watched_severity=Severity.parse(deps.get("watched-severity", "high")),
            tail_severity=Severity.parse(deps.get("tail-severity", "low")),
        )
    except ValueError as exc:
        raise ConfigError(f"[deps]: {exc}") from None

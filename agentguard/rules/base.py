"""Rule metadata and the registry every rule family registers into.

A rule is a class: its id, name and title are attributes; its docstring is the
rule's documentation with the sections *What it does*, *Why is this bad?*,
*Example* and *Use instead* (rendered by ``agentguard explain`` and into
``docs/rules/``). Rules read facts only; they never do I/O.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Mapping
from typing import ClassVar

from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity

_ID = re.compile(r"^AG[1-9]\d\d$")

# The highest grade of a finding that rests on a value that could not be determined.
UNKNOWN_CAP = Severity.MEDIUM


class Rule:
    id: ClassVar[str]
    name: ClassVar[str]  # names the hazard, kebab-case, e.g. "major-spanning-range"
    title: ClassVar[str]  # one line
    default_severity: ClassVar[Severity]
    family: ClassVar[str]

    @classmethod
    def doc(cls) -> str:
        return inspect.cleandoc(cls.__doc__ or "")

    @classmethod
    def finding(
        cls,
        message: str,
        *,
        locations: tuple[Location, ...] | list[Location],
        fix: Fix | str,
        evidence: Mapping[str, JSONValue] | None = None,
        severity: Severity | None = None,
        confidence: Confidence = Confidence.HIGH,
        ambiguous: bool = False,
    ) -> Finding:
        severity = severity or cls.default_severity
        if confidence is Confidence.LOW and severity > UNKNOWN_CAP:
            # low confidence means a value could not be determined: an unknown is never
            # graded as if it were set to the worst case
            severity = UNKNOWN_CAP
        return Finding(
            rule_id=cls.id,
            title=cls.title,
            severity=severity,
            confidence=confidence,
            message=message,
            locations=tuple(locations),
            fix=fix if isinstance(fix, Fix) else Fix(fix),
            evidence=dict(evidence or {}),
            ambiguous=ambiguous,
        )


REGISTRY: dict[str, type[Rule]] = {}


def register(cls: type[Rule]) -> type[Rule]:
    if not _ID.match(cls.id):
        raise ValueError(f"bad rule id {cls.id!r}")
    if cls.id in REGISTRY and REGISTRY[cls.id] is not cls:
        raise ValueError(f"rule id {cls.id} registered twice")
    doc = cls.doc()
    for section in ("## What it does", "## Why is this bad?", "## Use instead"):
        if section not in doc:
            raise ValueError(f"rule {cls.id} docstring lacks {section!r}")
    REGISTRY[cls.id] = cls
    return cls


def all_rules() -> list[type[Rule]]:
    from agentguard.rules import load_all

    load_all()  # imports every family, which registers its rules
    return [REGISTRY[k] for k in sorted(REGISTRY)]


def get_rule(rule_id: str) -> type[Rule]:
    all_rules()
    try:
        return REGISTRY[rule_id.upper()]
    except KeyError:
        raise KeyError(f"no rule {rule_id!r}; `agentguard rules` lists them") from None

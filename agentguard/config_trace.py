"""What a report says about the configuration a run used (:class:`ConfigTrace`): where it
came from, which files were read or not, and how many findings it disabled, re-graded or
suppressed. Part of the findings model (:mod:`agentguard.findings`); plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ConfigTrace:
    """Which configuration a run used, where it came from, and what it changed: every report
    carries it, so a reviewer sees a pull request that switches the gate off.

    ``origin``: ``project`` (a file in the scanned folder: the pull request's), ``file``
    (``--config FILE``: the caller's), or ``defaults`` (the shipped policy alone)."""

    origin: str
    policy: str
    files: tuple[str, ...] = ()  # the configuration files read (not the shipped policies)
    ignored: tuple[str, ...] = ()  # the scanned folder's own files, not read (and why)
    inline_ignores: bool = True  # False: --no-inline-ignores
    disabled: int = 0  # findings of a disabled rule, not reported
    downgraded: int = 0  # findings graded lower for their context (test, docs, example)
    remapped: int = 0  # findings whose severity the configuration set
    suppressed_config: int = 0  # findings matched by an `ignore` pattern
    suppressed_inline: int = 0  # findings matched by an inline `agentguard: ignore[...]`
    suppressed_baseline: int = 0

    @property
    def changed(self) -> int:
        """How many findings the configuration (not the baseline) dropped or changed."""
        return (
            self.disabled
            + self.downgraded
            + self.remapped
            + self.suppressed_config
            + self.suppressed_inline
        )

    @property
    def by_the_scanned_folder(self) -> int:
        """How many of those changes the scanned folder made (its configuration file, its
        inline comments): on a pull request, the pull request's."""
        if self.origin == "project":
            return self.changed
        return self.suppressed_inline

    def describe(self) -> str:
        where = {
            "project": "from the scanned folder",
            "file": "given with --config",
            "defaults": "the defaults",
        }[self.origin]
        head = f"config: {', '.join(self.files) or 'policy:' + self.policy} ({where})"
        parts = [
            f"{self.disabled} disabled",
            f"{self.downgraded} down-graded by context",
            f"{self.remapped} re-graded",
            f"{self.suppressed_config} ignored",
            f"{self.suppressed_inline} suppressed inline"
            + ("" if self.inline_ignores else " (inline ignores off)"),
        ]
        if self.suppressed_baseline:
            parts.append(f"{self.suppressed_baseline} in the baseline")
        text = f"{head}: {', '.join(parts)}" if self.changed else f"{head}: no finding changed"
        if not self.inline_ignores and not self.changed:
            text += " (inline ignores off)"
        if self.suppressed_baseline and not self.changed:
            text += f"; {self.suppressed_baseline} in the baseline"
        if self.ignored:
            text += f"; not read: {', '.join(self.ignored)}"
        return text

    def to_json(self) -> dict[str, Any]:
        return {
            "origin": self.origin,
            "policy": self.policy,
            "files": list(self.files),
            "ignored": list(self.ignored),
            "inline_ignores": self.inline_ignores,
            "counts": {
                "disabled": self.disabled,
                "downgraded": self.downgraded,
                "remapped": self.remapped,
                "suppressed_config": self.suppressed_config,
                "suppressed_inline": self.suppressed_inline,
                "suppressed_baseline": self.suppressed_baseline,
            },
        }

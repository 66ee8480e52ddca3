"""AG103 for a lock made for one environment: does it cover the project's Pythons? (no I/O)

`--backend pip-tools` resolves for the interpreter that runs pip-compile: markers are
evaluated there, so a dependency only another Python needs (`exceptiongroup ;
python_version < "3.11"`) is not in the lock, and `pip install --require-hashes` of it fails
on that Python. Such a lock says which environment it is for (the requirements lock's
header, `pylock.toml`'s `environments`); this check compares that with `requires-python`.
"""

from __future__ import annotations

from collections.abc import Mapping

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from agentguard.facts.environments import HIGHEST_MINOR, LOWEST_MINOR
from agentguard.facts.environments import environment_marker as environment_marker
from agentguard.findings import Finding, Fix, Location
from agentguard.rules.deps import LockOutOfSync


def supported_minors(requires_python: str | None) -> list[str] | None:
    """The Python minors (3.8 to the newest known) ``requires-python`` admits; None when it
    cannot be read."""
    try:
        spec = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        return None
    return [
        f"3.{m}"
        for m in range(LOWEST_MINOR, HIGHEST_MINOR + 1)
        if spec.contains(f"3.{m}.0", prereleases=True) or spec.contains(f"3.{m}.99", True)
    ]


def check_environment_cover(
    universal: bool,
    environment: Mapping[str, str] | None,
    requires_python: str | None,
    where: str,
) -> list[Finding]:
    """AG103 when a lock resolved for one environment does not cover every Python the
    project supports (``where``: the lock file the finding points at)."""
    if universal:
        return []
    python = (environment or {}).get("python_version")
    minors = supported_minors(requires_python)
    if python is not None and minors is not None and set(minors) <= {python}:
        return []
    label = environment_marker(environment) if environment else "one environment, not recorded"
    others = [m for m in minors or [] if m != python]
    supports = (
        f"requires-python {requires_python!s} also admits Python {', '.join(others)}"
        if requires_python
        else "the project sets no requires-python, so every Python is admitted"
    )
    return [
        LockOutOfSync.finding(
            f"{where} was resolved for one environment only ({label}); {supports}, where it "
            "may miss a dependency and `pip install --require-hashes` of it can fail.",
            locations=[Location(path=where)],
            fix=Fix(
                "Re-lock with the default backend (`agentguard lock`, uv: one universal lock "
                "for every Python and platform), or narrow requires-python to the Python the "
                f'lock is for (`requires-python = "=={python or "3.x"}.*"`).',
                snippet="agentguard lock",
            ),
            evidence={
                "file": where,
                "environment": dict(environment) if environment else None,
                "requires_python": requires_python,
                "not_covered": others if minors is not None else None,
            },
        )
    ]

"""Hypothesis profiles for the hostile-input suite: bounded in CI, long under `make fuzz`.

``ci`` (the default) keeps the whole suite within a few minutes on a 2-core machine;
``fuzz`` runs many more examples. ``fuzz`` is chosen by ``AGENTGUARD_FUZZ=1`` or by a
``-m`` expression that names the ``fuzz`` marker (``pytest -m fuzz``); every property test
here carries that marker. Each test names its own example count for the two profiles, so
the README can say exactly how many hostile inputs of each kind are tried.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

PROFILES = ("ci", "fuzz")
_state = {"profile": "fuzz" if os.environ.get("AGENTGUARD_FUZZ") == "1" else "ci"}

# Examples per property test, by profile: (ci, fuzz). Listed in the README.
EXAMPLES: dict[str, tuple[int, int]] = {
    "layer-entries": (150, 3000),  # layers of hostile tar entries, compressed and cut
    "oci-layouts": (100, 2000),  # OCI layouts: nested, missing, forged, ill-typed documents
    "config-files": (100, 3000),  # project folders of hostile configuration files
    "lock-inputs": (80, 2000),  # pyproject.toml / requirements.in for `lock`
    "index-pages": (150, 5000),  # simple-index pages, JSON and HTML (each)
    "cli-inputs": (40, 2000),  # whole CLI runs over damaged images, compose, pyproject
    "output-formats": (150, 5000),  # reports of hostile text through text, JSON, SARIF
}

_BASE = {
    "deadline": None,
    "suppress_health_check": [
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    "print_blob": True,
}
settings.register_profile("ci", derandomize=True, **_BASE)  # type: ignore[arg-type]
settings.register_profile("fuzz", derandomize=False, **_BASE)  # type: ignore[arg-type]


def select(profile: str) -> None:
    assert profile in PROFILES, profile
    _state["profile"] = profile


def active() -> str:
    return _state["profile"]


def hostile(kind: str) -> settings:
    """The settings for one property test of ``kind`` under the active profile."""
    ci, fuzz = EXAMPLES[kind]
    name = active()
    return settings(settings.get_profile(name), max_examples=ci if name == "ci" else fuzz)

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
    "layer-entries": (60, 2000),  # random hostile tar entries in a layer
    "archive-mutations": (60, 2000),  # truncated / flipped / spliced docker save tarballs
    "stream-mutations": (30, 1000),  # the same, through the one-pass stream reader
    "oci-layouts": (50, 1500),  # random OCI layouts: nested indexes, missing/forged blobs
    "raw-bytes": (40, 1500),  # random bytes as a saved image
    "config-files": (80, 3000),  # hostile YAML/JSON/TOML/Python/TS as agent configuration
    "lock-inputs": (40, 1500),  # hostile pyproject.toml / requirements.in for `lock`
    "index-pages": (80, 3000),  # hostile simple-index pages (JSON and HTML)
    "cli-inputs": (15, 400),  # whole CLI runs over hostile files
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

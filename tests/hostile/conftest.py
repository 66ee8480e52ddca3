"""The hostile suite: profile selection (ci / fuzz) and shared fixtures."""

from __future__ import annotations

import os

import pytest

from tests.hostile import profiles


def pytest_configure(config: pytest.Config) -> None:
    # Runs when this conftest is loaded, before the test modules (and their @settings).
    markexpr = getattr(config.option, "markexpr", "") or ""
    if os.environ.get("AGENTGUARD_FUZZ") == "1" or (
        "fuzz" in markexpr and "not fuzz" not in markexpr
    ):
        profiles.select("fuzz")

"""A variable's value as far as the file says it: known, a default read as shown, or unknown."""

from __future__ import annotations

from agentguard.inspect.project.dockerfile_facts import build_facts
from agentguard.rules.interpolation import Expanded, dockerfile_env, expand, expand_compose


def test_compose_variable_without_default_is_unknown() -> None:
    assert expand_compose("${UID}:${GID}") == Expanded(None, ("UID", "GID"))
    assert expand_compose("$APP_USER") == Expanded(None, ("APP_USER",))
    assert expand_compose("${UID:?set UID}") == Expanded(None, ("UID",))
    assert expand_compose("${UID:+1000}") == Expanded(None, ("UID",))


def test_compose_default_is_read_as_shown() -> None:
    got = expand_compose("${UID:-1000}:${GID-1000}")
    assert got.value == "1000:1000"
    assert got.used == ("the default in `${UID:-1000}`", "the default in `${GID-1000}`")
    assert expand_compose("$$USER").value == "$USER"  # compose's escape: a literal $


def test_known_value_wins_over_default_and_empty_takes_colon_default() -> None:
    values = {"A": ("x", "ENV A"), "E": ("", "ENV E")}
    assert expand("${A:-y}", values.get) == Expanded("x", (), ("ENV A",))
    assert expand("${E:-y}", values.get).value == "y"
    assert expand("${E-y}", values.get).value == ""
    assert expand("${A:+set}", values.get).value == "set"


def test_dockerfile_env_follows_order_stages_and_global_args() -> None:
    df = build_facts(
        "Dockerfile",
        "ARG UID=1000\nFROM python AS base\nENV HOMEUSER=agent\n"
        "FROM base\nARG UID\nARG NAME\nENV WHO=${HOMEUSER}\nUSER x\nENV LATE=1\n",
    )
    final = df.stages[-1]
    env = dockerfile_env(df, final, 8)
    assert env["UID"] == ("1000", "the default of ARG UID (line 5)")
    assert env["NAME"] == (None, "the default of ARG NAME (line 6)")
    assert env["WHO"] == ("agent", "ENV WHO (line 7)")
    assert env["HOMEUSER"] == ("agent", "ENV HOMEUSER (line 3)")
    assert "LATE" not in env

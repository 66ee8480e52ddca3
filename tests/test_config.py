"""Configuration: [tool.agentguard] / agentguard.toml, shipped policies, and clear errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.config import (
    DEPS_KEYS,
    Config,
    ConfigError,
    IgnoreEntry,
    deps_policy,
    load_config,
    load_policy_data,
    shipped_policies,
)
from agentguard.engine import UsageError
from agentguard.findings import Severity


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def errors(project: Path) -> str:
    with pytest.raises(ConfigError) as info:
        load_config(project)
    return str(info.value)


def test_no_configuration_is_the_default_policy(tmp_path: Path) -> None:
    config = load_config(tmp_path)
    assert config == Config(
        files=("policy:default",),
        policy="default",
        fail_on=Severity.HIGH,
        disabled=frozenset(),
        severity={},
        ignores=(),
        rule_options={},
        deps=deps_policy(),
        context_severity={
            "example": Severity.MEDIUM,
            "test": Severity.LOW,
            "docs": Severity.LOW,
        },
    )


def test_deps_policy_still_reads_the_default_policy() -> None:
    policy = deps_policy()
    assert policy.is_watched("Claude_Agent_SDK")
    assert policy.watched_severity is Severity.HIGH
    assert "deps" in load_policy_data("default")


def test_pyproject_table_is_read_with_every_key(tmp_path: Path) -> None:
    write(
        tmp_path / "pyproject.toml",
        """
[project]
name = "agent"

[tool.agentguard]
fail-on = "medium"
disable = ["AG104"]

[tool.agentguard.severity]
AG201 = "low"

[tool.agentguard.ignore]
AG101 = ["requirements*.txt:3", "legacy/"]
"*" = ["tests/fixtures/**"]

[tool.agentguard.deps]
watched = ["my-sdk"]
""",
    )
    config = load_config(tmp_path)
    origin = str(tmp_path / "pyproject.toml")
    assert config.files == ("policy:default", origin)
    assert config.fail_on is Severity.MEDIUM
    assert config.disabled == frozenset({"AG104"})
    assert config.severity == {"AG201": Severity.LOW}
    assert config.ignores == (
        IgnoreEntry("*", "tests/fixtures/**", None, f"{origin}: tool.agentguard.ignore.*"),
        IgnoreEntry("AG101", "requirements*.txt", 3, f"{origin}: tool.agentguard.ignore.AG101"),
        IgnoreEntry("AG101", "legacy/", None, f"{origin}: tool.agentguard.ignore.AG101"),
    )
    # a table merges key by key over the policy: watched replaced, the rest inherited
    assert config.deps.watched == frozenset({"my-sdk"})
    assert config.deps.span_accepted == deps_policy().span_accepted


def test_agentguard_toml_uses_the_same_keys_at_top_level(tmp_path: Path) -> None:
    write(tmp_path / "agentguard.toml", 'fail-on = "low"\ndisable = ["AG406", "AG407"]\n')
    config = load_config(tmp_path)
    assert config.fail_on is Severity.LOW
    assert config.disabled == frozenset({"AG406", "AG407"})
    assert config.files == ("policy:default", str(tmp_path / "agentguard.toml"))


def test_a_pyproject_without_the_table_is_no_configuration(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "agent"\n')
    write(tmp_path / "agentguard.toml", 'fail-on = "low"\n')
    assert load_config(tmp_path).fail_on is Severity.LOW


def test_two_configuration_files_that_differ_are_ambiguous(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.agentguard]\nfail-on = "medium"\n')
    write(tmp_path / "agentguard.toml", 'fail-on = "low"\n')
    assert errors(tmp_path) == (
        f"two configurations: {tmp_path / 'agentguard.toml'} and [tool.agentguard] in "
        f"{tmp_path / 'pyproject.toml'} differ; keep one of them (agentguard does not pick one "
        "for you)"
    )


def test_two_identical_configuration_files_are_one_configuration(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[tool.agentguard]\nfail-on = "low"\n')
    write(tmp_path / "agentguard.toml", 'fail-on = "low"\n')
    config = load_config(tmp_path)
    assert config.fail_on is Severity.LOW
    assert config.notes == (
        f"config: {tmp_path / 'agentguard.toml'} and {tmp_path / 'pyproject.toml'} hold the "
        "same configuration",
    )


def test_a_policy_builds_on_another(tmp_path: Path) -> None:
    assert {"default", "strict"} <= set(shipped_policies())
    write(tmp_path / "agentguard.toml", 'policy = "strict"\n')
    config = load_config(tmp_path)
    assert config.files == ("policy:default", "policy:strict", str(tmp_path / "agentguard.toml"))
    assert config.policy == "strict"
    assert config.fail_on is Severity.MEDIUM  # from strict
    assert config.deps.tail_severity is Severity.MEDIUM  # strict's [deps] over default's
    assert config.deps.watched == deps_policy().watched  # default's, inherited


def test_the_project_file_wins_over_its_policy(tmp_path: Path) -> None:
    write(tmp_path / "agentguard.toml", 'policy = "strict"\nfail-on = "critical"\n')
    assert load_config(tmp_path).fail_on is Severity.CRITICAL


def test_explicit_config_file_is_the_only_one_read(tmp_path: Path) -> None:
    write(tmp_path / "agentguard.toml", "bogus = 1\n")
    other = write(tmp_path / "ci" / "gate.toml", 'fail-on = "info"\n')
    assert load_config(tmp_path, config_file=other).fail_on is Severity.INFO


def test_config_error_is_a_usage_error() -> None:
    assert issubclass(ConfigError, UsageError)  # the CLI exits 2 for both


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'fail_on = "high"\n',
            "{f}: unknown key `tool.agentguard.fail_on` (known keys: policy, fail-on, disable, "
            "severity, ignore, rules, deps, build, min-release-age, exclude, context, "
            "context-severity, smoke, delta)",
        ),
        (
            "build = 0\n",
            "{f}: tool.agentguard.build must be true or false",
        ),
        (
            'min-release-age = "soon"\n',
            '{f}: tool.agentguard.min-release-age must be a duration such as "7d", "36h" '
            "or \"2w\" (got 'soon')",
        ),
        (
            '[severity]\nAG201 = "urgent"\n',
            "{f}: tool.agentguard.severity.AG201: unknown severity 'urgent' (expected one of: "
            "info, low, medium, high, critical)",
        ),
        (
            'fail-on = "fatal"\n',
            "{f}: tool.agentguard.fail-on: unknown severity 'fatal' (expected one of: info, "
            "low, medium, high, critical)",
        ),
        (
            'disable = ["AG999"]\n',
            "{f}: tool.agentguard.disable: unknown rule AG999 (`agentguard rules` lists them)",
        ),
        (
            'disable = ["shell"]\n',
            "{f}: tool.agentguard.disable: 'shell' is not a rule id (AGnnn)",
        ),
        ('disable = "AG101"\n', "{f}: tool.agentguard.disable must be a list of rule ids"),
        (
            '[deps]\nwatched-severity = "dire"\n',
            "{f}: tool.agentguard.deps: unknown severity 'dire' (expected one of: info, low, "
            "medium, high, critical)",
        ),
        (
            '[ignore]\nAG101 = "x.py"\n',
            "{f}: tool.agentguard.ignore.AG101 must be a list of paths (or path:line)",
        ),
        (
            "[rules.AG101]\nthreshold = 2\n",
            "{f}: tool.agentguard.rules.AG101: unknown option `threshold` (AG101 takes: none)",
        ),
        (
            "[deps]\nwatch = []\n",
            "{f}: unknown key `tool.agentguard.deps.watch` (known keys: "
            + ", ".join(DEPS_KEYS)
            + ")",
        ),
        (
            'policy = "paranoid"\n',
            "{f}: tool.agentguard.policy: unknown policy 'paranoid' (shipped: default, strict)",
        ),
    ],
)
def test_config_errors_name_the_file_and_the_key(tmp_path: Path, text: str, message: str) -> None:
    if text.startswith("["):  # a sub-table of [tool.agentguard]
        text = text.replace("[", "[tool.agentguard.", 1)
    pyproject = write(tmp_path / "pyproject.toml", "[tool.agentguard]\n" + text)
    assert errors(tmp_path) == message.format(f=pyproject)


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    path = write(tmp_path / "agentguard.toml", "fail-on = \n")
    assert errors(tmp_path).startswith(f"{path}: not valid TOML: ")


@settings(max_examples=500, deadline=None)
@given(st.text(alphabet="aZ09-_.İß ", max_size=12))
def test_config_spells_package_names_as_packaging_does(name: str) -> None:
    from packaging.utils import canonicalize_name

    from agentguard.config import canonical_name

    assert canonical_name(name) == canonicalize_name(name)


def test_the_shipped_policies_read_the_same_through_the_import_system(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Read from the package's folder (the fast way), or through importlib.resources when
    the package is no folder (installed in a zip): the same policies, the same texts."""
    from agentguard import config as config_module

    names = config_module.shipped_policies()
    data = {n: config_module.load_policy_data(n) for n in names}
    assert "default" in names
    monkeypatch.setattr(config_module, "_POLICIES", tmp_path / "not-a-folder")
    assert config_module.shipped_policies() == names
    assert {n: config_module.load_policy_data(n) for n in names} == data

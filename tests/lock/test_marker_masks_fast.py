"""A marker's mask is evaluated once per group of environments the marker cannot tell
apart (the same values of every variable it names); it must be exactly the mask of one
evaluation per environment, for any marker, the odd spellings included."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from packaging.markers import Marker

from agentguard.facts.environments import EnvironmentTable


class _Ungrouped(EnvironmentTable):
    """Every environment in a group of its own: one evaluation per environment."""

    def _groups(self, marker: str) -> list[tuple[int, ...]]:
        return [(i,) for i in range(len(self.environments))]


def _mask_one_by_one(table: EnvironmentTable, marker: str) -> int:
    """The mask as it was worked out before grouping: every environment evaluated."""
    fresh = _Ungrouped([])
    fresh.environments, fresh.all = table.environments, table.all
    return fresh.mask(marker)


_ATOMS = [
    'python_version < "3.12"',
    'python_full_version >= "3.11.4"',
    "python_version >= '3.13'",
    'sys_platform == "win32"',
    'sys_platform != "darwin"',
    'platform_machine == "aarch64"',
    'platform_system == "Darwin"',
    'os_name == "nt"',
    'os.name == "nt"',
    'sys.platform == "linux"',
    'platform.machine == "x86_64"',
    'python_implementation == "PyPy"',
    'platform_python_implementation != "CPython"',
    'implementation_name == "pypy"',
    'implementation_version >= "3"',
    'extra == "docker"',
    "'linux' in sys_platform",
    'platform_release >= "5"',
    'python_version ~= "3.11"',
    'python_version === "3.12"',
]
_TABLE_MARKERS = [
    'python_full_version < "3.11"',
    'python_full_version >= "3.12.4"',
    'python_version >= "3.13"',
    'sys_platform == "win32"',
]
_MARKER = st.recursive(
    st.sampled_from(_ATOMS),
    lambda inner: st.tuples(inner, st.sampled_from([" and ", " or "]), inner).map(
        lambda t: f"({t[0]}{t[1]}{t[2]})"
    ),
    max_leaves=4,
)


@settings(max_examples=300, deadline=None)
@given(marker=_MARKER)
def test_grouped_mask_is_the_mask_of_every_environment(marker: str) -> None:
    table = EnvironmentTable(_TABLE_MARKERS, ">=3.10")
    assert table.mask(marker) == _mask_one_by_one(table, marker)


@pytest.mark.parametrize("marker", _ATOMS)
def test_each_spelling_is_grouped_soundly(marker: str) -> None:
    table = EnvironmentTable(_TABLE_MARKERS, ">=3.10")
    assert table.mask(marker) == _mask_one_by_one(table, marker)


def test_a_python_marker_is_evaluated_once_per_python(monkeypatch: pytest.MonkeyPatch) -> None:
    table = EnvironmentTable(_TABLE_MARKERS, ">=3.10")
    pythons = {e.python for e in table.environments}
    assert len(table.environments) > len(pythons)  # (several platforms per Python)
    calls: list[dict[str, str]] = []
    evaluate = Marker.evaluate

    def counted(self: Marker, environment: dict[str, str] | None = None) -> bool:
        calls.append(dict(environment or {}))
        return evaluate(self, environment)

    monkeypatch.setattr(Marker, "evaluate", counted)
    mask = table.mask('python_full_version >= "3.12.4"')
    assert len(calls) == len(pythons)
    expected = sum(
        1 << i
        for i, e in enumerate(table.environments)
        if tuple(map(int, e.python.split("."))) >= (3, 12, 4)
    )
    assert mask == expected


def test_an_unknown_spelling_is_evaluated_in_every_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    table = EnvironmentTable(_TABLE_MARKERS, ">=3.10")
    calls = []
    evaluate = Marker.evaluate

    def counted(self: Marker, environment: dict[str, str] | None = None) -> bool:
        calls.append(1)
        return evaluate(self, environment)

    monkeypatch.setattr(Marker, "evaluate", counted)
    table.mask('os.name == "nt"')
    assert len(calls) == len(table.environments)

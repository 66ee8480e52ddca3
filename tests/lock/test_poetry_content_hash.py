"""`lock --check` agrees with `poetry check --lock`: poetry.lock's content-hash against
the dependency tables of pyproject.toml, with Poetry's own algorithm (checked against locks
real Poetry wrote: OpenHands' by Poetry 2.1.3, the poetry-relock fixture by 2.5.1)."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from agentguard.lock.poetry_hash import content_hash, is_fresh
from tests.lock.helpers import findings, run_json
from tests.wheelhouse import write_simple_index

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "existing_locks"

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _data(path: Path) -> dict[str, object]:
    return tomllib.loads(path.read_text("utf-8"))


def test_the_hash_is_the_one_real_poetry_wrote() -> None:
    openhands = _data(FIXTURES / "openhands-poetry" / "pyproject.toml")
    assert content_hash(openhands) == (
        "52eda0cd6b8a2e245057c005edcf93daf4151e99d019477c8b74ddd0940e890f"
    )
    relock = FIXTURES / "poetry-relock"
    for py, lock in (
        ("pyproject.toml", "poetry.lock"),
        ("pyproject.before.toml", "poetry.before.lock"),
    ):
        recorded = _data(relock / lock)["metadata"]["content-hash"]  # type: ignore[index]
        assert content_hash(_data(relock / py)) == recorded


def test_a_lock_from_before_poetry_2_3_is_fresh_without_dependency_groups() -> None:
    data = {"project": {"dependencies": ["idna>=3"]}, "dependency-groups": {"dev": ["pytest"]}}
    old = content_hash(data, with_dependency_groups=False)
    assert is_fresh(data, old, "2.1.3")
    assert not is_fresh(data, old, "2.3.0")


def _project(tmp_path: Path) -> Path:
    root = tmp_path / "bot"
    root.mkdir()
    shutil.copy(FIXTURES / "poetry-relock" / "pyproject.toml", root / "pyproject.toml")
    shutil.copy(FIXTURES / "poetry-relock" / "poetry.lock", root / "poetry.lock")
    return root


def _check(root: Path, tmp_path: Path) -> list[dict[str, object]]:
    # an empty local index: nothing is fetched (the content-hash needs no index)
    index = write_simple_index(tmp_path / "none", tmp_path / "simple")
    _code, report, _ = run_json("lock", "--check", str(root), "--index-url", index)
    return [f for f in findings(report, "AG103") if "recorded_content_hash" in f["evidence"]]


def test_a_fresh_poetry_lock_passes(tmp_path: Path) -> None:
    assert _check(_project(tmp_path), tmp_path) == []


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('sniffio = "1.3.1"', 'sniffio = ">=1.3.1"'),  # a widened range: still admits 1.3.1
        ('sniffio = "1.3.1"', 'sniffio = "1.3.1"\nanyio = "*"'),  # an added dependency
    ],
)
def test_a_changed_pyproject_is_what_poetry_check_lock_rejects(
    tmp_path: Path, before: str, after: str
) -> None:
    root = _project(tmp_path)
    py = root / "pyproject.toml"
    py.write_text(py.read_text().replace(before, after))

    found = _check(root, tmp_path)

    assert [
        (f["severity"], f["message"], f["evidence"]["recorded_content_hash"]) for f in found
    ] == [
        (
            "high",
            "poetry.lock was made from another pyproject.toml than the one here: its "
            "content-hash is not the hash of the dependency tables now ([project] "
            "dependencies, [dependency-groups], [tool.poetry] dependencies and groups), so "
            "`poetry check --lock` rejects it and `poetry install` refuses it.",
            "fb7953dbf888a29369eeca59a8bed7c6b3eee780ddf22d6b8ca5c14736c4f52b",
        )
    ]


def test_a_constraint_spaced_as_poetry_allows_is_read_and_gated_as_poetry_does(
    tmp_path: Path,
) -> None:
    """``idna = ">= 3.7, < 4"`` (spaces after the operators, as Poetry allows) was read as
    ``idna>=,==3.7,<,==4``: `lock --check` ended 2 on a lock Poetry 2.5.1 wrote and
    `poetry check --lock` accepts. Respaced, the table's hash changes, and Poetry rejects it:
    so does agentguard."""
    root = tmp_path / "bot"
    shutil.copytree(FIXTURES / "poetry-spaced", root)
    recorded = _data(root / "poetry.lock")["metadata"]["content-hash"]  # type: ignore[index]
    assert content_hash(_data(root / "pyproject.toml")) == recorded
    assert _check(root, tmp_path) == []

    py = root / "pyproject.toml"
    py.write_text(py.read_text().replace('">= 3.7, < 4"', '">=3.7,<4"'))
    assert [f["evidence"]["recorded_content_hash"] for f in _check(root, tmp_path)] == [recorded]

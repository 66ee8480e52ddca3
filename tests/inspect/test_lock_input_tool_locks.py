"""AG110's lock input from a project's own uv.lock or poetry.lock: what an install from it
puts in place (uv: reachable from the project's non-development dependencies, with the
markers of the paths to each; Poetry: the main group)."""

from __future__ import annotations

from pathlib import Path

from agentguard.inspect.lock_input import LockedPin, read_lock

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def test_uv_lock_and_poetry_lock_give_the_installed_pins() -> None:
    uv, source = read_lock(FIXTURES / "existing_locks" / "anyio" / "uv.lock")
    assert uv is not None and source.status.value == "ok"
    assert uv.pins == (
        LockedPin("anyio", "4.6.2.post1", None),
        LockedPin("exceptiongroup", "1.2.2", "python_full_version < '3.11'"),
        LockedPin("idna", "3.10", None),
        LockedPin("sniffio", "1.3.1", None),
        LockedPin("typing-extensions", "4.12.2", "python_full_version < '3.11'"),
    )
    poetry, _ = read_lock(FIXTURES / "existing_locks" / "anyio" / "poetry.lock")
    assert poetry is not None
    assert [(p.name, p.version) for p in poetry.pins] == [(p.name, p.version) for p in uv.pins]
    assert poetry.pins[1].marker == 'python_version == "3.10"'


def test_uv_development_groups_are_not_what_an_install_puts_in_place() -> None:
    lock, _ = read_lock(FIXTURES / "AG121" / "fail" / "pyproject-locked-by-uv" / "uv.lock")
    assert lock is not None
    names = {p.name for p in lock.pins}
    assert {"mcp", "pydantic", "tzdata", "tzlocal"} <= names
    assert not names & {"pytest", "pyright", "ruff", "freezegun"}  # [tool.uv] dev-dependencies
    assert next(p for p in lock.pins if p.name == "pywin32").marker == "sys_platform == 'win32'"


def test_a_truncated_uv_lock_is_a_failed_lock_source(tmp_path: Path) -> None:
    text = (FIXTURES / "existing_locks" / "anyio" / "uv.lock").read_text()
    (tmp_path / "uv.lock").write_text("".join(text.splitlines(keepends=True)[:23]))
    lock, source = read_lock(tmp_path / "uv.lock")
    assert lock is None
    assert (source.status.value, source.error_code, source.reason) == (
        "failed",
        "lockfile-invalid",
        f"{tmp_path / 'uv.lock'}:20: exceptiongroup==1.2.2 names no wheel or sdist (cut short?)",
    )


def _image(installed: dict[str, str]):  # type: ignore[no-untyped-def]
    from tests.rules.facts_loader import image_from_json

    venv = "/app/.venv/lib/python3.12/site-packages"
    return image_from_json(
        {
            "target": "bot:1",
            "config": {
                "User": "10001",
                "WorkingDir": "/app",
                "history": [
                    {"created_by": "ADD rootfs.tar /"},
                    {"created_by": "RUN /bin/sh -c uv sync --locked --no-dev"},
                ],
            },
            "installed": [
                {"name": n, "version": v, "location": venv, "layer": 1}
                for n, v in sorted(installed.items())
            ],
        }
    )


def test_ag110_compares_an_image_with_the_uv_lock() -> None:
    from agentguard.config import load_config
    from agentguard.rules.inspected import check_image

    lock, _ = read_lock(FIXTURES / "existing_locks" / "anyio" / "uv.lock")
    assert lock is not None
    watched = load_config(None).deps.watched
    # Python 3.12: the backports' markers rule them out; the rest is installed as locked.
    same = _image({"anyio": "4.6.2.post1", "idna": "3.10", "sniffio": "1.3.1"})
    assert [f for f in check_image(same, lock=lock, watched=watched) if f.rule_id == "AG110"] == []

    moved = _image({"anyio": "4.6.2.post1", "idna": "3.11", "sniffio": "1.3.1"})
    drift = [f for f in check_image(moved, lock=lock, watched=watched) if f.rule_id == "AG110"]
    assert [(f.evidence["package"], f.evidence["drift"], f.evidence["locked"]) for f in drift] == [
        ("idna", "other-version", ["3.10"])
    ]


def test_python_full_version_markers_are_decided_from_the_python_version() -> None:
    from agentguard.rules.installed import evaluate_marker

    env = {"python_version": "3.12", "sys_platform": "linux"}
    assert evaluate_marker("python_full_version < '3.11'", env) is False
    assert evaluate_marker("python_full_version >= '3.10'", env) is True
    assert evaluate_marker("python_full_version >= '3.12.4'", env) is None  # the patch decides
    assert evaluate_marker("python_full_version < '3.13' and os_name == 'nt'", env) is None

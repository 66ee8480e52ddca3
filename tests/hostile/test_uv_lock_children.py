"""What `uv lock` on the copy (a re-lock of a uv project) and npm's registry question read
around them: never a program the pull request names in `.python-version`, never a workspace
or an `.npmrc` that a local user left above the scratch folder (a shared `/tmp`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.lock.helpers import run_json

_LOCK = 'version = 1\nrevision = 3\nrequires-python = "{rp}"\n\n[[package]]\nname = "{name}"\n'
_LOCK += 'version = "0.1.0"\nsource = {{ editable = "." }}\n'

_BACKEND = """\
import os, pathlib
pathlib.Path({marker!r}).write_text(os.getcwd())
def prepare_metadata_for_build_wheel(d, config_settings=None):
    info = os.path.join(d, "m-0.1.0.dist-info")
    os.makedirs(info, exist_ok=True)
    with open(os.path.join(info, "METADATA"), "w") as f:
        f.write("Metadata-Version: 2.1\\nName: m\\nVersion: 0.1.0\\n")
    return "m-0.1.0.dist-info"
prepare_metadata_for_build_editable = prepare_metadata_for_build_wheel
def get_requires_for_build_wheel(config_settings=None):
    return []
get_requires_for_build_editable = get_requires_for_build_wheel
"""


def _uv_project(folder: Path, requires_python: str, extra: str = "") -> Path:
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = "{requires_python}"\n'
        f'dependencies = []\n\n[build-system]\nrequires = []\nbuild-backend = "b"\n{extra}',
        encoding="utf-8",
    )
    (folder / "b.py").write_text("", encoding="utf-8")  # (never asked: the metadata is static)
    (folder / "uv.lock").write_text(_LOCK.format(rp=requires_python, name="bot"))
    return folder


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "AGENTGUARD_CACHE_DIR": str(tmp_path / "cache"), **extra}


def test_a_python_version_file_naming_a_program_of_the_checkout_is_never_run(
    tmp_path: Path,
) -> None:
    """A project that this interpreter does not fit, with a `[tool.uv]` table (so uv reads
    its configuration) and `.python-version` naming `./tools/python`: uv ran that file (to
    ask what interpreter it is) even under `--only-binary`."""
    marker = tmp_path / "ran"
    project = _uv_project(tmp_path / "bot", ">=3.99", "\n[tool.uv]\n")
    tool = project / "tools" / "python"
    tool.parent.mkdir()
    tool.write_text(f"#!/bin/sh\necho ran > {marker}\nexit 1\n", encoding="utf-8")
    tool.chmod(0o755)
    (project / ".python-version").write_text("./tools/python\n", encoding="utf-8")

    code, report, stderr = run_json(
        "lock", str(project), "--only-binary", "--no-index", env=_env(tmp_path)
    )

    assert not marker.exists(), stderr
    # no interpreter fits: a failed resolution, never a lock
    assert code == 3 and report["complete"] is False
    assert (project / "uv.lock").read_text() == _LOCK.format(rp=">=3.99", name="bot")


def test_a_workspace_planted_above_the_scratch_folder_is_not_the_one_locked(
    tmp_path: Path,
) -> None:
    """A local user's `pyproject.toml` in the shared temporary folder, whose workspace lists
    every copy agentguard makes there: uv took the copy for its member, built the planted
    member (its backend ran) and wrote the lock there, and agentguard called the project's
    lock up to date."""
    shared = tmp_path / "shared"
    member = shared / "m"
    member.mkdir(parents=True)
    marker = tmp_path / "built"
    (member / "backend.py").write_text(_BACKEND.format(marker=str(marker)), encoding="utf-8")
    (member / "pyproject.toml").write_text(
        '[project]\nname = "m"\nversion = "0.1.0"\ndynamic = ["dependencies"]\n\n'
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        encoding="utf-8",
    )
    members = ", ".join(f'"agentguard-uvlock-*/{p}"' for p in ("*", "*/*", "*/*/*", "*/*/*/*"))
    (shared / "pyproject.toml").write_text(
        f'[tool.uv.workspace]\nmembers = ["m", {members}]\n', encoding="utf-8"
    )
    here = "{}.{}".format(*__import__("sys").version_info[:2])
    project = _uv_project(tmp_path / "bot", f">={here}")

    code, report, stderr = run_json(
        "lock", str(project), "--only-binary", "--no-index", env=_env(tmp_path, TMPDIR=str(shared))
    )

    assert not marker.exists(), stderr
    assert not (shared / "uv.lock").exists()
    assert code == 0 and report["complete"] is True, report["sources"]
    assert sorted(p.name for p in shared.iterdir()) == ["m", "pyproject.toml"]  # (copy gone)


def test_npm_registry_question_reads_no_npmrc_above_the_scratch_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """npm takes the nearest folder above it with a `package.json` for the project and reads
    its `.npmrc`: one in the shared temporary folder named the registry agentguard used."""
    import tempfile

    if shutil.which("npm") is None:  # (a test that cannot ask npm fails: it never skips)
        pytest.fail("npm is needed for this test (install npm)")

    from agentguard.lock.deadline import NO_DEADLINE
    from agentguard.lock.servers.npm import default_registry

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "package.json").write_text("{}\n", encoding="utf-8")
    (shared / ".npmrc").write_text("registry=http://127.0.0.1:9/planted/\n", encoding="utf-8")
    monkeypatch.setenv("TMPDIR", str(shared))
    monkeypatch.setattr(tempfile, "tempdir", None)  # (asked again: TMPDIR above)
    monkeypatch.delenv("npm_config_registry", raising=False)

    assert "planted" not in (default_registry(NO_DEADLINE) or "")


def _dynamic_package(folder: Path, name: str, marker: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "backend.py").write_text(_BACKEND.format(marker=str(marker)), encoding="utf-8")
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "0.1.0"\ndynamic = ["dependencies"]\n\n'
        '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n',
        encoding="utf-8",
    )


@pytest.mark.parametrize("where", ["the project", "a workspace member"])
def test_only_binary_runs_no_build_backend_of_the_checkout(tmp_path: Path, where: str) -> None:
    """`--only-binary` ("no package code runs while locking"): uv's `--no-build` covers the
    packages it downloads, not the project or its workspace members, whose build backend
    it asks for their dynamic metadata: `uv lock` is not started on such a project, and the
    run says why (incomplete, never a lock "up to date")."""
    marker = tmp_path / "built"
    project = tmp_path / "bot"
    if where == "the project":
        _dynamic_package(project, "bot", marker)
        (project / "uv.lock").write_text(_LOCK.format(rp=">=3.10", name="bot"))
    else:
        here = "{}.{}".format(*__import__("sys").version_info[:2])
        _uv_project(project, f">={here}", '\n[tool.uv.workspace]\nmembers = ["libs/*"]\n')
        _dynamic_package(project / "libs" / "m", "m", marker)
    before = (project / "uv.lock").read_bytes()

    code, report, stderr = run_json(
        "lock", str(project), "--only-binary", "--no-index", env=_env(tmp_path)
    )

    assert not marker.exists(), stderr
    assert code == 3 and report["complete"] is False
    reasons = " ".join(str(s.get("reason")) for s in report["sources"])
    assert "would run the build backend of" in reasons and "dynamic" in reasons, reasons
    assert (project / "uv.lock").read_bytes() == before


@pytest.mark.parametrize(
    ("members", "member", "how"),
    [
        ('members = ["libs/*"]', "libs/.m", "--only-binary"),  # (uv's `*` takes `.m`)
        ('members = ["**/m"]', "libs/x/m", "--only-binary"),  # (uv's `**` is any depth)
        # (uv excludes the path it found, `libs/a`, not where the link leads)
        ('members = ["libs/*"]\nexclude = ["other/m"]', "libs/a", "build = false"),
    ],
)
def test_members_uv_finds_are_the_members_looked_at(
    tmp_path: Path, members: str, member: str, how: str
) -> None:
    """A workspace member with dynamic metadata that uv's glob finds but Python's did not
    (a hidden folder, `**`, a link into an excluded folder): its backend ran under
    `--only-binary` and under `build = false`."""
    marker = tmp_path / "built"
    project = tmp_path / "bot"
    here = "{}.{}".format(*__import__("sys").version_info[:2])
    config = "\n[tool.agentguard]\nbuild = false\n" if how == "build = false" else ""
    _uv_project(project, f">={here}", f"\n[tool.uv.workspace]\n{members}\n{config}")
    if member == "libs/a":
        _dynamic_package(project / "other" / "m", "m", marker)
        (project / "libs").mkdir()
        (project / "libs" / "a").symlink_to("../other/m")
    else:
        _dynamic_package(project / member, "m", marker)
    flags = ["--only-binary"] if how == "--only-binary" else []

    code, report, stderr = run_json("lock", str(project), *flags, "--no-index", env=_env(tmp_path))

    assert not marker.exists(), stderr
    assert code == 3 and report["complete"] is False
    reasons = " ".join(str(s.get("reason")) for s in report["sources"])
    assert f"{member}/pyproject.toml (its metadata is dynamic)" in reasons, reasons

"""The gate reads uv.lock the way uv does: on a lock `uv lock --check` calls up to date,
agentguard finds no AG103; dynamic dependencies and virtual workspace roots get a report
(never exit 2). Each project is shaped like the real one it stands for (langgraph's
`libs/`, the MCP Python SDK / fastmcp / pydantic-ai hatch hooks, aider's setuptools
files, crewAI's virtual root), with real uv and real wheels in a local index."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agentguard.lock.backend import uv_binary
from agentguard.lock.uv_records import differences, same_marker
from tests.lock.helpers import findings, run_cli, run_json
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.usefixtures("isolated_cache")


def _uv(project: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [uv_binary(), *args, "--offline", "--python", sys.executable],
        cwd=project,
        capture_output=True,
        text=True,
        check=check,
        timeout=300,
    )


def _index(tmp_path: Path) -> str:
    wheels = tmp_path / "wheels"
    build_wheel(wheels, "langchain-core", "1.5.3", ["pydantic-lite>=1"])
    build_wheel(wheels, "pydantic-lite", "1.0.0")
    build_wheel(wheels, "ormsgpack", "1.12.0")
    build_wheel(wheels, "xxhash", "3.5.0")
    build_wheel(wheels, "tomli", "2.0.0")
    build_wheel(wheels, "pywin-lite", "310")
    return write_simple_index(wheels, tmp_path / "simple")


def _member(folder: Path, name: str, version: str, deps: list[str]) -> None:
    folder.mkdir(parents=True)
    (folder / "pyproject.toml").write_text(
        f'[project]\nname = "{name}"\nversion = "{version}"\nrequires-python = ">=3.10"\n'
        f"dependencies = {json.dumps(deps)}\n\n"
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n',
        encoding="utf-8",
    )


def _index_table(url: str) -> str:
    return f'[[tool.uv.index]]\nname = "local"\nurl = "{url}"\ndefault = true\n'


# langgraph's libs/langgraph: path sources with ranges, python_version markers
_LANGGRAPH_DEPS = [
    "langchain-core>=1.0.0",
    "langgraph-checkpoint>=4.1.0,<5.0.0",
    'xxhash>=3.5.0; python_version >= "3.11"',
    'tomli; python_version < "3.11"',
    'tomli>=2; python_version <= "3.10" and sys_platform == "linux"',
    'pywin-lite>=310; platform_system == "Windows"',
    'ormsgpack>=1.12.0; python_version > "3.9"',
]


@pytest.fixture()
def langgraph_like(tmp_path: Path) -> Path:
    url = _index(tmp_path)
    libs = tmp_path / "libs"
    _member(libs / "checkpoint", "langgraph-checkpoint", "4.1.0", ["ormsgpack>=1.12.0"])
    project = libs / "langgraph"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "langgraph"\nversion = "1.2.0"\nrequires-python = ">=3.10"\n'
        f"dependencies = {json.dumps(_LANGGRAPH_DEPS)}\n\n"
        '[build-system]\nrequires = ["hatchling"]\nbuild-backend = "hatchling.build"\n\n'
        "[tool.uv.sources]\n"
        'langgraph-checkpoint = { path = "../checkpoint", editable = true }\n\n'
        + _index_table(url),
        encoding="utf-8",
    )
    _uv(project, "lock")
    return project


def test_a_correct_uv_lock_with_markers_and_path_sources_is_in_sync(langgraph_like: Path) -> None:
    assert _uv(langgraph_like, "lock", "--check").returncode == 0  # uv: up to date

    code, report, _ = run_json("lock", "--check", str(langgraph_like))

    assert findings(report, "AG103") == []
    assert code == 0
    assert {s["status"] for s in report["sources"]} == {"ok"}


def test_a_widened_range_on_a_path_source_marker_is_still_out_of_sync(
    langgraph_like: Path,
) -> None:
    py = langgraph_like / "pyproject.toml"
    py.write_text(
        py.read_text().replace(
            '"xxhash>=3.5.0; python_version >= \\"3.11\\""',
            '"xxhash>=3.5.0; python_version >= \\"3.12\\""',
        )
    )
    assert _uv(langgraph_like, "lock", "--check", check=False).returncode != 0  # uv: stale

    _code, report, _ = run_json("lock", "--check", str(langgraph_like))

    assert [f["evidence"]["declared_only"] for f in findings(report, "AG103")] == [
        ['xxhash>=3.5.0 ; python_version >= "3.12"']
    ]
    assert [f["evidence"]["locked_only"] for f in findings(report, "AG103")] == [
        ['xxhash>=3.5.0 ; python_full_version >= "3.11"']
    ]


@pytest.mark.parametrize(
    ("declared", "recorded", "same"),
    [
        ('python_version >= "3.11"', "python_full_version >= '3.11'", True),
        ('python_version <= "3.11"', "python_full_version < '3.12'", True),
        ('python_version > "3.8"', "python_full_version >= '3.9'", True),
        ('python_version == "3.11"', "python_full_version == '3.11.*'", True),
        (
            'platform_system == "Windows" or sys_platform == "darwin"',
            "sys_platform == 'darwin' or sys_platform == 'win32'",
            True,
        ),
        (
            'python_version < "3.12" and sys_platform == "linux"',
            "sys_platform == 'linux' and python_full_version < '3.12'",
            True,
        ),
        ('python_version >= "3.11"', "python_full_version >= '3.12'", False),
        ('python_version < "3.11"', "python_full_version < '3.11.4'", False),
        ('sys_platform == "linux"', "sys_platform == 'darwin'", False),
        (  # a field packaging compares as a version: a value that reads as one is tried
            "platform_release != 'v0' and python_version >= '3.0'",
            "platform_release != 'v0' and python_full_version >= '3.300'",
            False,
        ),
    ],
)
def test_markers_are_compared_by_meaning(declared: str, recorded: str, same: bool) -> None:
    assert same_marker(declared, recorded) is same


def test_differences_pair_each_requirement_once() -> None:
    assert differences(
        ["a>=1 ; python_version >= '3.11'", "a>=1 ; python_version >= '3.11'"],
        ["a>=1 ; python_full_version >= '3.11'"],
    ) == (['a>=1 ; python_version >= "3.11"'], [])


# --- dynamic dependencies -------------------------------------------------------------


def _hatch_dynamic(project: Path) -> None:
    """The pyproject.toml of the MCP Python SDK / fastmcp / pydantic-ai, trimmed: the
    dependencies come from a hatch metadata hook (`uv-dynamic-versioning`)."""
    text = (project / "pyproject.toml").read_text()
    head, _, rest = text.partition("dependencies = ")
    rest = rest.split("\n", 1)[1]
    (project / "pyproject.toml").write_text(
        head.replace('version = "1.2.0"\n', "")
        + 'dynamic = ["version", "dependencies"]\n'
        + rest
        + '\n[tool.hatch.version]\nsource = "uv-dynamic-versioning"\n\n'
        "[tool.hatch.metadata.hooks.uv-dynamic-versioning]\n"
        f"dependencies = {json.dumps(_LANGGRAPH_DEPS)}\n",
        encoding="utf-8",
    )


def test_hatch_dynamic_dependencies_read_the_locks_record_and_write_every_format(
    langgraph_like: Path, tmp_path: Path
) -> None:
    _hatch_dynamic(langgraph_like)
    sarif = tmp_path / "out.sarif"
    out = tmp_path / "out.json"
    proc = run_cli(
        "check",
        str(langgraph_like),
        "--format",
        "json",
        "--output",
        str(out),
        "--sarif-output",
        str(sarif),
    )

    assert proc.returncode == 0, proc.stderr
    report = json.loads(out.read_text())
    assert json.loads(sarif.read_text())["runs"]
    assert findings(report, "AG103") == []
    skipped = [
        (s["kind"], s["name"], s["reason"]) for s in report["sources"] if s["status"] == "skipped"
    ]
    assert (
        "file",
        "pyproject.toml [project] dependencies",
        "dynamic: computed by the hatch build backend (a metadata hook), which agentguard "
        "does not run; the gate reads uv.lock's own record of the project's requirements (7); "
        "whether that record is current was not checked (`uv lock --check` would run the build "
        "backend, which is the pull request's code)",
    ) in skipped
    assert ("lockfile", "uv.lock", "ok") in [
        (s["kind"], s["name"], s["status"]) for s in report["sources"]
    ]
    assert not [s for s in report["sources"] if s["status"] == "failed"]


def test_setuptools_file_dependencies_are_read_from_the_file(langgraph_like: Path) -> None:
    """aider: `dependencies = {file = "requirements.txt"}`; the file is read as setuptools
    reads it, and a change in it is AG103 against uv.lock's record."""
    py = langgraph_like / "pyproject.toml"
    text = py.read_text()
    head, _, rest = text.partition("dependencies = ")
    py.write_text(
        head
        + 'dynamic = ["dependencies"]\n'
        + rest.split("\n", 1)[1]
        + '\n[tool.setuptools.dynamic]\ndependencies = { file = ["requirements.txt"] }\n'
    )
    (langgraph_like / "requirements.txt").write_text(
        "# pinned by hand\n" + "\n".join(_LANGGRAPH_DEPS) + "\n"
    )
    code, report, _ = run_json("lock", "--check", str(langgraph_like))
    assert (code, findings(report, "AG103")) == (0, [])

    (langgraph_like / "requirements.txt").write_text(
        "\n".join(
            d.replace("langchain-core>=1.0.0", "langchain-core>=1.5") for d in _LANGGRAPH_DEPS
        )
    )
    _code, report, _ = run_json("lock", "--check", str(langgraph_like))
    assert [f["evidence"]["declared_only"] for f in findings(report, "AG103")] == [
        ["langchain-core>=1.5"]
    ]
    assert [
        (loc["path"], loc.get("line")) for f in findings(report, "AG103") for loc in f["locations"]
    ] == [("uv.lock", None), ("pyproject.toml", None)]


def test_setuptools_file_dependencies_without_a_lock_get_a_report(tmp_path: Path) -> None:
    """aider itself: no uv.lock, dependencies from requirements files: a report, not exit 2."""
    project = tmp_path / "aider"
    project.mkdir()
    (project / "pyproject.toml").write_text(
        '[project]\nname = "aider-chat"\ndynamic = ["dependencies", "optional-dependencies", "version"]\n'
        'requires-python = ">=3.10"\n\n[tool.setuptools.dynamic]\n'
        'dependencies = { file = "requirements.txt" }\n\n'
        "[tool.setuptools.dynamic.optional-dependencies]\n"
        'dev = { file = "requirements/requirements-dev.txt" }\n\n'
        '[build-system]\nrequires = ["setuptools>=68"]\nbuild-backend = "setuptools.build_meta"\n'
    )
    (project / "requirements.txt").write_text(
        "aiohappyeyeballs==2.6.1\n    # via\n    #   aiohttp\nlitellm==1.77.7\n"
    )
    (project / "requirements").mkdir()
    (project / "requirements" / "requirements-dev.txt").write_text("pytest==8.4.0\n")
    code, report, _ = run_json("check", str(project))
    # a package others install (a build backend): no lock is medium, said why; not a
    # deployment's high (the issue: "a library is not a deployment")
    assert code == 0
    (no_lock,) = findings(report, "AG103")
    assert no_lock["severity"] == "medium"
    assert no_lock["message"].startswith(
        f"No lock: neither pylock.toml nor requirements.lock exists in {project}. The project "
        "builds a package (`setuptools.build_meta`)"
    )
    assert no_lock["evidence"]["build_backend"] == "setuptools.build_meta"
    assert next(s["reason"] for s in report["sources"] if s["name"] == "pyproject.toml") == (
        "2 requirements"
    )


def test_no_lock_of_an_application_stays_high(tmp_path: Path) -> None:
    """No build backend (the incident's chat bot), or a [build-system] without [project],
    or one that cannot be read: the inputs of what is deployed, high."""
    for name, text in (
        ("app", '[project]\nname = "bot"\nversion = "1"\ndependencies = ["httpx>=0.27"]\n'),
        (
            "no-backend",
            '[project]\nname = "bot"\nversion = "1"\ndependencies = ["httpx>=0.27"]\n'
            '[build-system]\nrequires = ["setuptools"]\n',
        ),
    ):
        project = tmp_path / name
        project.mkdir()
        (project / "pyproject.toml").write_text(text)
        code, report, _ = run_json("check", str(project))
        assert code == 1, name
        (no_lock,) = findings(report, "AG103")
        assert no_lock["severity"] == "high", name
        assert no_lock["message"] == (
            f"No lock: neither pylock.toml nor requirements.lock exists in {project}."
        )
        assert "build_backend" not in no_lock["evidence"]  # (its fingerprint as before)


# --- a virtual workspace root (crewAI) --------------------------------------------------


def test_a_virtual_workspace_root_and_every_member_are_read(tmp_path: Path) -> None:
    url = _index(tmp_path)
    root = tmp_path / "crewai"
    _member(root / "lib" / "crewai", "crewai", "1.0.0", ["langchain-core>=1.0"])
    _member(root / "lib" / "crewai-tools", "crewai-tools", "1.0.0", ["crewai", "xxhash>=3"])
    (root / "lib" / "crewai-tools" / "pyproject.toml").write_text(
        (root / "lib" / "crewai-tools" / "pyproject.toml").read_text()
        + "\n[tool.uv.sources]\ncrewai = { workspace = true }\n"
    )
    (root / "pyproject.toml").write_text(
        '[dependency-groups]\ndev = ["tomli==2.0.0"]\n\n[tool.uv.workspace]\nmembers = ["lib/*"]\n\n'
        "[tool.uv.sources]\ncrewai = { workspace = true }\ncrewai-tools = { workspace = true }\n\n"
        + _index_table(url)
    )
    _uv(root, "lock")
    assert _uv(root, "lock", "--check").returncode == 0

    build_wheel(tmp_path / "wheels", "xxhash", "4.0.0")  # a new major after the lock
    write_simple_index(tmp_path / "wheels", tmp_path / "simple")
    code, report, _ = run_json("lock", "--check", str(root))
    assert findings(report, "AG103") == []
    assert [
        (f["severity"], f["locations"][0]["dependency_path"], f["evidence"]["locked"])
        for f in findings(report, "AG101")
    ] == [("medium", ["project", "crewai-tools==1.0.0", "xxhash"], ["3.5.0"])]
    assert code == 0

    # a member changed: AG103 names it
    member = root / "lib" / "crewai" / "pyproject.toml"
    member.write_text(member.read_text().replace("langchain-core>=1.0", "langchain-core>=1.5"))
    _code, report, _ = run_json("check", str(root))
    assert [f["evidence"].get("member") for f in findings(report, "AG103")] == ["crewai"]


def test_a_member_folder_is_checked_against_the_workspace_lock(tmp_path: Path) -> None:
    """`check lib/crewai` inside crewAI: the member is installed from the workspace's
    uv.lock; never "No lock" (and never a second lock proposed)."""
    url = _index(tmp_path)
    root = tmp_path / "crewai"
    _member(root / "lib" / "crewai", "crewai", "1.0.0", ["langchain-core>=1.0"])
    (root / "pyproject.toml").write_text(
        '[tool.uv.workspace]\nmembers = ["lib/*"]\n\n'
        "[tool.uv.sources]\ncrewai = { workspace = true }\n\n" + _index_table(url)
    )
    (root / ".git").mkdir()  # the repository's top
    _uv(root, "lock")

    code, report, _ = run_json("check", str(root / "lib" / "crewai"))

    assert findings(report, "AG103") == []
    assert report["notes"][:2] == [
        f"lib/crewai is a member of the uv workspace at {root}: it is installed from that "
        "workspace's uv.lock, which was checked (paths below are the workspace's).",
        "Read uv.lock, the project's own lock (written by uv); wrote nothing.",
    ]
    assert ("lockfile", "uv.lock", "ok") in [
        (s["kind"], s["name"], s["status"]) for s in report["sources"]
    ]
    assert code == 0

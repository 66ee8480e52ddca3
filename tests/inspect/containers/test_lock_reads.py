"""The project scan reads a folder's own lock (uv.lock, poetry.lock, pylock.toml) where a
finding depends on it: a pyproject.toml requirement of a watched package without an upper
bound (AG121 is mitigated when the lock holds it fixed). Elsewhere the lock is a skipped
source that says why, never a lock that holds nothing; a lock named on the command line is
always read; a lock that is needed and does not parse is a failed source."""

from __future__ import annotations

from typing import Any

from agentguard.engine.project import scan_container_files
from agentguard.findings import Source, SourceStatus
from agentguard.inspect.facts import ProjectFile

WATCHED = frozenset({"mcp"})

UV_LOCK = """version = 1
revision = 3
requires-python = ">=3.10"

[[package]]
name = "mcp"
version = "1.28.1"
source = { registry = "https://index.example/simple" }
sdist = { url = "https://index.example/mcp-1.28.1.tar.gz", hash = "sha256:aa", size = 1 }

[[package]]
name = "bot"
version = "0.1.0"
source = { virtual = "." }
dependencies = [
    { name = "mcp" },
]

[package.metadata]
requires-dist = [{ name = "mcp", specifier = ">=1.10" }]
"""
BROKEN_LOCK = UV_LOCK.replace('version = "1.28.1"', 'version = "1.28.1')
NOT_ASKED = (
    "a lock: not read, since no finding depends on what it holds (no pyproject.toml in its "
    "folder requires a watched package without an upper bound)"
)


def _pyproject(*deps: str) -> bytes:
    listed = ", ".join(f'"{d}"' for d in deps)
    return f'[project]\nname = "bot"\nversion = "0.1.0"\ndependencies = [{listed}]\n'.encode()


def _scan(*files: ProjectFile) -> tuple[list[dict[str, Any]], list[Source]]:
    findings, sources, _ = scan_container_files(list(files), watched=WATCHED)
    return [f.to_json() for f in findings if f.rule_id == "AG121"], sources


def _ag121(path: str, message: str, severity: str, **extra: Any) -> dict[str, Any]:
    return {
        "rule_id": "AG121",
        "path": path,
        "severity": severity,
        "message": message,
        **extra,
    }


def _short(found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for f in found:
        extra = {k: f["evidence"][k] for k in ("locked", "lock") if k in f["evidence"]}
        out.append(
            _ag121(f["locations"][0]["path"], f["message"], f["severity"], **extra)
            | {"line": f["locations"][0]["line"]}
        )
    return out


def test_a_floor_is_judged_against_what_the_lock_beside_it_holds() -> None:
    found, sources = _scan(
        ProjectFile("app/pyproject.toml", _pyproject("mcp>=1.10")),
        ProjectFile("app/uv.lock", UV_LOCK.encode()),
    )
    assert _short(found) == [
        _ag121(
            "app/pyproject.toml",
            "mcp is required in pyproject.toml as mcp>=1.10: a floor and no upper bound; every "
            "future major satisfies it. Mitigated: the project's lock (uv.lock) holds "
            "mcp==1.28.1; installs from it do not move (a re-lock can: cap it before the next "
            "one).",
            "info",
            locked=["1.28.1"],
            lock="uv.lock",
        )
        | {"line": 4}
    ]
    assert sources == [
        Source.ok("file", "app/pyproject.toml", "pyproject.toml (requirements)"),
        Source.ok("file", "app/uv.lock", "lock (1 packages)"),
    ]


def test_a_needed_lock_that_does_not_parse_is_a_failed_source_and_mitigates_nothing() -> None:
    found, sources = _scan(
        ProjectFile("pyproject.toml", _pyproject("mcp>=1.10")),
        ProjectFile("uv.lock", BROKEN_LOCK.encode()),
    )
    assert _short(found) == [
        _ag121(
            "pyproject.toml",
            "mcp is required in pyproject.toml as mcp>=1.10: a floor and no upper bound; every "
            "future major satisfies it.",
            "medium",
        )
        | {"line": 4}
    ]
    assert [(s.name, s.status, s.error_code) for s in sources] == [
        ("pyproject.toml", SourceStatus.OK, None),
        ("uv.lock", SourceStatus.FAILED, "lockfile-invalid"),
    ]
    assert sources[1].reason.startswith("uv.lock:7: not valid TOML")


def test_a_lock_no_finding_depends_on_is_skipped_with_the_reason_not_read_as_empty() -> None:
    # capped: AG121 does not judge it, so what the lock holds changes nothing (and the broken
    # lock is not read: it is skipped, not passed as ok)
    found, sources = _scan(
        ProjectFile("pyproject.toml", _pyproject("mcp>=1.10,<2")),
        ProjectFile("uv.lock", BROKEN_LOCK.encode()),
        ProjectFile("zz/requirements.txt", b"mcp==1.28.1\n"),
    )
    assert found == []
    assert sources == [
        Source.ok("file", "pyproject.toml", "pyproject.toml (requirements)"),
        Source.skipped("file", "uv.lock", NOT_ASKED),
        Source.ok("file", "zz/requirements.txt", "requirements file"),
    ]


def test_only_the_lock_of_the_asking_folder_is_read() -> None:
    found, sources = _scan(
        ProjectFile("pyproject.toml", _pyproject("mcp")),
        ProjectFile("poetry.lock", b"not = [toml"),
        ProjectFile("sub/uv.lock", BROKEN_LOCK.encode()),
        ProjectFile("uv.lock", UV_LOCK.encode()),
    )
    assert [(f["severity"], f["evidence"].get("lock")) for f in found] == [("info", "uv.lock")]
    assert [(s.name, s.status) for s in sources] == [
        ("poetry.lock", SourceStatus.FAILED),
        ("pyproject.toml", SourceStatus.OK),
        ("sub/uv.lock", SourceStatus.SKIPPED),
        ("uv.lock", SourceStatus.OK),
    ]


def test_a_requirement_from_an_install_command_does_not_make_the_lock_needed() -> None:
    # the lock mitigates pyproject requirements only; a requirements file's floor is judged
    # as it is
    found, sources = _scan(
        ProjectFile("requirements.txt", b"mcp>=1.10\n"),
        ProjectFile("uv.lock", BROKEN_LOCK.encode()),
    )
    assert [(f["severity"], f["locations"][0]["path"]) for f in found] == [
        ("medium", "requirements.txt")
    ]
    assert sources[1] == Source.skipped("file", "uv.lock", NOT_ASKED)


def test_a_lock_named_on_the_command_line_is_always_read() -> None:
    _, sources = _scan(ProjectFile("uv.lock", BROKEN_LOCK.encode(), kind="lock"))
    assert [(s.name, s.status, s.error_code) for s in sources] == [
        ("uv.lock", SourceStatus.FAILED, "lockfile-invalid")
    ]
    _, sources = _scan(ProjectFile("uv.lock", UV_LOCK.encode(), kind="lock"))
    assert sources == [Source.ok("file", "uv.lock", "lock (1 packages)")]


def test_a_cap_on_a_0x_line_is_never_the_floors_next_minor() -> None:
    # smolagents' pyproject: `anthropic>=0.37.1` while anthropic's releases reach 0.70 and
    # beyond; `<0.38` would shut out every one the project may run (issue 25, item 10)
    def fix(*files: ProjectFile) -> tuple[str, str | None]:
        findings, _, _ = scan_container_files(list(files), watched=frozenset({"anthropic"}))
        (got,) = [f.fix for f in findings if f.rule_id == "AG121"]
        return got.description, got.snippet

    alone = ProjectFile("pyproject.toml", _pyproject("anthropic>=0.37.1"))
    assert fix(alone) == (
        "Pin the version you tested and install from a lock, or cap the major: "
        "`anthropic>=0.37.1,<0.<the minor after the one you tested>`.",
        None,
    )
    lock = UV_LOCK.replace('"mcp"', '"anthropic"').replace("1.28.1", "0.71.0")
    assert fix(alone, ProjectFile("uv.lock", lock.encode())) == (
        "Pin the version you tested and install from a lock, or cap the major: "
        "`anthropic>=0.37.1,<0.72`.",
        "anthropic>=0.37.1,<0.72",
    )
    major = ProjectFile("pyproject.toml", _pyproject("anthropic>=1.2"))
    assert fix(major)[1] == "anthropic>=1.2,<2"

"""`uv sync` that looks locked and is not (browser-use's Dockerfile): the lock the build
copies decides; a committed lock is installed, a gitignored or missing one is not there."""

from __future__ import annotations

from agentguard.engine.project import scan_container_files
from agentguard.inspect.facts import ProjectFile
from tests.inspect.containers.support import FIXTURES, project_files, scan

IGNORED = FIXTURES / "AG120/fail/dockerfile-uv-sync-ignored-lock"
COMMITTED = FIXTURES / "AG120/pass/uvsync-committed-lock"


def _ag120(files: list[ProjectFile]) -> list[str]:
    findings, _, _ = scan_container_files(files)
    return [f.message for f in findings if f.rule_id == "AG120"]


def test_a_committed_lock_is_what_uv_sync_installs() -> None:
    findings, _ = scan(COMMITTED)
    assert [f for f in findings if f.rule_id == "AG120"] == []


def test_no_lock_in_the_project_is_reported_as_absent() -> None:
    files = [f for f in project_files(IGNORED) if f.path != ".gitignore"]
    assert _ag120(files) == [
        "`uv sync --all-extras --no-dev --no-install-project` runs at build time without "
        "`--locked` or `--frozen`, and the project holds no uv.lock there: uv resolves the "
        "dependency tree anew on every build (and writes a lock of its own, which a later "
        "`--locked` in the build agrees with)."
    ]


def test_uv_sync_held_to_the_lock_is_not_reported() -> None:
    text = (
        (IGNORED / "Dockerfile")
        .read_text()
        .replace("--no-dev --no-install-project", "--no-dev --no-install-project --frozen")
    )
    files = [ProjectFile("Dockerfile", text.encode()), ProjectFile(".gitignore", b"uv.lock\n")]
    assert _ag120(files) == []

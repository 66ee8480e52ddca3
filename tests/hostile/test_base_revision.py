"""`check --base REF` on a hostile repository: nothing of it runs, nothing outside it is read.

The repository's configuration is the pull request's checkout's (a CI checkout can carry
it, a developer's clone certainly does): filters, textconv, fsmonitor, hooks, a promisor
remote whose URL runs a command. Each would leave a marker file; none may. The base's
tree is the attacker's too: a link to a file outside the repository, a huge blob, a
submodule.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentguard.inspect import git_base
from tests.test_check_base import BOT, commit, git, report, run, where


@pytest.fixture()
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    return r


def _program(tmp_path: Path, marker: Path) -> str:
    script = tmp_path / "evil.sh"
    script.write_text(f'#!/bin/sh\necho ran "$@" >> {marker}\ncat\n', encoding="utf-8")
    script.chmod(0o755)
    return str(script)


def _hooks(folder: Path, program: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for hook in (
        "post-checkout",
        "pre-commit",
        "post-index-change",
        "reference-transaction",
        "fsmonitor-watchman",
        "pre-auto-gc",
        "post-rewrite",
    ):
        path = folder / hook
        path.write_text(f"#!/bin/sh\n{program} hook-{hook}\n", encoding="utf-8")
        path.chmod(path.stat().st_mode | stat.S_IXUSR)


def test_filters_textconv_fsmonitor_and_hooks_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker)
    commit(
        repo,
        {"bot.py": BOT.format('tools=["Read"]'), ".gitattributes": "* filter=evil diff=evil\n"},
    )
    commit(repo, {"bot.py": BOT.format('tools=["Read", "Bash"]')})
    # armed only now: the commits above ran none of it
    for key, value in (
        ("filter.evil.smudge", program),
        ("filter.evil.clean", program),
        ("filter.evil.process", program),
        ("filter.evil.required", "true"),
        ("diff.evil.textconv", program),
        ("core.fsmonitor", program),
        ("core.pager", program),
        ("core.hooksPath", str(tmp_path / "hooks")),
        ("core.sshCommand", program),
        ("include.path", str(tmp_path / "included")),
    ):
        git(repo, "config", key, value)
    (tmp_path / "included").write_text(f"[core]\n\taskPass = {program}\n", encoding="utf-8")
    _hooks(tmp_path / "hooks", program)
    _hooks(repo / ".git" / "hooks", program)
    before = _listing(repo)
    code, doc = report(repo)
    assert not marker.exists(), marker.read_text(encoding="utf-8")
    # the blobs were read raw (a smudge filter would have printed "ran ..." into them)
    assert where(doc["findings"]) == [("AG301", "bot.py", 3), ("AG302", "bot.py", 3)]
    assert where(doc["facts"]["delta"]["resolved"]) == [("AG302", "bot.py", 3)]
    assert code == 1
    assert _listing(repo) == before  # nothing written, checked out or touched


def test_a_promisor_remote_is_never_fetched_from(repo: Path, tmp_path: Path) -> None:
    """A partial clone's missing blob: git would lazily fetch it from the promisor remote
    (here a URL that runs a command). Read through our own git folder it is just missing:
    a failed base, exit 3, and nothing ran."""
    marker = tmp_path / "marker"
    program = _program(tmp_path, marker)
    secret = "print('only in the base')\n"
    commit(repo, {"bot.py": BOT.format(""), "gone.py": secret})
    commit(repo, {"gone.py": None})
    blob = git(repo, "rev-parse", "HEAD~1:gone.py").strip()
    (repo / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    git(repo, "config", "core.repositoryformatversion", "1")
    git(repo, "config", "extensions.partialClone", "origin")
    git(repo, "config", "remote.origin.url", f"ext::{program} %S")
    git(repo, "config", "remote.origin.promisor", "true")
    git(repo, "config", "protocol.ext.allow", "always")
    code, doc = report(repo)
    assert not marker.exists()
    assert code == 3
    (failed,) = [s for s in doc["sources"] if s["status"] == "failed"]
    assert (failed["kind"], failed["error_code"]) == ("base", "base-unreadable")
    assert doc["facts"]["delta"]["base"]["compared"] is False


def test_a_link_out_of_the_tree_is_never_followed(repo: Path, tmp_path: Path) -> None:
    """The base's bot.py is a link to agent code outside the repository (and etc to /etc):
    followed, it would make the head's Bash finding look old. It stays new."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "bot.py").write_text(BOT.format('tools=["Bash"]'), encoding="utf-8")
    (repo / "bot.py").symlink_to(outside / "bot.py")
    (repo / "etc").symlink_to("/etc")
    (repo / "up").symlink_to("../outside")
    commit(repo, {"README.md": "base\n"})
    (repo / "bot.py").unlink()
    commit(repo, {"bot.py": BOT.format('tools=["Bash"]')})
    code, doc = report(repo)
    plain = json.loads(run("check", repo, "--format", "json", "-q").stdout)["findings"]
    assert where(doc["findings"]) == where(plain)  # every head finding is new
    assert ("AG301", "bot.py", 3) in where(plain)
    assert doc["facts"]["delta"]["resolved"] == []
    # the scanner's own rule for a link out of the project that may configure the agent
    failed = [
        (s["kind"], s["name"], s["error_code"]) for s in doc["sources"] if s["status"] == "failed"
    ]
    assert failed == [("base file", "bot.py", "file-link-outside")]
    assert code == 3
    text = json.dumps(doc)
    assert "root:x:0" not in text and str(outside) not in text


def test_a_huge_blob_is_skipped_and_said(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(git_base, "MAX_BASE_FILE_BYTES", 64 * 1024)
    commit(repo, {"bot.py": BOT.format(""), "big.json": "{" + " " * (200 * 1024) + "}"})
    commit(repo, {"README.md": "x\n"})
    code, doc = report(repo)
    skipped = [s for s in doc["sources"] if s["kind"] == "base" and s["status"] == "skipped"]
    assert [(s["name"], s["reason"]) for s in skipped] == [
        ("HEAD~1:big.json", "204802 bytes: larger than any file a reader reads, not read")
    ]
    assert code == 0


def test_a_base_past_the_total_cap_is_a_failed_source(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(git_base, "MAX_BASE_BYTES", 1024)
    commit(repo, {"bot.py": BOT.format(""), "a.txt": "a" * 2000})
    commit(repo, {"README.md": "x\n"})
    code, doc = report(repo)
    assert code == 3
    (failed,) = [s for s in doc["sources"] if s["status"] == "failed"]
    assert failed["error_code"] == "base-too-large"


def test_a_submodule_is_a_skipped_source(repo: Path) -> None:
    commit(repo, {"bot.py": BOT.format("")})
    head = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "update-index", "--add", "--cacheinfo", f"160000,{head},vendored")
    git(repo, "commit", "-q", "-m", "a submodule")
    commit(repo, {"README.md": "x\n"})
    code, doc = report(repo)
    skipped = [
        (s["name"], s["reason"])
        for s in doc["sources"]
        if s["kind"] == "base" and s["status"] == "skipped"
    ]
    assert skipped == [("HEAD~1:vendored", "a submodule: another repository's content, not read")]
    assert code == 0


def test_the_private_copy_is_removed_and_nothing_is_written_to_the_repo(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    monkeypatch.setenv("TMPDIR", str(scratch))
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", None)
    commit(repo, {"bot.py": BOT.format("")})
    commit(repo, {"README.md": "x\n"})
    before = _listing(repo)
    assert report(repo)[0] == 0
    assert list(scratch.iterdir()) == []
    assert _listing(repo) == before


def _listing(root: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for folder, _dirs, files in os.walk(root):
        for name in files:
            p = Path(folder, name)
            out[str(p.relative_to(root))] = p.lstat().st_mtime_ns
    return out


def test_links_in_the_base_copy_stay_links(tmp_path: Path) -> None:
    """The copy writes a link as a link (never its target's content), inside the folder."""
    from agentguard import safeio

    folder = tmp_path / "tree"
    folder.mkdir()
    safeio.link_in(folder, "a/etc", "/etc")
    assert os.readlink(folder / "a" / "etc") == "/etc"
    with pytest.raises(safeio.UnsafeWrite):
        safeio.write_in(folder, "a/etc/passwd", "x")  # never written through a link
    with pytest.raises(safeio.UnsafeWrite):
        safeio.link_in(folder, "../x", "/etc")
    assert run("check", tmp_path, "--base", "HEAD").exit_code in (2, 3)


def test_names_git_would_not_check_out_are_skipped(repo: Path, tmp_path: Path) -> None:
    """A hand-made tree (`git mktree` takes any name): `.git/config`, `..`, `.GIT`; and a
    name that is not ASCII. None is written where git would refuse it; the rest is read."""
    commit(repo, {"bot.py": BOT.format("")})
    evil = git(repo, "hash-object", "-w", "--stdin", input_text="[core]\n\tfsmonitor = x\n").strip()
    bot = git(repo, "rev-parse", "HEAD:bot.py").strip()
    sub = git(repo, "mktree", input_text=f"100644 blob {evil}\tconfig\n").strip()
    listing = (
        f"040000 tree {sub}\t.git\n100644 blob {evil}\t..\n100644 blob {evil}\t.GIT\n"
        f"100644 blob {bot}\tbot.py\n100644 blob {evil}\tcaf\xe9.txt\n"
    )
    tree = git(repo, "mktree", input_text=listing).strip()
    base = git(repo, "commit-tree", tree, "-m", "hostile", input_text="").strip()
    code, doc = report(repo, base)
    skipped = sorted(
        s["name"].removeprefix(f"{base}:")
        for s in doc["sources"]
        if s["kind"] == "base" and s["status"] == "skipped"
    )
    assert skipped == ["..", ".GIT", ".git/config"]
    (ok,) = [s for s in doc["sources"] if s["kind"] == "base" and s["status"] == "ok"]
    assert ok["reason"] == "2 files read from git, nothing checked out"
    assert doc["findings"] == [] and code == 0  # bot.py is the same on both sides


def _bare_repo_files(tmp_path: Path, files: dict[str, str]) -> dict[str, bytes]:
    """The files of a bare repository whose one commit (branch main) holds ``files``: what a
    pull request can commit into a folder (HEAD, refs/, objects/ are ordinary files)."""
    work = tmp_path / "forge"
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    commit(work, files)
    bare = tmp_path / "forged.git"
    git(tmp_path, "clone", "-q", "--bare", str(work), str(bare))
    out: dict[str, bytes] = {
        "refs/heads/main": (git(bare, "rev-parse", "main").strip() + "\n").encode()
    }
    for path in bare.rglob("*"):
        rel = path.relative_to(bare).as_posix()
        if path.is_file() and (rel == "HEAD" or rel.startswith(("refs/", "objects/"))):
            out[rel] = path.read_bytes()
    return out


def test_a_bare_repository_committed_into_the_project_is_never_the_base(
    repo: Path, tmp_path: Path
) -> None:
    """Modelled on a review's attack: the pull request adds an unpinned MCP server to
    `sub/` and, beside it, a bare repository's files whose commit `main` holds the same
    server. git's discovery took `sub/` for the repository, so the "base" was the pull
    request's own and the new finding read as unchanged (exit 0). With bare repositories
    only taken when named, the base is the checkout's `main`, and the server is new."""
    mcp = '{"mcpServers": {"x": {"command": "npx", "args": ["-y", "some-server"]}}}\n'
    commit(repo, {"sub/README.md": "docs\n"})
    forged = _bare_repo_files(tmp_path, {".mcp.json": mcp})
    git(repo, "checkout", "-q", "-b", "pr")
    for rel, data in forged.items():
        path = repo / "sub" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    (repo / "sub" / ".mcp.json").write_text(mcp, encoding="utf-8")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a server, and a base of our own")

    code, doc = report(repo / "sub", "main")

    assert [s for s in doc["sources"] if s["status"] == "failed"] == []
    assert ("AG310", ".mcp.json") in [(r, p) for r, p, _ in where(doc["findings"])]
    new = {(f["rule_id"], f["locations"][0]["path"]) for f in doc["findings"]}
    assert ("AG310", ".mcp.json") in new
    assert (doc["facts"]["delta"]["new"], doc["facts"]["delta"]["unchanged"]) == (1, 0)
    assert code == 1

"""A hostile or private index against `agentguard lock` (loopback only): one test per promise.

An index's values never become paths (hashes are 64 hex digits); a login given in the URL
or in netrc is sent by agentguard's own client and appears in no output and no written file;
a page naming a local file, another port or this machine's link is refused and nothing is
read from it; one index's metadata never speaks for another's, and a `.metadata` that does
not hash to what the index says is not believed; a slow-loris index ends at `--timeout`
with the source that ran out of time named (exit 3); a package listing 100,000
requirements is refused in bounded time and memory; a `uv.toml` planted in the shared temp
folder or the working folder is not obeyed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock import index as ix
from tests.hostile.index_server import Request, serving
from tests.hostile.promises import Run, check_failed_source, run_agentguard, snapshot
from tests.hostile.sdists import build_marking_sdist
from tests.lock.helpers import write_project
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

UV_FAST = {"UV_HTTP_RETRIES": "0", "UV_HTTP_TIMEOUT": "5"}
PASSWORD = "S3cret-Pass-8492"
SDK_WHEEL = "agent_sdk-1.0.0-py3-none-any.whl"


@pytest.fixture()
def wheels(tmp_path: Path) -> Path:
    folder = tmp_path / "wheels"
    build_wheel(folder, "mcp", "1.0.0")
    build_wheel(folder, "mcp", "2.0.0")
    build_wheel(folder, "agent-sdk", "1.0.0", ["mcp>=1"])  # admits two majors: AG101
    return folder


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    return write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])


def lock(project: Path, index_url: str, *extra: str, env: dict[str, str] | None = None) -> Run:
    run = run_agentguard(
        "lock",
        str(project),
        "--index-url",
        index_url,
        "--format",
        "json",
        *extra,
        env={**UV_FAST, **(env or {})},
        timeout=120,
    )
    run.check_no_crash()
    return run


def report_of(run: Run) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(run.stdout)
    return data


def failed_sources(report: dict[str, Any]) -> list[dict[str, Any]]:
    out = [s for s in report["sources"] if s["status"] == "failed"]
    for s in out:
        check_failed_source(s)
    return out


def every_file_text(folder: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in sorted(folder.rglob("*")) if p.is_file()
    )


def only_for_agentguard(hook: Any) -> Any:
    def page_hook(req: Request, page: dict[str, Any]) -> dict[str, Any]:
        return hook(page) if req.from_agentguard else page

    return page_hook


def rewrite_files(page: dict[str, Any], **changes: Any) -> dict[str, Any]:
    for item in page["files"]:
        for key, value in changes.items():
            item[key] = value(item) if callable(value) else value
    return page


# -- item 2: a hash is 64 hex digits, never a path ------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["/tmp/agentguard-pwned", "../../../../pwned", "a" * 63, "a" * 64 + "/x", "g" * 64, ""],
)
def test_a_json_hash_that_is_not_64_hex_digits_is_no_hash(value: str) -> None:
    page = ix.parse_json_page(
        "mcp",
        "https://index.invalid/simple/mcp/",
        {
            "files": [
                {"filename": "mcp-1.0.0-py3-none-any.whl", "url": "x", "hashes": {"sha256": value}}
            ]
        },
    )
    [file] = page.files
    assert file.sha256 is None


def test_a_hash_that_names_a_path_writes_nothing_there(
    tmp_path: Path, wheels: Path, project: Path, isolated_cache: Path
) -> None:
    """The wheel's hash is a path (absolute, or climbing out); its sdist's hash is true, so
    the pin matches and the wheel's served metadata is read: nothing outside changes, and
    every cache file name is a hex digest agentguard made (what it cannot verify against a
    hash it does not cache at all)."""
    import zipfile

    with zipfile.ZipFile(wheels / SDK_WHEEL) as zf:
        real = zf.read("agent_sdk-1.0.0.dist-info/METADATA")
    mark = tmp_path / "built"
    build_marking_sdist(wheels, "agent-sdk", "1.0.0", mark)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.json").write_text("keep me")
    before = snapshot(outside)

    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            if item["filename"] == SDK_WHEEL:
                item["hashes"] = {"sha256": str(outside / "victim")}
            elif item["filename"].endswith(".whl"):
                item["hashes"] = {"sha256": "../../../outside/planted"}
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook), metadata={SDK_WHEEL: real}) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert snapshot(outside) == before
    assert (outside / "victim.json").read_text() == "keep me"
    assert not mark.exists()
    names = [p.name for p in isolated_cache.rglob("*") if p.is_file()]
    assert all(re.fullmatch(r"[0-9a-f]{64}\.json", n) for n in names), names
    # mcp's only file has no usable hash: nothing to verify the pin against
    assert run.code == 3
    assert [(s["name"], s["error_code"]) for s in failed_sources(report)] == [
        ("mcp==2.0.0", "hash-not-on-index")
    ]


# -- item 6: logins are sent, never written or shown ------------------------------------------


def assert_secret_nowhere(secret: str, run: Run, *folders: Path) -> None:
    assert secret not in run.stdout and secret not in run.stderr
    for folder in folders:
        assert secret not in every_file_text(folder), folder


def test_private_index_login_in_the_url(
    tmp_path: Path, wheels: Path, project: Path, isolated_cache: Path
) -> None:
    with serving(wheels, auth=("alice", PASSWORD)) as index:
        url = index.url.replace("http://", f"http://alice:{PASSWORD}@")
        run = lock(project, url)
        text = run_agentguard("lock", str(project), "--index-url", url, env=UV_FAST)
        refused = [r for r, action in index.log if action == "401" and r.from_agentguard]
        ours = [r for r, _ in index.log if r.from_agentguard]
    report = report_of(run)
    assert run.code == 1, report["sources"]  # AG101: the login worked for uv and for agentguard
    assert report["complete"] is True and failed_sources(report) == []
    assert ours and refused == []
    assert text.code == 1
    assert "127.0.0.1" in (project / "requirements.lock").read_text()
    assert_secret_nowhere(PASSWORD, run, project, isolated_cache)
    assert_secret_nowhere(PASSWORD, text)
    assert "alice" not in (project / "requirements.lock").read_text()
    assert "alice" not in (project / "pylock.toml").read_text()


def test_private_index_login_in_netrc(
    tmp_path: Path, wheels: Path, project: Path, isolated_cache: Path
) -> None:
    netrc = tmp_path / "netrc"
    netrc.write_text(f"machine 127.0.0.1\nlogin alice\npassword {PASSWORD}\n")
    netrc.chmod(0o600)
    with serving(wheels, auth=("alice", PASSWORD)) as index:
        run = lock(project, index.url, env={"NETRC": str(netrc)})
        refused = [r for r, action in index.log if action == "401" and r.from_agentguard]
    report = report_of(run)
    assert run.code == 1, report["sources"]
    assert report["complete"] is True and refused == []
    assert_secret_nowhere(PASSWORD, run, project, isolated_cache)


def test_a_wrong_password_is_an_auth_failure_not_an_unknown_package(
    wheels: Path, project: Path
) -> None:
    with serving(wheels, auth=("alice", PASSWORD)) as index:
        run = lock(project, index.url.replace("http://", "http://alice:Wrong-Pass-1234@"))
    report = report_of(run)
    assert run.code == 3
    [resolver] = failed_sources(report)
    assert (resolver["kind"], resolver["error_code"], resolver["retryable"]) == (
        "resolver",
        "index-auth-failed",
        False,
    )
    assert "netrc" in resolver["remedy"]
    assert_secret_nowhere("Wrong-Pass-1234", run, project)


def test_a_token_in_the_index_url_is_redacted(project: Path) -> None:
    for fmt in ("json", "text"):
        run = run_agentguard(
            "lock",
            str(project),
            "--index-url",
            "http://127.0.0.1:9/simple?token=Tok-5551234&x=1",
            "--format",
            fmt,
            env=UV_FAST,
        )
        run.check_no_crash()
        assert run.code == 3
        assert_secret_nowhere("Tok-5551234", run, project)
        assert "token=***" in run.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pw@host/simple", "https://***@host/simple"),
        (
            "see git+https://oauth2:glpat-x1@gitlab.example/x.git now",
            "see git+https://***@gitlab.example/x.git now",
        ),
        ("https://TOKEN123@host/simple/", "https://***@host/simple/"),
        ("http://h/simple?token=abc&page=2", "http://h/simple?token=***&page=2"),
        ("http://h/s?X-Amz-Signature=ff&api_key=k1", "http://h/s?X-Amz-Signature=***&api_key=***"),
        ("http://h/simple/mcp/", "http://h/simple/mcp/"),
    ],
)
def test_redact_url(text: str, shown: str) -> None:
    from agentguard.lock.urls import redact_url

    assert redact_url(text) == shown


# -- item 8: what a page names is read only when allowed, and capped ---------------------------


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("file:///dev/zero", "names a file URL"),
        ("file:///etc/passwd", "names a file URL"),
        ("http://127.0.0.1:1/files/" + SDK_WHEEL, "another host over http (127.0.0.1:1)"),
        ("http://169.254.169.254/latest/" + SDK_WHEEL, "another host over http"),
        ("https://localhost/files/" + SDK_WHEEL, "a host on this machine or its link (localhost)"),
    ],
)
def test_a_page_naming_a_local_or_other_host_url_is_refused(
    wheels: Path, project: Path, url: str, why: str
) -> None:
    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            if item["filename"] == SDK_WHEEL:
                item["url"] = url
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook)) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert run.code == 3
    [source] = failed_sources(report)
    assert (source["kind"], source["name"], source["error_code"]) == (
        "metadata",
        "agent-sdk==1.0.0",
        "index-bad-url",
    )
    assert why in source["reason"], source["reason"]
    assert run.seconds < 60 and run.max_rss_mib < 400, (run.seconds, run.max_rss_mib)
    assert not (project / "pylock.toml").exists()


@pytest.mark.parametrize(
    ("target", "why"),
    [
        ("file:///etc/passwd", "names a file URL (only http and https are read)"),
        ("http://127.0.0.1:1/x", "names another host over http (127.0.0.1:1)"),
        ("https://localhost/x", "names a host on this machine or its link (localhost)"),
    ],
)
def test_a_redirect_off_the_index_is_refused(
    tmp_path: Path, wheels: Path, target: str, why: str
) -> None:
    def plan(r: Request) -> str:
        return f"redirect {target}" if r.from_agentguard else "ok"

    with serving(wheels, plan) as index:
        client = ix.IndexClient([index.url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
        followed = [r.path for r, _ in index.log]
    assert (caught.value.code, str(caught.value)) == (
        "index-bad-url",
        f"{index.url}/mcp/: redirect refused: {why}",
    )
    assert followed == ["/simple/mcp/"]


# -- item 9: one index never speaks for another ------------------------------------------------

SPOOF = b"Metadata-Version: 2.1\nName: agent-sdk\nVersion: 1.0.0\n"


def no_metadata_for_uv(req: Request, page: dict[str, Any]) -> dict[str, Any]:
    if not req.from_agentguard:
        for item in page["files"]:
            item.pop("core-metadata", None)
    return page


def ag101(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    """The edges AG101 names: (parent, child, specifier)."""
    return sorted(
        (f["evidence"]["parent"], f["evidence"]["child"], f["evidence"]["specifier"])
        for f in report["findings"]
        if f["rule_id"] == "AG101"
    )


EDGE = [("agent-sdk", "mcp", ">=1")]


def test_a_spoofing_index_does_not_poison_the_honest_one(
    wheels: Path, project: Path, tmp_path: Path
) -> None:
    with serving(wheels, page_hook=no_metadata_for_uv, metadata={SDK_WHEEL: SPOOF}) as spoofing:
        first = lock(project, spoofing.url)
    assert report_of(first)["complete"] is True
    assert ag101(report_of(first)) == []  # its own answer is what it says (cannot be told apart)
    other = write_project(tmp_path / "bot2", ["agent-sdk==1.0.0"])
    with serving(wheels) as honest:
        second = lock(other, honest.url)  # same cache, same wheel hashes
    assert second.code == 1
    assert ag101(report_of(second)) == EDGE


def test_a_metadata_file_that_does_not_hash_as_the_index_says_is_rejected(
    wheels: Path, project: Path
) -> None:
    import hashlib
    import zipfile

    with zipfile.ZipFile(wheels / SDK_WHEEL) as zf:
        real = zf.read("agent_sdk-1.0.0.dist-info/METADATA")
    with serving(
        wheels,
        page_hook=no_metadata_for_uv,
        metadata={SDK_WHEEL: SPOOF},
        advertised={SDK_WHEEL: hashlib.sha256(real).hexdigest()},
    ) as index:
        run = lock(project, index.url)
        wheel_read = [r for r, _ in index.log if r.from_agentguard and r.path.endswith(SDK_WHEEL)]
    assert run.code == 1
    assert ag101(report_of(run)) == EDGE  # from the hash-checked wheel
    assert len(wheel_read) == 1


# -- item 10: a slow-loris index ends at the deadline ------------------------------------------


def test_a_slow_loris_index_for_agentguard_ends_at_the_deadline(
    wheels: Path, project: Path
) -> None:
    def plan(r: Request) -> str:
        return "slow" if r.is_page and r.from_agentguard else "ok"

    with serving(wheels, plan) as index:
        run = lock(project, index.url, "--timeout", "8")
    report = report_of(run)
    assert run.code == 3
    late = sorted(
        s["name"] for s in failed_sources(report) if s["error_code"] == "deadline-exceeded"
    )
    assert late == ["agent-sdk (project page)", "mcp (project page)"]
    assert any("out of time: " in n and "mcp (project page)" in n for n in report["notes"])
    assert run.seconds < 8 + 10, run.seconds
    assert not (project / "pylock.toml").exists()


def test_a_slow_loris_index_for_the_resolver_ends_at_the_deadline(
    wheels: Path, project: Path
) -> None:
    def plan(r: Request) -> str:
        return "slow" if r.is_page and r.from_uv else "ok"

    with serving(wheels, plan) as index:
        run = lock(project, index.url, "--timeout", "5", env={"UV_HTTP_TIMEOUT": "30"})
    report = report_of(run)
    assert run.code == 3
    [resolver] = failed_sources(report)
    assert (resolver["kind"], resolver["error_code"]) == ("resolver", "deadline-exceeded")
    assert "--timeout" in resolver["reason"]
    assert run.seconds < 5 + 10, run.seconds


# -- item 11: a cap on Requires-Dist entries ---------------------------------------------------


def test_a_hundred_thousand_requirements_are_refused_in_bounded_time_and_memory(
    wheels: Path, project: Path
) -> None:
    lines = "".join(f"Requires-Dist: pkg-{i}>=1\n" for i in range(100_000))
    huge = SPOOF + lines.encode()
    with serving(wheels, page_hook=no_metadata_for_uv, metadata={SDK_WHEEL: huge}) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert run.code == 3
    [source] = failed_sources(report)
    assert (source["kind"], source["name"], source["error_code"], source["reason"]) == (
        "metadata",
        "agent-sdk==1.0.0",
        "too-many-requirements",
        f"{SDK_WHEEL}: 100000 Requires-Dist entries (more than 5000, the cap)",
    )
    assert run.seconds < 30 and run.max_rss_mib < 250, (run.seconds, run.max_rss_mib)


# -- item 13: no uv.toml but the flags agentguard gives ----------------------------------------


def test_a_planted_uv_toml_is_not_obeyed(tmp_path: Path, wheels: Path) -> None:
    planted = tmp_path / "planted-wheels"
    build_wheel(planted, "mcp", "9.0.0")
    shared_tmp = tmp_path / "shared-tmp"
    shared_tmp.mkdir()
    config = f'find-links = ["{planted}"]\n[pip]\nfind-links = ["{planted}"]\n'
    (shared_tmp / "uv.toml").write_text(config)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "uv.toml").write_text(config)
    project = write_project(tmp_path / "bot", ["mcp>=1"])
    with serving(wheels) as index:
        run = run_agentguard(
            "lock",
            str(project),
            "--index-url",
            index.url,
            "--format",
            "json",
            cwd=cwd,
            env={**UV_FAST, "TMPDIR": str(shared_tmp)},
        )
    run.check_no_crash()
    report = report_of(run)
    assert run.code == 1, report["sources"]
    text = (project / "requirements.lock").read_text()
    assert "mcp==2.0.0" in text and "9.0.0" not in text
    assert str(planted) not in text and str(planted) not in (project / "pylock.toml").read_text()


# -- every fault above: a clear code ------------------------------------------------------------


def test_index_client_messages_carry_no_login(wheels: Path, tmp_path: Path) -> None:
    with serving(wheels, lambda _r: "500", auth=("alice", PASSWORD)) as index:
        url = index.url.replace("http://", f"http://alice:{PASSWORD}@")
        client = ix.IndexClient([url], cache_dir=tmp_path / "cache")
        with pytest.raises(ix.IndexError_) as caught:
            client.project_page("mcp")
        seen = index.headers_seen
    assert caught.value.code == "index-http-error"
    assert PASSWORD not in str(caught.value) and "alice" not in str(caught.value)
    ours = [h for h in seen if h.get("User-Agent", "").startswith("agentguard")]
    assert ours and all("Authorization" in h for h in ours)


# -- item 15: the two lock files switch as a pair ----------------------------------------------


def test_a_switch_left_half_done_is_reported_by_check_and_finished_by_the_next_lock(
    tmp_path: Path, wheels: Path
) -> None:
    """A named fake of what SIGKILL leaves between the two renames (the window is too narrow
    to hit on demand): the new pair as temp files, the manifest, one file already renamed."""
    import hashlib

    from agentguard.lock.switch import SWITCH

    project = write_project(tmp_path / "bot", ["agent-sdk==1.0.0"])
    newer = write_project(tmp_path / "newer", ["agent-sdk==1.0.0", "mcp>=1,<3"])
    with serving(wheels) as index:
        assert lock(project, index.url).code == 1
        assert lock(newer, index.url).code == 1
        new = {n: (newer / n).read_bytes() for n in ("pylock.toml", "requirements.lock")}
        write_project(project, ["agent-sdk==1.0.0", "mcp>=1,<3"])  # the inputs of the new pair
        entries = {}
        for name, data in new.items():
            temp = f".{name}.agentguard-424242.tmp"
            (project / temp).write_bytes(data)
            entries[name] = {"temp": temp, "sha256": hashlib.sha256(data).hexdigest()}
        (project / SWITCH).write_text(json.dumps({"schema": 1, "files": entries}))
        (project / entries["requirements.lock"]["temp"]).rename(project / "requirements.lock")

        check = run_agentguard("lock", "--check", str(project), "--format", "json")
        check.check_no_crash()
        assert check.code == 3
        [source] = failed_sources(report_of(check))
        assert (source["kind"], source["name"], source["error_code"]) == (
            "lockfile",
            SWITCH,
            "lock-switch-interrupted",
        )

        run = lock(project, index.url)
    assert run.code == 1 and report_of(run)["complete"] is True
    assert report_of(run)["notes"][-1] == "The lock is up to date; files left untouched."
    assert {n: (project / n).read_bytes() for n in new} == new
    assert sorted(p.name for p in project.iterdir() if p.name.startswith(".")) == []
    check = run_agentguard("lock", "--check", str(project), "--format", "json")
    assert check.code == 1 and failed_sources(report_of(check)) == []


@pytest.mark.parametrize(
    "temp", ["../outside/victim", "/etc/passwd", ".pylock.toml.agentguard-1.tmp/../../x"]
)
def test_a_planted_switch_manifest_moves_nothing(
    tmp_path: Path, wheels: Path, project: Path, temp: str
) -> None:
    from agentguard.lock.switch import SWITCH

    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim").write_text("keep me")
    before = snapshot(outside)
    manifest = {"schema": 1, "files": {"pylock.toml": {"temp": temp, "sha256": "0" * 64}}}
    (project / SWITCH).write_text(json.dumps(manifest))
    with serving(wheels) as index:
        run = lock(project, index.url)
    assert run.code == 3
    [source] = failed_sources(report_of(run))
    assert (source["kind"], source["error_code"]) == ("lockfile", "lock-switch-interrupted")
    assert snapshot(outside) == before
    assert not (project / "pylock.toml").exists()

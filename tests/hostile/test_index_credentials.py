"""A private index, and secrets in index URLs (loopback only).

A login given in the URL or in netrc is sent by agentguard's own client (and by uv) and
appears in no output and no written file; a wrong one is an auth failure, not an unknown
package; a `?token=` is redacted wherever the URL is shown.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentguard.lock import index as ix
from tests.hostile.index_helpers import (
    PASSWORD,
    UV_FAST,
    assert_secret_nowhere,
    failed_sources,
    lock,
    only_for_agentguard,
    project,
    report_of,
    wheels,
)
from tests.hostile.index_server import serving
from tests.hostile.promises import run_agentguard

pytestmark = pytest.mark.usefixtures("isolated_cache")
__all__ = ["project", "wheels"]  # fixtures


# -- item 6: logins are sent, never written or shown ------------------------------------------


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
        assert "token=REDACTED" in run.stdout


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("https://user:pw@host/simple", "https://user:REDACTED@host/simple"),
        (
            "see git+https://oauth2:glpat-x1@gitlab.example/x.git now",
            "see git+https://oauth2:REDACTED@gitlab.example/x.git now",
        ),
        ("https://TOKEN123@host/simple/", "https://REDACTED@host/simple/"),
        ("https://u:p@ss@host/simple/", "https://u:REDACTED@host/simple/"),
        ("http://h/simple?token=abc&page=2", "http://h/simple?token=REDACTED&page=2"),
        (
            "http://h/s?X-Amz-Signature=ff&api_key=k1&pwd=p&session=s",
            "http://h/s?X-Amz-Signature=REDACTED&api_key=REDACTED&pwd=REDACTED&session=REDACTED",
        ),
        ("http://h/simple/mcp/", "http://h/simple/mcp/"),
        # what an older agentguard wrote into a lock file: left as it says
        ("https://***@h/simple?token=***", "https://***@h/simple?token=***"),
    ],
)
def test_redact_url(text: str, shown: str) -> None:
    from agentguard import redact

    assert redact.url(text) == shown
    assert redact.text(text) == shown  # the URL part of the one redactor, nothing else


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


def test_a_token_in_a_file_url_is_not_written(wheels: Path, project: Path) -> None:
    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            item["url"] = f"../../files/{item['filename']}?token=Tok-File-777"
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook)) as index:
        run = lock(project, index.url)
    report = report_of(run)
    assert run.code == 1 and report["complete"] is True, report["sources"]
    pylock = (project / "pylock.toml").read_text()
    assert "token=REDACTED" in pylock
    assert_secret_nowhere("Tok-File-777", run, project)


def test_a_lock_an_older_version_masked_with_stars_still_reads_and_re_locks_stably(
    wheels: Path, project: Path
) -> None:
    """Older versions wrote ``?token=***``; such a committed pair still reads (`--check`
    passes offline), the first re-lock writes the one mask, and the next changes nothing."""

    def hook(page: dict[str, Any]) -> dict[str, Any]:
        for item in page["files"]:
            item["url"] = f"../../files/{item['filename']}?token=Tok-File-777"
        return page

    with serving(wheels, page_hook=only_for_agentguard(hook)) as index:
        assert lock(project, index.url).code == 1
        _as_an_older_version_wrote_it(project)
        assert "token=***" in (project / "pylock.toml").read_text()
        check = run_agentguard("lock", "--check", str(project), "--format", "json")
        first = lock(project, index.url)
        after_first = (project / "pylock.toml").read_text()
        second = lock(project, index.url)
    report = report_of(check)
    assert check.code == 1 and report["complete"] is True, report["sources"]
    assert [f["rule_id"] for f in report["findings"]] == ["AG101"]
    assert report_of(first)["notes"][-1].startswith("Wrote requirements.lock and pylock.toml")
    assert "token=***" not in after_first and "token=REDACTED" in after_first
    assert report_of(second)["notes"][-1] == "The lock is up to date; files left untouched."
    assert (project / "pylock.toml").read_text() == after_first


def _as_an_older_version_wrote_it(project: Path) -> None:
    """The pair with ``***`` for the mask, and the digest an older version computed over it."""
    from agentguard.lock.lockfile import lock_digest
    from agentguard.lock.stored import tomllib

    pylock = (project / "pylock.toml").read_text().replace("token=REDACTED", "token=***")
    data = tomllib.loads(pylock)
    old, new = (
        data["tool"]["agentguard"]["lock-digest"],
        lock_digest(data["packages"], data["tool"]["agentguard"]),
    )
    assert old != new
    (project / "pylock.toml").write_text(pylock.replace(old, new))
    req = project / "requirements.lock"
    req.write_text(req.read_text().replace(old, new))


def test_private_index_login_from_the_keyring_named_stand_in(
    tmp_path: Path, wheels: Path, project: Path, isolated_cache: Path
) -> None:
    """The user name in the URL, the password from the `keyring` command, asked the way uv
    asks it (UV_KEYRING_PROVIDER=subprocess). A stand-in `keyring` script (no keyring backend
    here) answers for alice only and records who asked."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "keyring-calls"
    script = bin_dir / "keyring"
    script.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {calls}\n'
        f'if [ "$1" = get ] && [ "$3" = alice ]; then echo {PASSWORD}; exit 0; fi\n'
        "exit 1\n"
    )
    script.chmod(0o755)
    env = {"UV_KEYRING_PROVIDER": "subprocess", "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    with serving(wheels, auth=("alice", PASSWORD)) as index:
        run = lock(project, index.url.replace("http://", "http://alice@"), env=env)
        refused = [r for r, action in index.log if action == "401" and r.from_agentguard]
    report = report_of(run)
    assert run.code == 1 and report["complete"] is True, report["sources"]
    assert refused == []
    assert f"get {index.url} alice" in calls.read_text().splitlines()
    assert_secret_nowhere(PASSWORD, run, project, isolated_cache)

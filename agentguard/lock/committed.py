"""The committed version of a lock file (git ``HEAD``), to gate a lock the project's own
tool rewrote (``poetry lock``) against what was reviewed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from agentguard import safegit
from agentguard.safeio import MAX_LOCK_BYTES

GIT_TIMEOUT = 20


def _git(
    git: str, root: Path, env: dict[str, str], *args: str
) -> subprocess.CompletedProcess[bytes]:
    # plumbing (no textconv, no pager); a hostile repository config runs no program
    return subprocess.run(
        safegit.argv(git, "-C", str(root), *args),
        capture_output=True,
        timeout=GIT_TIMEOUT,
        check=False,
        stdin=subprocess.DEVNULL,
        env=env,
    )


def committed_text(root: Path, name: str) -> tuple[str | None, str]:
    """(text at HEAD or None, why not). Capped as every lock file is (the size is asked
    first, so an oversized blob is never read into memory)."""
    git = shutil.which("git")
    if git is None:
        return None, "git is not installed"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    try:
        checkout = safegit.checkout_of(git, root, env, GIT_TIMEOUT)
    except safegit.NotACheckout as exc:
        return None, str(exc)
    spec = f"HEAD:{checkout.prefix}/{name}" if checkout.prefix else f"HEAD:{name}"
    try:
        size = _git(git, checkout.top, env, "cat-file", "-s", spec)
        if size.returncode == 0 and int(size.stdout.strip() or b"0") > MAX_LOCK_BYTES:
            return None, f"the committed {name} is larger than {MAX_LOCK_BYTES} bytes"
        proc = _git(git, checkout.top, env, "cat-file", "blob", spec)
    except (OSError, subprocess.TimeoutExpired, ValueError) as exc:
        return None, f"git show failed: {exc}"
    if proc.returncode != 0:
        first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        return None, first[0] if first else "not committed"
    if len(proc.stdout) > MAX_LOCK_BYTES:
        return None, f"the committed {name} is larger than {MAX_LOCK_BYTES} bytes"
    try:
        return proc.stdout.decode("utf-8"), ""
    except UnicodeDecodeError:
        return None, f"the committed {name} is not UTF-8"

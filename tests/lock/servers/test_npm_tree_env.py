"""What the npm run of the tree gets of the caller: no credential of the user's. A
registry's packument can name a git dependency over ssh (`git+ssh://git@host/org/repo.git`,
and npm falls back to ssh for a `github:` repository https cannot clone): the ssh npm's git
runs must offer no key of the user's (ssh reads `~/.ssh/id_*` from the account's home
directory, whatever `HOME` says) and reach no agent, so a registry cannot have npm clone a
private repository with the runner's identity. The real ssh reads the command's options
(`ssh -G` prints what it would use)."""

from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path

from agentguard.lock.servers.npm_tree import npm_env


def _ssh_config(tmp_path: Path) -> dict[str, list[str]]:
    env = npm_env(tmp_path, "https://registry.example/")
    argv = shlex.split(env["GIT_SSH_COMMAND"])
    assert argv[0] == "ssh"
    proc = subprocess.run(
        [argv[0], "-G", *argv[1:], "git@git.example"],
        env=env, capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    seen: dict[str, list[str]] = {}
    for line in proc.stdout.splitlines():
        key, _, value = line.partition(" ")
        seen.setdefault(key, []).append(value)
    return seen


def test_git_over_ssh_offers_no_identity_of_the_user(tmp_path: Path) -> None:
    seen = _ssh_config(tmp_path)
    assert seen["identityfile"] == ["none"]
    assert seen["identityagent"] == ["none"]
    assert seen["identitiesonly"] == ["yes"]
    assert seen["pubkeyauthentication"] in (["no"], ["false"])
    for key in ("hostbasedauthentication", "gssapiauthentication", "passwordauthentication"):
        assert seen[key] == ["no"], key
    assert seen["kbdinteractiveauthentication"] == ["no"]
    assert seen["batchmode"] == ["yes"]
    assert seen["userknownhostsfile"] == ["/dev/null"]
    home = os.path.expanduser("~")
    assert not any(home in v for values in seen.values() for v in values if home != "/")

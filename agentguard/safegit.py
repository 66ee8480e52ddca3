"""The one way agentguard asks git about a repository it does not control (the scanned
checkout, on a pull request: the pull request's files).

Every call overrides on the command line each setting that makes git run a program
(fsmonitor, hooks, pager, ssh, credential helpers, every transport), and refuses to take a
bare repository it only discovered (``safe.bareRepository=explicit``): a pull request can
commit the files of a bare repository (``HEAD``, ``refs/``, ``objects/``) into a folder, and
git's discovery would take that folder for the repository, so the pull request would choose
what "the base" or "the committed lock" is. :func:`checkout_of` then holds the repository
git found to a real checkout: not bare, a work tree whose top holds ``.git`` (no commit can
hold a ``.git`` entry), and the folder asked about inside that work tree.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

OVERRIDES = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "core.sshCommand=false",
    "core.gitProxy=",
    "core.askPass=",
    "credential.helper=",
    "protocol.allow=never",
    "core.untrackedCache=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "safe.bareRepository=explicit",
)


def argv(git: str, *args: str) -> list[str]:
    out = [git, "--no-pager"]
    for setting in OVERRIDES:
        out += ["-c", setting]
    return [*out, *args]


class NotACheckout(Exception):
    """git found no repository, or one that is not a real checkout holding the folder."""


@dataclass(frozen=True)
class Checkout:
    top: Path  # the work tree's top folder
    prefix: str  # the folder asked about, relative to ``top`` ("" at the top)


def checkout_of(git: str, folder: Path, env: dict[str, str], timeout: float = 30) -> Checkout:
    """The checkout ``folder`` is in: the nearest folder at or above it that holds ``.git``
    (a commit cannot hold one, so the pull request cannot plant it), asked from there so
    git's discovery never meets a bare repository committed below it; held to a work tree
    that is not bare and whose top is that folder."""
    real = Path(os.path.realpath(folder))
    top = next((p for p in (real, *real.parents) if os.path.lexists(p / ".git")), None)
    if top is None:
        raise NotACheckout(f"{folder} is not in a git checkout (no .git at or above it)")
    try:
        proc = subprocess.run(
            argv(git, "rev-parse", "--is-bare-repository", "--show-toplevel"),
            cwd=top,
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise NotACheckout(f"git rev-parse failed: {exc}") from None
    lines = proc.stdout.decode("utf-8", "surrogateescape").split("\n")
    if proc.returncode != 0 or len(lines) < 2 or lines[0] != "false" or not lines[1]:
        first = proc.stderr.decode("utf-8", "replace").strip().splitlines()[:1]
        raise NotACheckout(first[0] if first else "not a git checkout")
    if os.path.realpath(lines[1]) != str(top):
        raise NotACheckout(f"git places the checkout at {lines[1]}, not at {top}")
    rel = real.relative_to(top)
    return Checkout(top, "" if str(rel) == "." else rel.as_posix())

"""Logins for private indexes, found as the resolver finds them: in the index URL, in netrc,
in the keyring. They are only ever sent as an ``Authorization`` header to the origin they
belong to; the URLs agentguard writes and shows carry none (see :mod:`agentguard.lock.urls`).
"""

from __future__ import annotations

import base64
import netrc
import os
import shutil
import subprocess
import threading
from collections.abc import Iterable
from pathlib import Path

from agentguard.lock.urls import Login, Origin, origin, split_userinfo

KEYRING_TIMEOUT = 10.0


def _netrc_login(host: str) -> Login | None:
    path = os.environ.get("NETRC") or str(Path.home() / ".netrc")
    try:
        entry = netrc.netrc(path).authenticators(host)
    except (OSError, netrc.NetrcParseError):
        return None
    if entry is None:
        return None
    user, _account, password = entry
    return Login(user or "", password or "")


def _keyring_login(url: str, username: str) -> Login | None:
    """The password for ``username`` from the ``keyring`` command, when asked for the way uv
    is asked (``UV_KEYRING_PROVIDER=subprocess``): by the index URL, then by its host."""
    if os.environ.get("UV_KEYRING_PROVIDER") != "subprocess":
        return None
    program = shutil.which("keyring")
    if program is None:
        return None
    host = origin(url)
    for service in (url, host[1] if host else None):
        if not service:
            continue
        try:
            proc = subprocess.run(
                [program, "get", service, username],
                capture_output=True,
                text=True,
                timeout=KEYRING_TIMEOUT,
                stdin=subprocess.DEVNULL,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        password = proc.stdout.rstrip("\n")
        if proc.returncode == 0 and password:
            return Login(username, password)
    return None


class Credentials:
    """The login of each origin: from a URL's userinfo first, else netrc, else the keyring
    (which needs the user name from the URL). Looked up once per origin."""

    def __init__(self, urls: Iterable[str] = ()) -> None:
        self._given: dict[Origin, tuple[str, Login]] = {}
        self._found: dict[Origin, Login | None] = {}
        self._lock = threading.Lock()
        for url in urls:
            self.add(url)

    def add(self, url: str) -> str:
        """Remember the login ``url`` carries; return the URL without it."""
        clean, login = split_userinfo(url)
        where = origin(clean)
        if login is not None and where is not None and where not in self._given:
            self._given[where] = (clean, login)
        return clean

    def login_for(self, url: str) -> Login | None:
        where = origin(url)
        if where is None:
            return None
        with self._lock:
            if where not in self._found:
                self._found[where] = self._look_up(where)
            return self._found[where]

    def _look_up(self, where: Origin) -> Login | None:
        clean, given = self._given.get(where, ("", None))
        if given is not None and given.password:
            return given
        from_netrc = _netrc_login(where[1])
        if from_netrc is not None and (given is None or from_netrc.username == given.username):
            return from_netrc
        if given is not None:
            return _keyring_login(clean, given.username) or (given if given.username else None)
        return None

    def header(self, url: str) -> dict[str, str]:
        login = self.login_for(url)
        if login is None:
            return {}
        token = base64.b64encode(f"{login.username}:{login.password}".encode()).decode()
        return {"Authorization": f"Basic {token}"}

"""The lock files' names and the error of a lock file that cannot be written or switched."""

from __future__ import annotations

PYLOCK = "pylock.toml"
REQUIREMENTS_LOCK = "requirements.lock"


class LockfileError(Exception):
    def __init__(self, message: str, *, code: str) -> None:
        super().__init__(message)
        self.code = code

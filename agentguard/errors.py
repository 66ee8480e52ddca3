"""The errors every layer may raise: bad input from the user (exit 2)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input from the user: exit 2 with this message."""


class ConfigError(UsageError):
    """A configuration file is malformed or has an unknown key (exit 2)."""

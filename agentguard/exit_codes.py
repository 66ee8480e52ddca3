"""The exit codes, one table for every command (see :mod:`agentguard.engine`, which
re-exports them): a module of its own, so that the command line's help and ``--version``
import no part of the engine."""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    OK = 0
    FINDINGS = 1
    USAGE = 2
    INCOMPLETE = 3


EXIT_CODE_TABLE: tuple[tuple[int, str], ...] = (
    (0, "complete, and no active finding at or above --fail-on"),
    (1, "complete, and at least one active finding at or above --fail-on"),
    (2, "usage or configuration error: bad flag, malformed input, unknown config key"),
    (3, "incomplete: a source failed or could not be read (wins over 1)"),
)

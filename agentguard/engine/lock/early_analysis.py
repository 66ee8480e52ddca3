"""The analysis of the previous pins, started beside the resolver.

:mod:`agentguard.lock.early` starts the resolver before the command line is imported and
reads the previous lock; the analysis of those pins (the AG1xx spans and the fixes the
flow would pre-resolve) is judging, so it lives here and the entry point hands it to
:func:`agentguard.lock.early.start` (a reader never runs a rule itself). The flow takes
the analysis when it reads through the same index client
(:mod:`agentguard.engine.lock.requirements_flow`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentguard.lock.early import Early


def analyse(early: Early) -> None:
    """Analyse the previous pins beside the resolver from now on (as the flow would once the
    command line is read and the flow's modules imported, a few tenths of a second later on
    a busy machine)."""
    from concurrent.futures import ThreadPoolExecutor

    from agentguard.engine.lock import speculation
    from agentguard.lock.fix_check import checker
    from agentguard.lock.index import background_thread

    previous, client, request = early.previous, early.client, early.request
    if previous is None or client is None or request is None:
        return
    side = ThreadPoolExecutor(1, initializer=background_thread)
    early.speculating = side.submit(
        speculation.speculate,
        previous,
        early.inputs,
        client,
        early.config.deps,
        early.opts.allow_major,
        checker(request, previous.pins, client, early.inputs.root),
    )
    side.shutdown(wait=False)

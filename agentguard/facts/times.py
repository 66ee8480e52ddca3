"""Times as the index and the lock files write them (ISO 8601, ``Z`` for UTC)."""

from __future__ import annotations

import datetime as dt


def parse_time(text: str | None) -> dt.datetime | None:
    """An upload time as an aware datetime (UTC when it names no zone); None when it is
    missing or not a time: unknown, never "now" or the epoch."""
    if not text:
        return None
    try:
        when = dt.datetime.fromisoformat(str(text).replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.timezone.utc)

"""Reading saved images safely and fast: ``docker save`` tarballs, OCI layouts, engine streams.

Images are untrusted input: nothing is extracted, executed or followed out of the image;
every read is bounded by :class:`Limits`, and every problem is a failed ``Source`` in the
returned :class:`ImageRead` (a failed source makes the report incomplete).
"""

from __future__ import annotations

from agentguard.inspect.image.archive import read_image_archive
from agentguard.inspect.image.limits import Limits
from agentguard.inspect.image.result import ImageRead
from agentguard.inspect.image.stream import read_image_stream
from agentguard.inspect.image.streamio import IterStream

__all__ = ["ImageRead", "IterStream", "Limits", "read_image_archive", "read_image_stream"]

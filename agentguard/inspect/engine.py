"""Access to the Docker engine (Docker SDK for Python, DOCKER_HOST honoured).

Every call returns its result together with a :class:`Source`; a failure is a failed
source with a stable ``error_code`` (``engine-unreachable``, ``engine-permission-denied``,
``engine-timeout``, ``engine-error``, ``engine-stream-interrupted``, ``not-found``) and
whether retrying may help. Nothing here raises for an engine problem, and nothing
swallows one into an empty result.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

from agentguard.findings import Source

DEFAULT_TIMEOUT = 120
SAVE_CHUNK = 1024 * 1024


def engine_host() -> str:
    """What the SDK will connect to, for messages: DOCKER_HOST or the default socket."""
    return os.environ.get("DOCKER_HOST") or "the default socket (DOCKER_HOST unset)"


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    cur: BaseException | None = exc
    while cur is not None and id(cur) not in seen:
        seen.add(id(cur))
        yield cur
        for arg in getattr(cur, "args", ()):
            if isinstance(arg, BaseException):
                yield from _chain(arg)
        cur = cur.__cause__ or cur.__context__


def classify_error(exc: BaseException) -> tuple[str, bool | None]:
    """(error_code, retryable) for an exception from the SDK or its transport."""
    import docker.errors
    import requests.exceptions

    if isinstance(exc, docker.errors.NotFound):
        return "not-found", False
    text = " ".join(str(e) for e in _chain(exc)).lower()
    chain = list(_chain(exc))
    if any(isinstance(e, PermissionError) for e in chain) or "permission denied" in text:
        return "engine-permission-denied", False
    if any(isinstance(e, (TimeoutError, requests.exceptions.Timeout)) for e in chain) or (
        "timed out" in text
    ):
        return "engine-timeout", True
    if any(
        isinstance(e, (FileNotFoundError, ConnectionError, requests.exceptions.ConnectionError))
        for e in chain
    ) or any(w in text for w in ("connection aborted", "connection refused", "no such file")):
        return "engine-unreachable", True
    status = _http_status(chain, text)
    if status in (401, 403):  # an authorization plugin or socket proxy said no
        return "engine-permission-denied", False
    if status is not None:
        return "engine-error", status >= 500 or status == 429
    return "engine-error", None


def _http_status(chain: list[BaseException], text: str) -> int | None:
    """The engine's HTTP status, wherever the SDK put it (``from_env`` wraps the API error
    of its version probe in a plain DockerException, keeping only the message)."""
    for e in chain:
        code = getattr(getattr(e, "response", None), "status_code", None)
        if isinstance(code, int):
            return code
    m = re.search(r"\b([1-5]\d\d) (?:client|server) error\b", text)
    return int(m.group(1)) if m else None


_REMEDY = {
    "engine-unreachable": "start the Docker engine or point DOCKER_HOST at it, then retry",
    "engine-permission-denied": "run as a user allowed to use the engine's socket",
    "engine-timeout": "retry; the engine did not answer in time",
}


def failed_source(kind: str, name: str, what: str, exc: BaseException) -> Source:
    code, retryable = classify_error(exc)
    return Source.failed(
        kind,
        name,
        f"{what}: {_first_line(exc)}",
        error_code=code,
        retryable=retryable,
        remedy=_REMEDY.get(code),
    )


_CAUSES = (
    ("FileNotFoundError", "no engine socket at {host}"),
    ("ConnectionRefusedError", "nothing listens at {host}"),
    ("PermissionError", "no permission to use the engine socket at {host}"),
    ("timed out", "the engine at {host} did not answer in time"),
)


def _plain_reason(exc: BaseException, host: str) -> str | None:
    text = str(exc)
    for needle, words in _CAUSES:
        if needle in text:
            return words.format(host=host)
    return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


@dataclass(frozen=True)
class Engine:
    """A connected client, or None with the failed source saying why."""

    client: Any | None
    source: Source


def connect(timeout: int = DEFAULT_TIMEOUT) -> Engine:
    import docker

    host = engine_host()
    try:
        client = docker.from_env(timeout=timeout)
        version = client.version()
    except Exception as exc:  # every failure becomes a failed source, classified
        failed = failed_source("engine", host, "cannot reach the Docker engine", exc)
        plain = _plain_reason(exc, host)
        if plain is not None:  # the cause in words, not the HTTP library's
            failed = replace(failed, reason=f"cannot reach the Docker engine: {plain}")
        return Engine(None, failed)
    return Engine(
        client,
        Source.ok("engine", host, f"Docker engine {version.get('Version', 'unknown version')}"),
    )


@dataclass(frozen=True)
class Lookup:
    """The object when found; ``found`` is None when the engine could not answer."""

    obj: Any | None
    found: bool | None
    source: Source


def _lookup(kind: str, ref: str, get: Any) -> Lookup:
    import docker.errors

    try:
        obj = get(ref)
    except docker.errors.NotFound:
        return Lookup(
            None,
            False,
            Source.failed(
                kind,
                ref,
                f"no {kind} {ref!r} in the engine at {engine_host()}",
                error_code="not-found",
                retryable=False,
                remedy=f"check the {kind} name (`docker {kind}s` lists them)"
                if kind == "image"
                else "check the name (`docker ps -a` lists containers)",
            ),
        )
    except Exception as exc:
        return Lookup(None, None, failed_source(kind, ref, f"cannot look up the {kind}", exc))
    return Lookup(obj, True, Source.ok(kind, ref, f"{kind} {getattr(obj, 'id', '')}"))


def lookup_image(client: Any, ref: str) -> Lookup:
    return _lookup("image", ref, client.images.get)


def lookup_container(client: Any, ref: str) -> Lookup:
    return _lookup("container", ref, client.containers.get)


class SaveStream(io.RawIOBase):
    """``image.save()``'s chunks as a read-only file for the streaming reader.

    An engine failure mid-stream is kept in :attr:`error` (and raised to the reader as an
    OSError) so the run records it as a failed source even if the reader's own message
    is about a short layer.
    """

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__()
        self._chunks = chunks
        self._buffer = b""
        self._done = False
        self.error: BaseException | None = None
        self.bytes_read = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        view = memoryview(b).cast("B")
        while not self._buffer and not self._done:
            try:
                self._buffer = next(self._chunks)
            except StopIteration:
                self._done = True
            except Exception as exc:
                self.error = exc
                self._done = True
                raise OSError(f"the engine's image stream broke: {_first_line(exc)}") from exc
        n = min(len(view), len(self._buffer))
        view[:n] = self._buffer[:n]
        self._buffer = self._buffer[n:]
        self.bytes_read += n
        return n


def save_stream(image: Any) -> SaveStream:
    """The engine's `docker save` of ``image`` as a stream (nothing written to disk)."""
    return SaveStream(iter(image.save(chunk_size=SAVE_CHUNK, named=False)))


def stream_source(ref: str, stream: SaveStream) -> Source:
    if stream.error is not None:
        code, retryable = classify_error(stream.error)
        if code in ("engine-unreachable", "engine-error"):
            code, retryable = "engine-stream-interrupted", True
        return Source.failed(
            "engine",
            ref,
            f"the engine's image stream broke after {stream.bytes_read} bytes: "
            f"{_first_line(stream.error)}",
            error_code=code,
            retryable=retryable,
            remedy="retry; the image was only partly read",
        )
    return Source.ok("engine", ref, f"image stream read ({stream.bytes_read} bytes)")

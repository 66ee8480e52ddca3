"""Engine faults that cannot be caused for real here (the tests run as root, the engine does
not die on demand): classified from constructed exceptions and a fake save stream."""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import Any

import docker.errors
import requests

from agentguard.findings import SourceStatus
from agentguard.inspect import engine as eng
from agentguard.inspect.image_reads import read_engine_image


def test_fake_errors_are_classified_with_stable_codes() -> None:
    denied = requests.exceptions.ConnectionError(
        requests.packages.urllib3.exceptions.ProtocolError(  # type: ignore[attr-defined]
            "Connection aborted.", PermissionError(13, "Permission denied")
        )
    )
    refused = requests.exceptions.ConnectionError(ConnectionRefusedError(111, "refused"))
    timeout = requests.exceptions.ReadTimeout("Read timed out. (read timeout=120)")
    server = docker.errors.APIError("500 Server Error", response=_Response(500))
    missing = docker.errors.NotFound("no such image")
    assert [eng.classify_error(e) for e in (denied, refused, timeout, server, missing)] == [
        ("engine-permission-denied", False),
        ("engine-unreachable", True),
        ("engine-timeout", True),
        ("engine-error", True),
        ("not-found", False),
    ]
    source = eng.failed_source("engine", "unix:///x.sock", "cannot reach the Docker engine", denied)
    assert (source.status, source.error_code, source.retryable, source.remedy) == (
        SourceStatus.FAILED,
        "engine-permission-denied",
        False,
        "run as a user allowed to use the engine's socket",
    )


class _Response:
    def __init__(self, status: int) -> None:
        self.status_code = status
        self.reason = "Server Error"
        self.url = "http+docker://localhost/images/x/get"


class _FakeImage:
    """An image whose `docker save` stream breaks after the first chunk."""

    id = "sha256:" + "f" * 64
    attrs: dict[str, Any] = {"RepoDigests": []}

    def save(self, chunk_size: int, named: bool) -> Iterator[bytes]:
        yield b"\0" * 512
        raise requests.exceptions.ConnectionError(OSError(104, "Connection reset by peer"))


def test_fake_engine_dying_mid_stream_is_a_failed_engine_source() -> None:
    read = read_engine_image(_FakeImage(), target="agent:1", platform=None)
    assert read.facts is None
    failed = [
        (s.kind, s.error_code, s.retryable) for s in read.sources if s.status is SourceStatus.FAILED
    ]
    assert ("image-archive", "stream-read-error", True) in failed
    engine = [s for s in read.sources if s.kind == "engine"]
    assert [(s.name, s.error_code, s.retryable, s.reason) for s in engine] == [
        (
            "agent:1",
            "engine-stream-interrupted",
            True,
            "the engine's image stream broke after 512 bytes: [Errno 104] Connection reset by peer",
        )
    ]


def test_save_stream_reads_across_chunks() -> None:
    stream = eng.SaveStream(iter([b"ab", b"", b"cde"]))
    assert io.BufferedReader(stream).read() == b"abcde"
    assert stream.bytes_read == 5
    assert eng.stream_source("agent:1", stream).status is SourceStatus.OK

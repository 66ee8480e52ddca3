"""A loopback server that answers with whatever bytes a test writes: for the HTTP framing
attacks :mod:`tests.hostile.index_server` (a well-formed ``http.server``) cannot make.

Each connection reads one request head at a time and hands its request line to
``answer(sock, line)``, which writes raw bytes; returning ``False`` closes the connection.
"""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

Answer = Callable[[socket.socket, str], "bool | None"]


@dataclass
class RawServer:
    answer: Answer
    connections: int = 0
    requests: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    _sock: socket.socket | None = None

    @property
    def port(self) -> int:
        assert self._sock is not None
        return int(self._sock.getsockname()[1])

    def url(self, path: str = "/simple/") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def start(self) -> RawServer:
        self._sock = socket.create_server(("127.0.0.1", 0))
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def close(self) -> None:
        self.stop.set()
        if self._sock is not None:
            self._sock.close()

    def _accept(self) -> None:
        assert self._sock is not None
        while not self.stop.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn, contextlib.suppress(OSError):
            conn.settimeout(30)
            data = b""
            while not self.stop.is_set():
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, data = data.partition(b"\r\n\r\n")
                line = head.split(b"\r\n", 1)[0].decode("latin-1")
                self.requests.append(line)
                if self.answer(conn, line) is False:
                    return


def page(body: bytes, status: bytes = b"200 OK", headers: bytes = b"") -> bytes:
    """A whole answer with a Content-Length."""
    return (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: text/html\r\n"
        b"Content-Length: %d\r\n" % len(body) + headers + b"\r\n" + body
    )


def path_of(line: str) -> bytes:
    """The path a request line asks for (what an echoing answer puts in its page)."""
    return line.split(" ")[1].encode()


@contextlib.contextmanager
def raw_serving(answer: Answer) -> Iterator[RawServer]:
    server = RawServer(answer).start()
    try:
        yield server
    finally:
        server.close()

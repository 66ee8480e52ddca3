"""A tiny package index on 127.0.0.1 that can misbehave on demand.

It serves a folder of wheels and sdists through the simple repository API (PEP 691 JSON
when asked for it, PEP 503 HTML otherwise) and the files themselves. A *plan* decides,
per request, what the server does instead of answering well:

``ok``       answer normally
``hang``     accept, read the request, never answer (until the server stops)
``reset``    close the connection with a TCP reset before answering
``close``    close the connection cleanly without a byte of answer
``500``      answer ``500 Internal Server Error``
``503``      answer ``503 Service Unavailable`` (``404`` and ``429`` likewise)
``garbage``  answer 200 with the right content type and a body that is not JSON/HTML
``huge``     answer 200 with a body of :attr:`IndexServer.huge_bytes` bytes
``huge-500`` answer 500 with a body that never ends (until the client hangs up)
``deep``     answer 200 with a JSON page nested 100,000 levels deep
``slow``     answer 200 and then one byte every :attr:`IndexServer.slow_interval` seconds
``short``    answer 200 declaring more bytes than it sends, then close the connection
``redirect URL``  answer ``302`` to URL

With :attr:`auth` set, every request without that basic login gets ``401``. Pages can be
rewritten by :attr:`page_hook` (a hostile index's JSON), and :attr:`metadata` serves PEP 658
``.metadata`` files (advertised in JSON pages with their hash, or :attr:`advertised`).

Requests are told apart by what they ask for and who asks (uv sends ``uv/...`` as its
user agent, agentguard's own index client ``agentguard (+lock)``), so a test can keep the
resolver happy and break agentguard's own page reads, or the other way round. With
:attr:`shuffle` on, every page lists its files in a new random order.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import json
import random
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from packaging.utils import canonicalize_name

JSON_TYPE = "application/vnd.pypi.simple.v1+json"


@dataclass(frozen=True)
class Request:
    path: str
    user_agent: str
    accept: str
    authorization: str = ""

    @property
    def from_uv(self) -> bool:
        return self.user_agent.startswith("uv/")

    @property
    def from_agentguard(self) -> bool:
        return self.user_agent.startswith("agentguard")

    @property
    def is_page(self) -> bool:
        return self.path.startswith("/simple/")

    @property
    def is_file(self) -> bool:
        return self.path.startswith("/files/")


Plan = Callable[[Request], str]

_STATUS_TEXT = {
    "404": "Not Found",
    "429": "Too Many Requests",
    "500": "Internal Server Error",
    "503": "Service Unavailable",
}


def _dist_name(filename: str) -> str:
    if filename.endswith(".whl"):
        return canonicalize_name(filename.split("-")[0])
    stem = filename.removesuffix(".tar.gz").removesuffix(".zip")
    return canonicalize_name(stem.rsplit("-", 1)[0])


@dataclass
class IndexServer:
    folder: Path
    plan: Plan = lambda _r: "ok"
    shuffle: bool = False
    huge_bytes: int = 80 * 1024 * 1024
    upload_times: dict[str, str] = field(default_factory=dict)  # filename -> PEP 700 time
    log: list[tuple[Request, str]] = field(default_factory=list)
    auth: tuple[str, str] | None = None
    page_hook: Callable[[Request, dict[str, object]], dict[str, object]] | None = None
    metadata: dict[str, bytes] = field(default_factory=dict)  # wheel file name -> .metadata
    advertised: dict[str, str] = field(default_factory=dict)  # wheel file name -> its hash
    slow_interval: float = 2.0
    headers_seen: list[dict[str, str]] = field(default_factory=list)
    connections: list[int] = field(default_factory=list)  # the client port of each connection
    _stop: threading.Event = field(default_factory=threading.Event)
    _httpd: ThreadingHTTPServer | None = None
    _rng: random.Random = field(default_factory=lambda: random.Random(7))

    @property
    def url(self) -> str:
        assert self._httpd is not None
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/simple"

    def files(self) -> dict[str, list[Path]]:
        out: dict[str, list[Path]] = {}
        for path in sorted(self.folder.iterdir()):
            if path.suffix == ".whl" or path.name.endswith((".tar.gz", ".zip")):
                out.setdefault(_dist_name(path.name), []).append(path)
        return out

    def start(self) -> IndexServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                return

            def setup(self) -> None:
                super().setup()
                server.connections.append(int(self.client_address[1]))

            def do_GET(self) -> None:
                server._handle(self)

            def do_HEAD(self) -> None:
                server._head(self)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        threading.Thread(target=self._httpd.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()

    # -- answering -------------------------------------------------------------------
    def _handle(self, h: BaseHTTPRequestHandler) -> None:
        req = Request(
            h.path,
            h.headers.get("User-Agent", ""),
            h.headers.get("Accept", ""),
            h.headers.get("Authorization", ""),
        )
        self.headers_seen.append(dict(h.headers.items()))
        if self.auth is not None:
            wanted = "Basic " + base64.b64encode(":".join(self.auth).encode()).decode()
            if req.authorization != wanted:
                self.log.append((req, "401"))
                self._send(h, 401, "text/plain", b"401 Unauthorized\n")
                return
        action = self.plan(req)
        self.log.append((req, action))
        if action == "slow":
            self._slow(h)
            return
        if action.startswith("redirect "):
            with contextlib.suppress(OSError):
                h.send_response(302)
                h.send_header("Location", action.split(" ", 1)[1])
                h.send_header("Content-Length", "0")
                h.end_headers()
            return
        if action == "hang":
            self._stop.wait(120)
            h.close_connection = True
            return
        if action == "reset":
            h.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            h.connection.close()
            h.close_connection = True
            return
        if action == "close":
            h.connection.shutdown(socket.SHUT_RDWR)
            h.close_connection = True
            return
        if action == "short":
            with contextlib.suppress(OSError):
                h.send_response(200)
                h.send_header("Content-Type", JSON_TYPE)
                h.send_header("Content-Length", "1000")
                h.end_headers()
                h.wfile.write(b'{"files": [')
            h.close_connection = True
            return
        if action in _STATUS_TEXT:
            text = _STATUS_TEXT[action]
            self._send(h, int(action), "text/plain", f"{action} {text}\n".encode())
            return
        if action == "huge-500":
            self._endless(h, 500)
            return
        if action == "garbage":
            ctype = JSON_TYPE if JSON_TYPE in req.accept else "text/html"
            self._send(h, 200, ctype, b"\x00\xff<<not an index page>> {{{ \x89PNG\r\n")
            return
        if action == "deep":
            self._send(h, 200, JSON_TYPE, b'{"files": ' + b"[" * 100_000 + b"]" * 100_000 + b"}")
            return
        if action == "huge":
            ctype = JSON_TYPE if JSON_TYPE in req.accept else "text/html"
            self._sized(h, ctype, self.huge_bytes)
            return
        assert action == "ok", action
        self._ok(h, req)

    def _head(self, h: BaseHTTPRequestHandler) -> None:
        """Resolvers probe files with HEAD (range support); no ranges here: whole files."""
        target = self.folder / h.path.split("?", 1)[0].removeprefix("/files/")
        with contextlib.suppress(OSError):
            if h.path.startswith("/files/") and target.is_file():
                h.send_response(200)
                h.send_header("Content-Type", "application/octet-stream")
                h.send_header("Content-Length", str(target.stat().st_size))
            else:
                h.send_response(404)
                h.send_header("Content-Length", "0")
            h.end_headers()

    def _ok(self, h: BaseHTTPRequestHandler, req: Request) -> None:
        files = self.files()
        path = req.path.split("?", 1)[0]
        if path in ("/simple", "/simple/"):
            links = "".join(f'<a href="{n}/">{n}</a>\n' for n in files)
            self._send(h, 200, "text/html", f"<html><body>{links}</body></html>".encode())
            return
        if path.startswith("/simple/"):
            name = canonicalize_name(path[len("/simple/") :].strip("/"))
            found = list(files.get(name, []))
            if not found:
                self._send(h, 404, "text/plain", b"not found\n")
                return
            if self.shuffle:
                self._rng.shuffle(found)
            if JSON_TYPE in req.accept:
                page = self._json_page(name, found)
                if self.page_hook is not None:
                    page = self.page_hook(req, page)
                body = json.dumps(page).encode()
                self._send(h, 200, JSON_TYPE, body)
            else:
                self._send(h, 200, "text/html", self._html_page(found).encode())
            return
        if path.startswith("/files/") and path.endswith(".metadata"):
            served = self.metadata.get(path[len("/files/") : -len(".metadata")])
            if served is not None:
                self._send(h, 200, "application/octet-stream", served)
                return
        if path.startswith("/files/"):
            target = self.folder / path[len("/files/") :]
            if target.is_file() and target.parent == self.folder:
                self._send(h, 200, "application/octet-stream", target.read_bytes())
                return
        self._send(h, 404, "text/plain", b"not found\n")

    def _json_page(self, name: str, found: list[Path]) -> dict[str, object]:
        return {
            "meta": {"api-version": "1.1"},
            "name": name,
            "files": [
                {
                    "filename": p.name,
                    "url": f"../../files/{p.name}",
                    "hashes": {"sha256": hashlib.sha256(p.read_bytes()).hexdigest()},
                    "size": p.stat().st_size,
                    "upload-time": self.upload_times.get(p.name, "2024-01-01T00:00:00.000000Z"),
                    **self._core_metadata(p.name),
                }
                for p in found
            ],
        }

    def _core_metadata(self, filename: str) -> dict[str, object]:
        if filename not in self.metadata:
            return {}
        digest = (
            self.advertised.get(filename) or hashlib.sha256(self.metadata[filename]).hexdigest()
        )
        return {"core-metadata": {"sha256": digest}}

    def _slow(self, h: BaseHTTPRequestHandler) -> None:
        """A slow-loris answer: headers, then a byte every ``slow_interval`` s (60 s at most)."""
        deadline = time.monotonic() + 60
        with contextlib.suppress(OSError):
            h.send_response(200)
            h.send_header("Content-Type", JSON_TYPE)
            h.send_header("Content-Length", "1000000")
            h.end_headers()
            h.wfile.flush()
            while not self._stop.is_set() and time.monotonic() < deadline:
                h.wfile.write(b" ")
                h.wfile.flush()
                self._stop.wait(self.slow_interval)
        h.close_connection = True

    def _html_page(self, found: list[Path]) -> str:
        links = "".join(
            f'<a href="../../files/{html.escape(p.name)}#sha256='
            f'{hashlib.sha256(p.read_bytes()).hexdigest()}">{html.escape(p.name)}</a><br/>\n'
            for p in found
        )
        return f"<!DOCTYPE html><html><body>\n{links}</body></html>\n"

    @staticmethod
    def _send(h: BaseHTTPRequestHandler, status: int, ctype: str, body: bytes) -> None:
        with contextlib.suppress(OSError):
            h.send_response(status)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(len(body)))
            h.end_headers()
            h.wfile.write(body)

    def _sized(self, h: BaseHTTPRequestHandler, ctype: str, size: int) -> None:
        chunk = b" " * (1 << 20)
        with contextlib.suppress(OSError):
            h.send_response(200)
            h.send_header("Content-Type", ctype)
            h.send_header("Content-Length", str(size))
            h.end_headers()
            left = size
            while left > 0 and not self._stop.is_set():
                n = min(left, len(chunk))
                h.wfile.write(chunk[:n])
                left -= n
        h.close_connection = True

    def _endless(self, h: BaseHTTPRequestHandler, status: int) -> None:
        """A close-delimited body that goes on until the client hangs up (or 10 s pass)."""
        chunk = b"error " * 10_000
        deadline = time.monotonic() + 10
        with contextlib.suppress(OSError):
            h.send_response(status)
            h.send_header("Content-Type", "text/plain")
            h.send_header("Connection", "close")
            h.end_headers()
            while not self._stop.is_set() and time.monotonic() < deadline:
                h.wfile.write(chunk)
        h.close_connection = True


@contextlib.contextmanager
def serving(
    folder: Path, plan: Plan | None = None, *, shuffle: bool = False, **options: object
) -> Iterator[IndexServer]:
    server = IndexServer(folder, shuffle=shuffle, **options)  # type: ignore[arg-type]
    if plan is not None:
        server.plan = plan
    server.start()
    try:
        yield server
    finally:
        server.stop()

"""A small npm registry on 127.0.0.1 that can misbehave on demand.

It serves packuments built from real tarballs (``package/package.json`` in a gzipped tar,
their ``dist.integrity`` the sha512 of the bytes served) and the tarballs themselves.
:attr:`NpmRegistry.plan` decides per request what the server does instead of answering
well: ``ok``, ``garbage`` (200, not JSON), ``huge`` (a body of :attr:`huge_bytes`),
``slow`` (a byte every :attr:`slow_interval` s), ``redirect URL`` (302 to URL),
``other-name`` (the packument of another package), ``bad-integrity`` (a packument whose
integrity does not match the tarball), ``tarball-elsewhere`` (the tarball URL on another
origin), ``sha1-only`` (no sha512 integrity), ``deep`` (JSON nested 200,000 deep).

For the signature and provenance checks it also serves what a test made with its own
keys and CA: :attr:`NpmRegistry.signatures` (``dist.signatures`` of a version),
:attr:`NpmRegistry.attestations` (the body of ``-/npm/v1/attestations/NAME@VERSION``)
and :attr:`NpmRegistry.times` (the packument's ``time``)."""

from __future__ import annotations

import base64
import contextlib
import gzip
import hashlib
import io
import json
import tarfile
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def tarball(
    name: str, version: str, *, replaced: bool = False, deps: dict[str, str] | None = None
) -> bytes:
    """The version's tarball; ``replaced``: other content under the same version (what a
    registry that lets a version be published again would serve); ``deps``: its
    ``dependencies``."""
    doc: dict[str, object] = {"name": name, "version": version, "bin": {"server": "index.js"}}
    if deps:
        doc["dependencies"] = deps
    manifest = json.dumps(doc)
    code = "require('child_process')\n" if replaced else ""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for path, data in (("package/package.json", manifest), ("package/index.js", code)):
            info = tarfile.TarInfo(path)
            info.size = len(data.encode())
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data.encode()))
    return gzip.compress(buf.getvalue(), mtime=0)  # the same bytes every time


def integrity(data: bytes) -> str:
    return "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()


@dataclass
class NpmRegistry:
    packages: dict[str, list[str]]  # name -> versions published
    tags: dict[str, dict[str, str]] = field(default_factory=dict)  # name -> dist-tags
    plan: Callable[[str], str] = lambda _path: "ok"
    huge_bytes: int = 40 * 1024 * 1024
    slow_interval: float = 0.5
    provenance: set[tuple[str, str]] = field(default_factory=set)
    requests: list[str] = field(default_factory=list)
    signatures: dict[tuple[str, str], list[dict[str, str]]] = field(default_factory=dict)
    attestations: dict[tuple[str, str], bytes] = field(default_factory=dict)
    times: dict[str, str] = field(default_factory=dict)  # version -> publish time
    replaced: set[tuple[str, str]] = field(default_factory=set)  # served with other content
    # (name, version) -> its dependencies, in the packument and the tarball's package.json
    deps: dict[tuple[str, str], dict[str, str]] = field(default_factory=dict)
    # (name, version) -> the origin its packument names for the tarball (another server)
    tarball_at: dict[tuple[str, str], str] = field(default_factory=dict)
    no_integrity: set[tuple[str, str]] = field(default_factory=set)  # dist without integrity
    port: int = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def publish(self, name: str, version: str) -> None:
        self.packages.setdefault(name, []).append(version)

    def tarball_of(self, name: str, version: str) -> bytes:
        return tarball(
            name,
            version,
            replaced=(name, version) in self.replaced,
            deps=self.deps.get((name, version)),
        )

    def packument(
        self, name: str, *, bad_integrity: bool = False, elsewhere: bool = False
    ) -> dict[str, object]:
        versions = {}
        for v in self.packages[name]:
            data = self.tarball_of(name, v)
            base = "http://localhost:1/" if elsewhere else self.tarball_at.get((name, v), self.url)
            dist: dict[str, object] = {
                "integrity": integrity(data + (b"x" if bad_integrity else b"")),
                "tarball": f"{base}{name}/-/{name.rsplit('/', 1)[-1]}-{v}.tgz",
            }
            if (name, v) in self.provenance:
                dist["attestations"] = {"url": f"{self.url}attestations", "provenance": {}}
            if (name, v) in self.signatures:
                dist["signatures"] = self.signatures[(name, v)]
            if (name, v) in self.no_integrity:
                del dist["integrity"]
            versions[v] = {"name": name, "version": v, "dist": dist, "bin": {"server": "index.js"}}
            if (name, v) in self.deps:
                versions[v]["dependencies"] = self.deps[(name, v)]
        tags = self.tags.get(name) or {"latest": self.packages[name][-1]}
        doc: dict[str, object] = {"name": name, "dist-tags": tags, "versions": versions}
        if self.times:
            doc["time"] = dict(self.times)
        return doc


def _handler(reg: NpmRegistry) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:
            """Nothing on stderr: the requests it served are kept in ``reg.requests``."""

        def _send(self, code: int, body: bytes, ctype: str = "application/json") -> None:
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_GET(self) -> None:
            path = urllib.parse.unquote(self.path.lstrip("/"))
            reg.requests.append(path)
            plan = reg.plan(path)
            path = path.removeprefix("mirror/")  # (where a test redirects to)
            if plan.startswith("redirect "):
                self.send_response(302)
                self.send_header("Location", plan.split(" ", 1)[1])
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if plan == "garbage":
                return self._send(200, b"<html>not json</html>")
            if plan == "huge":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                chunk = b" " * 65536
                with contextlib.suppress(OSError):
                    for _ in range(reg.huge_bytes // len(chunk) + 1):
                        self.wfile.write(chunk)
                return
            if plan == "slow":
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "1000000")
                self.end_headers()
                with contextlib.suppress(OSError):
                    for _ in range(1000000):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(reg.slow_interval)
                return
            if path.startswith("-/npm/v1/attestations/"):
                spec = path.removeprefix("-/npm/v1/attestations/")
                name, _, version = spec.rpartition("@")
                body = reg.attestations.get((name, version))
                return self._send(404, b"{}") if body is None else self._send(200, body)
            if "/-/" in path:
                name, _, file = path.partition("/-/")
                for v in reg.packages.get(name, []):
                    if file == f"{name.rsplit('/', 1)[-1]}-{v}.tgz":
                        data = reg.tarball_of(name, v)
                        return self._send(200, data, "application/octet-stream")
                return self._send(404, b"{}")
            if path not in reg.packages:
                return self._send(404, b'{"error":"Not found"}')
            doc = reg.packument(
                path, bad_integrity=plan == "bad-integrity", elsewhere=plan == "tarball-elsewhere"
            )
            if plan == "other-name":
                doc["name"] = "left-pad"
            if plan == "sha1-only":
                for meta in doc["versions"].values():  # type: ignore[attr-defined]
                    meta["dist"]["integrity"] = "sha1-" + "A" * 27 + "="
            if plan == "deep":
                return self._send(200, b"[" * 200000 + b"]" * 200000)
            self._send(200, json.dumps(doc).encode())

    return Handler


@contextlib.contextmanager
def serve(reg: NpmRegistry) -> Iterator[NpmRegistry]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(reg))
    server.daemon_threads = True
    reg.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield reg
    finally:
        server.shutdown()
        server.server_close()

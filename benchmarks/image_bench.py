"""Saved-image benchmark: agentguard's image reader beside the plain-tool floor.

Generates ``docker save`` tarballs (classic layout: ``manifest.json``, ``<id>/layer.tar``,
``<config>.json``) of about 1 GB and 3 GB directly as tarballs: tens of thousands of small
files, a few hundred large ones, one gzip layer, a small project in the working directory
(``/app``), an agent outside it (a wrapper the config starts, its script, managed settings,
``~/.claude.json``) and a whiteout. Then times, on a warm page cache, best of N runs:

* the reader API, ``read_image_archive`` (in a child: ``python -m agentguard.inspect.image``);
* the reader on the same file as a one-pass, non-seekable stream (``--stream``);
* ``agentguard inspect --kind archive IMAGE.tar`` when the command accepts it;
* the floor, one GNU tar pass listing every layer's entries:
  ``tar -xf image.tar --wildcards '*/layer.tar' --to-command='gzip -dcf | tar -t >/dev/null'``.

Peak memory is each command's maximum resident set as GNU time reports it (for the floor,
the largest of tar, gzip and the inner tar). Timings are wall-clock, best of N, after one
``cat`` of the image to warm the page cache. Generated images are deleted unless ``--keep``.

Usage: python benchmarks/image_bench.py [--dir DIR] [--sizes 1,3] [--runs 3] [--keep]
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import json
import random
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zlib
from collections.abc import Iterator
from pathlib import Path

from installed import byte_compile  # benchmarks/installed.py

VENV_BIN = Path(sys.executable).parent
GB = 1000**3
FLOOR = "tar -xf {img} --wildcards '*/layer.tar' --to-command='gzip -dcf | tar -t >/dev/null'"

_POOL = random.Random(7).randbytes(1 << 22)  # file bodies are slices of this pool


def _body(rng: random.Random, size: int) -> bytes:
    if size <= len(_POOL):
        start = rng.randrange(0, len(_POOL) - size + 1)
        return _POOL[start : start + size]
    reps = size // len(_POOL) + 1
    return (_POOL * reps)[:size]


def _entry(name: str, data: bytes | None = None, *, kind: bytes = tarfile.REGTYPE) -> bytes:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.mode = 0o755 if kind == tarfile.DIRTYPE else 0o644
    info.mtime = 1_700_000_000
    info.size = len(data) if data is not None else 0
    out = info.tobuf(format=tarfile.GNU_FORMAT)
    if data:
        out += data + b"\0" * (-len(data) % 512)
    return out


def _dirs(paths: list[str]) -> Iterator[bytes]:
    seen: set[str] = set()
    for p in paths:
        parts = p.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            d = "/".join(parts[:i])
            if d not in seen:
                seen.add(d)
                yield _entry(d + "/", kind=tarfile.DIRTYPE)


def layer_small(rng: random.Random, count: int, packages: int) -> Iterator[bytes]:
    """Site-packages: many small modules plus dist-info METADATA files."""
    files = [
        f"usr/lib/python3/site-packages/pkg{i % packages}/sub{i % 7}/mod{i}.py"
        for i in range(count)
    ]
    yield from _dirs(files)
    for path in files:
        yield _entry(path, _body(rng, rng.randrange(200, 8000)))
    for i in range(packages):
        meta = (
            f"Metadata-Version: 2.1\nName: pkg{i}\nVersion: 1.{i}.0\n"
            f"Requires-Dist: pkg{(i + 1) % packages}>=1\n\nDescription body\n"
        ).encode()
        d = f"usr/lib/python3/site-packages/pkg{i}-1.{i}.0.dist-info/"
        yield _entry(d, kind=tarfile.DIRTYPE)
        yield _entry(d + "METADATA", meta)


def layer_big(rng: random.Random, count: int, each: int) -> Iterator[bytes]:
    yield _entry("opt/", kind=tarfile.DIRTYPE)
    yield _entry("opt/models/", kind=tarfile.DIRTYPE)
    for i in range(count):
        yield _entry(f"opt/models/shard{i:04d}.bin", _body(rng, each + rng.randrange(0, 4096)))


def layer_docs(rng: random.Random, count: int) -> Iterator[bytes]:
    files = [f"usr/share/doc/tool{i % 300}/page{i}.txt" for i in range(count)]
    yield from _dirs(files)
    words = b"agent container layer image reader floor benchmark whiteout entry "
    for path in files:
        yield _entry(path, words * rng.randrange(10, 200))


def layer_project(rng: random.Random) -> Iterator[bytes]:
    files = {
        "app/pyproject.toml": b'[project]\nname = "demo-agent"\ndependencies = ["mcp>=1.2"]\n',
        "app/.mcp.json": b'{"mcpServers": {"fs": {"command": "npx", "args": ["fs-server"]}}}\n',
        "app/CLAUDE.md": b"# Agent notes\nRead docs/plan.md first.\n",
        "app/.env": b"API_TOKEN=not-read-by-the-reader\n",
        "app/docs/plan.md": b"# Internal plan\n",
        "app/docs/old-plan.md": b"# Old plan (deleted by a later layer)\n",
        "app/.git/HEAD": b"ref: refs/heads/main\n",
    }
    # The agent outside the working directory: a wrapper the config starts, the script it
    # execs, managed settings and the user's MCP servers (read in the same pass).
    files["usr/local/bin/start-agent"] = b'#!/bin/sh\nset -e\nexec python3 /opt/agent/bot.py "$@"\n'
    files["opt/agent/bot.py"] = (
        b"from claude_agent_sdk import ClaudeAgentOptions\n"
        b'O = ClaudeAgentOptions(permission_mode="bypassPermissions")\n'
    )
    files["opt/agent/tools.py"] = b"def tool() -> None:\n    pass\n"
    files["etc/passwd"] = b"root:x:0:0:root:/root:/bin/sh\n"
    files["etc/claude-code/managed-settings.json"] = b'{"permissions": {"allow": ["Bash(*)"]}}\n'
    files["root/.claude.json"] = b'{"mcpServers": {"x": {"command": "npx", "args": ["-y", "x"]}}}\n'
    for i in range(40):
        files[f"app/src/agent_{i}.py"] = b"from claude_agent_sdk import query\n" * rng.randrange(
            5, 50
        )
    yield from _dirs(list(files))
    for path, data in files.items():
        yield _entry(path, data)


def layer_cleanup() -> Iterator[bytes]:
    yield _entry("app/", kind=tarfile.DIRTYPE)
    yield _entry("app/docs/", kind=tarfile.DIRTYPE)
    yield _entry("app/docs/.wh.old-plan.md")


class _Outer:
    """Writes the outer tarball; a layer's header is patched once its size is known."""

    def __init__(self, path: Path) -> None:
        self.f = path.open("wb")

    def member(self, name: str, data: bytes) -> None:
        self.f.write(_entry(name, data))

    def layer(self, name: str, blocks: Iterator[bytes], *, gzip: bool) -> str:
        header_at = self.f.tell()
        self.f.write(bytes(512))
        diff = hashlib.sha256()
        comp = zlib.compressobj(1, zlib.DEFLATED, 31) if gzip else None
        size = 0
        buf = io.BytesIO()
        for block in itertools.chain(blocks, [bytes(1024)]):
            diff.update(block)
            buf.write(block)
            if buf.tell() >= 1 << 20:
                size += self._out(buf.getvalue(), comp)
                buf = io.BytesIO()
        size += self._out(buf.getvalue(), comp)
        if comp is not None:
            tail = comp.flush()
            self.f.write(tail)
            size += len(tail)
        self.f.write(b"\0" * (-size % 512))
        end = self.f.tell()
        info = tarfile.TarInfo(name)
        info.size, info.mode, info.mtime = size, 0o644, 1_700_000_000
        self.f.seek(header_at)
        self.f.write(info.tobuf(format=tarfile.GNU_FORMAT))
        self.f.seek(end)
        return "sha256:" + diff.hexdigest()

    def _out(self, data: bytes, comp: zlib._Compress | None) -> int:
        out = comp.compress(data) if comp is not None else data
        self.f.write(out)
        return len(out)

    def close(self) -> None:
        self.f.write(bytes(1024))
        self.f.close()


def generate(path: Path, size_gb: float) -> dict[str, int]:
    rng = random.Random(int(size_gb * 1000))
    small = int(40_000 * size_gb**0.5)  # 40k small files at 1 GB, ~69k at 3 GB
    docs = small // 4
    big_count = 300
    out = _Outer(path)
    names, diff_ids, history = [], [], []

    def add(i: int, created_by: str, blocks: Iterator[bytes], gz: bool) -> None:
        layer_id = hashlib.sha256(f"{size_gb}-{i}".encode()).hexdigest()
        out.member(f"{layer_id}/VERSION", b"1.0")
        diff_ids.append(out.layer(f"{layer_id}/layer.tar", blocks, gzip=gz))
        names.append(f"{layer_id}/layer.tar")
        history.append({"created_by": created_by})

    add(0, "COPY site-packages /usr/lib/python3", layer_small(rng, small, 200), False)
    add(1, "ADD docs.tar.gz /usr/share/doc", layer_docs(rng, docs), True)
    each = max(1 << 20, int((size_gb * GB - out.f.tell()) / big_count) - 2560)
    add(2, "COPY models /opt/models", layer_big(rng, big_count, each), False)
    add(3, "COPY . /app", layer_project(rng), False)
    add(4, "RUN rm /app/docs/old-plan.md", layer_cleanup(), False)
    config = json.dumps(
        {
            "architecture": "amd64",
            "os": "linux",
            "config": {
                "WorkingDir": "/app",
                "User": "",
                "Env": ["PATH=/usr/local/bin:/usr/bin"],
                "Entrypoint": ["/usr/local/bin/start-agent"],
            },
            "history": history,
            "rootfs": {"type": "layers", "diff_ids": diff_ids},
        }
    ).encode()
    config_name = hashlib.sha256(config).hexdigest() + ".json"
    out.member(config_name, config)
    manifest = [{"Config": config_name, "RepoTags": ["bench:latest"], "Layers": names}]
    out.member("manifest.json", json.dumps(manifest).encode())
    out.close()
    return {"bytes": path.stat().st_size}


def _run(argv: list[str], *, shell: bool = False) -> tuple[float, int, str]:
    """Wall seconds, peak RSS (KiB, from GNU time: the child and the descendants it waited
    for, measured from a small process so no parent memory is counted), stdout."""
    cmd = ["bash", "-c", argv[0]] if shell else argv
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run(
            ["/usr/bin/time", "-o", rss.name, "-f", "%M", *cmd],
            stdout=subprocess.PIPE,
            check=False,
        )
        elapsed = time.perf_counter() - start
        peak = int(rss.read().strip().splitlines()[-1])
    if proc.returncode not in (0, 1, 3):  # 3: a source failed (reported, still timed)
        raise SystemExit(f"{argv} exited {proc.returncode}")
    return elapsed, peak, proc.stdout.decode(errors="replace")


def _cli_works(image: Path) -> bool:
    exe = VENV_BIN / "agentguard"
    if not exe.exists():
        return False
    proc = subprocess.run(
        [str(exe), "inspect", "--kind", "archive", "--format", "json", str(image)],
        capture_output=True,
        check=False,
    )
    return proc.returncode in (0, 1, 3) and proc.stdout.startswith(b"{")


def bench(image: Path, runs: int) -> dict[str, float | int | str]:
    """Best of ``runs`` for each command; the commands take turns within a run, so a busy
    machine slows all of them alike."""
    subprocess.run(["cat", str(image)], stdout=subprocess.DEVNULL, check=True)  # warm cache
    py = str(VENV_BIN / "python")
    commands: dict[str, tuple[list[str], bool]] = {
        "floor": ([FLOOR.format(img=image)], True),
        "reader": ([py, "-m", "agentguard.inspect.image", str(image)], False),
        "stream": ([py, "-m", "agentguard.inspect.image", "--stream", str(image)], False),
    }
    if _cli_works(image):
        cli = [str(VENV_BIN / "agentguard"), "inspect", "--kind", "archive", "-q", str(image)]
        commands["cli"] = (cli, False)
    results: dict[str, list[tuple[float, int, str]]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, (argv, shell) in commands.items():
            results[name].append(_run(argv, shell=shell))
    row: dict[str, float | int | str] = {}
    for name, got in results.items():
        row[f"{name}_s"] = min(r[0] for r in got)
        row[f"{name}_rss_mb"] = max(r[1] for r in got) / 1024
    summary = results["reader"][-1][2].strip()
    row["summary"] = summary.splitlines()[0] if summary else ""
    return row


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, help="where to write the images (default: a temp dir)")
    parser.add_argument("--sizes", default="1,3", help="image sizes in GB, comma-separated")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--keep", action="store_true", help="keep the generated images")
    args = parser.parse_args()
    byte_compile()
    root = args.dir or Path(tempfile.mkdtemp(prefix="agentguard-image-bench-"))
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    try:
        for size in [float(s) for s in args.sizes.split(",")]:
            image = root / f"image-{size:g}gb.tar"
            t = time.perf_counter()
            info = generate(image, size)
            print(
                f"generated {image.name}: {info['bytes'] / GB:.2f} GB "
                f"in {time.perf_counter() - t:.1f} s",
                file=sys.stderr,
            )
            row: dict[str, float | int | str] = {"size": f"{info['bytes'] / GB:.2f} GB"}
            row.update(bench(image, args.runs))
            found = re.search(r"(\d+) entries", str(row["summary"]))
            row["entries"] = int(found.group(1)) if found else "?"
            rows.append(row)
            if not args.keep:
                image.unlink()
    finally:
        if not args.keep and args.dir is None:
            shutil.rmtree(root, ignore_errors=True)
    print(
        "| saved image | entries | floor: GNU tar | reader | ratio | `agentguard inspect` | ratio "
        "| one-pass stream | peak RSS: floor / reader / CLI / stream |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        floor = float(r["floor_s"])
        cli = f"{r['cli_s']:.2f} s" if "cli_s" in r else "n/a"
        cli_ratio = f"{float(r['cli_s']) / floor:.2f}x" if "cli_s" in r else "n/a"
        cli_rss = f"{r['cli_rss_mb']:.0f}" if "cli_rss_mb" in r else "n/a"
        print(
            f"| {r['size']} | {r['entries']} | {floor:.2f} s | {r['reader_s']:.2f} s | "
            f"{float(r['reader_s']) / floor:.2f}x | {cli} | {cli_ratio} | {r['stream_s']:.2f} s | "
            f"{r['floor_rss_mb']:.0f} / {r['reader_rss_mb']:.0f} / {cli_rss} / "
            f"{r['stream_rss_mb']:.0f} MB |"
        )
    print(json.dumps(rows, indent=2), file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

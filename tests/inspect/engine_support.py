"""Building test images and containers on the real engine, and running `agentguard inspect`.

Images are built locally (`docker build` from `FROM scratch` with Debian's static busybox
copied in for a shell, or `docker import` of a tar the test writes); nothing is pulled.
Every name starts with ``agtest-`` plus a random suffix, and :class:`Made` removes what a
test created.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import tarfile
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from agentguard.cli import app


def busybox() -> Path:
    """A static busybox (Debian's busybox-static; scripts/test installs it) for a shell."""
    found = shutil.which("busybox")
    assert found, "busybox not found on PATH: install busybox-static (scripts/test does)"
    return Path(found)


SITE = "/usr/local/lib/python3.12/site-packages"


def unique(prefix: str) -> str:
    return f"agtest-{prefix}-{uuid.uuid4().hex[:8]}"


def metadata(name: str, version: str, requires: Iterable[str] = ()) -> str:
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\n"


def dist_info(name: str, version: str) -> str:
    return f"{name.replace('-', '_')}-{version}.dist-info"


def write_tree(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data.encode() if isinstance(data, str) else data)


@dataclass
class Made:
    """What a test created on the engine; removed at the end, containers first."""

    client: Any
    images: list[str] = field(default_factory=list)
    containers: list[str] = field(default_factory=list)

    def build(self, tag: str, context: Path, dockerfile: str) -> Any:
        shutil.copy(busybox(), context / "busybox")
        (context / "Dockerfile").write_text(dockerfile)
        image, _logs = self.client.images.build(path=str(context), tag=tag, rm=True, forcerm=True)
        self.images.append(tag)
        return image

    def import_tar(self, tag: str, files: Mapping[str, str | bytes], changes: list[str]) -> Any:
        """`docker import` of a tar written here (one layer), with Dockerfile-style changes."""
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tf:
            dirs: set[str] = set()
            for rel, data in sorted(files.items()):
                parts = rel.split("/")[:-1]
                for i in range(1, len(parts) + 1):
                    d = "/".join(parts[:i])
                    if d not in dirs:
                        dirs.add(d)
                        info = tarfile.TarInfo(d)
                        info.type = tarfile.DIRTYPE
                        info.mode = 0o755
                        tf.addfile(info)
                blob = data.encode() if isinstance(data, str) else data
                info = tarfile.TarInfo(rel)
                info.size = len(blob)
                info.mode = 0o755 if rel.endswith("busybox") else 0o644
                tf.addfile(info, io.BytesIO(blob))
        repo, _, version = tag.partition(":")
        self.client.api.import_image_from_data(
            buf.getvalue(), repository=repo, tag=version or "latest", changes=changes
        )
        self.images.append(tag)
        return self.client.images.get(tag)

    def container(self, image: str, **kwargs: Any) -> Any:
        c = self.client.containers.create(image, **kwargs)
        self.containers.append(c.id)
        return c

    def cleanup(self) -> None:
        import docker.errors

        for cid in self.containers:
            with contextlib.suppress(docker.errors.NotFound):
                self.client.containers.get(cid).remove(force=True)
        for tag in reversed(self.images):
            with contextlib.suppress(docker.errors.NotFound):
                self.client.images.remove(tag, force=True)


def layers_of(client: Any, ref: str) -> list[str]:
    """The image's diff_ids, base first (what the reader names layers by)."""
    return list(client.images.get(ref).attrs["RootFS"]["Layers"])


def steps_of(client: Any, ref: str) -> list[str]:
    """`created_by` of every history step, oldest first."""
    return [h["CreatedBy"] for h in reversed(client.api.history(ref))]


def inspect_cli(*args: str | Path, env: Mapping[str, str] | None = None) -> Result:
    merged = {"NO_COLOR": "1", **(env or {})}
    return CliRunner().invoke(app, ["inspect", *(str(a) for a in args)], env=merged)


def report_of(result: Result) -> dict[str, Any]:
    assert result.stdout.startswith("{"), (result.exit_code, result.stdout, result.stderr)
    return dict(json.loads(result.stdout))


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    assert host.startswith("unix://"), f"these tests bind-mount the engine's socket, not {host}"
    return host[len("unix://") :]


def findings_of(report: Mapping[str, Any], *rules: str) -> list[dict[str, Any]]:
    out = []
    for f in report["findings"]:
        if f["rule_id"] in rules:
            f = dict(f)
            f.pop("fingerprint")
            out.append(f)
    return out

"""An sdist-only package whose build backend leaves a mark when it runs.

The backend is in-tree (``backend-path``) and needs nothing from an index, so a resolver
that decides to build it does so offline, and the mark file proves whether package code ran.
"""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

_BACKEND = """
import os
import zipfile

MARK = {mark!r}
META = "Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
INFO = "{dist}-{version}.dist-info"


def _mark(hook):
    with open(MARK, "a") as fh:
        fh.write(hook + "\\n")


def get_requires_for_build_wheel(config_settings=None):
    _mark("get_requires_for_build_wheel")
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _mark("prepare_metadata_for_build_wheel")
    os.makedirs(os.path.join(metadata_directory, INFO), exist_ok=True)
    with open(os.path.join(metadata_directory, INFO, "METADATA"), "w") as fh:
        fh.write(META)
    return INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _mark("build_wheel")
    name = "{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(os.path.join(wheel_directory, name), "w") as zf:
        zf.writestr(INFO + "/METADATA", META)
        zf.writestr(INFO + "/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        zf.writestr(INFO + "/RECORD", "")
    return name
"""


def build_marking_sdist(out_dir: Path, name: str, version: str, mark: Path) -> Path:
    """``<dist>-<version>.tar.gz`` with dynamic dependencies (so metadata needs a build)."""
    dist = name.replace("-", "_")
    base = f"{dist}-{version}"
    files = {
        "pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "markbackend"\nbackend-path = ["."]\n\n'
            f'[project]\nname = "{name}"\nversion = "{version}"\ndynamic = ["dependencies"]\n'
        ),
        "markbackend.py": _BACKEND.format(mark=str(mark), name=name, version=version, dist=dist),
        "PKG-INFO": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
    }
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        for rel, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(f"{base}/{rel}")
            info.size, info.mtime = len(data), 0
            tf.addfile(info, io.BytesIO(data))
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{base}.tar.gz"
    path.write_bytes(buf.getvalue())
    return path

"""Build small real wheels and a PEP 503 simple index on disk, for deterministic resolution."""

from __future__ import annotations

import base64
import hashlib
import io
import zipfile
from collections.abc import Iterable, Mapping
from pathlib import Path

from packaging.utils import canonicalize_name

# A fixed timestamp so that the same wheel is byte-identical on every run.
_DATE = (2024, 1, 1, 0, 0, 0)


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def build_wheel(
    out_dir: Path,
    name: str,
    version: str,
    requires: Iterable[str] = (),
    *,
    extras: Mapping[str, Iterable[str]] | None = None,
    requires_python: str | None = None,
    files: Mapping[str, str] | None = None,
    tag: str = "py3-none-any",
) -> Path:
    """Write ``name-version-<tag>.whl`` with the given Requires-Dist lines."""
    dist = name.replace("-", "_")
    info = f"{dist}-{version}.dist-info"
    meta = [
        "Metadata-Version: 2.1",
        f"Name: {name}",
        f"Version: {version}",
    ]
    if requires_python:
        meta.append(f"Requires-Python: {requires_python}")
    for extra in sorted(extras or {}):
        meta.append(f"Provides-Extra: {extra}")
    meta.extend(f"Requires-Dist: {r}" for r in requires)
    for extra, reqs in sorted((extras or {}).items()):
        meta.extend(f'Requires-Dist: {r} ; extra == "{extra}"' for r in reqs)
    contents: dict[str, bytes] = {
        f"{dist}/__init__.py": f'__version__ = "{version}"\n'.encode(),
        f"{info}/METADATA": ("\n".join(meta) + "\n").encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: agentguard-tests\nRoot-Is-Purelib: true\nTag: "
        + tag.encode()
        + b"\n",
    }
    for path, text in (files or {}).items():
        contents[path] = text.encode()
    record = "".join(f"{p},{_record_hash(d)},{len(d)}\n" for p, d in contents.items())
    record += f"{info}/RECORD,,\n"
    contents[f"{info}/RECORD"] = record.encode()
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{dist}-{version}-{tag}.whl"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for p, d in contents.items():
            zi = zipfile.ZipInfo(p, date_time=_DATE)
            zi.external_attr = 0o644 << 16
            zf.writestr(zi, d)
    path.write_bytes(buf.getvalue())
    return path


_BACKEND = """\
# An in-tree build backend that writes a mark file whenever it runs: running it is running
# the package's own code.
import pathlib, zipfile

MARK = pathlib.Path({mark!r})
META = "Metadata-Version: 2.1\\nName: {name}\\nVersion: {version}\\n"
INFO = "{dist}-{version}.dist-info"


def _mark(hook):
    with MARK.open("a") as fh:
        fh.write(hook + "\\n")


def get_requires_for_build_wheel(config_settings=None):
    _mark("get_requires_for_build_wheel")
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    _mark("prepare_metadata_for_build_wheel")
    d = pathlib.Path(metadata_directory) / INFO
    d.mkdir(parents=True, exist_ok=True)
    (d / "METADATA").write_text(META)
    return INFO


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    _mark("build_wheel")
    name = "{dist}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(pathlib.Path(wheel_directory) / name, "w") as zf:
        zf.writestr(INFO + "/METADATA", META)
        zf.writestr(INFO + "/WHEEL", "Wheel-Version: 1.0\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n")
        zf.writestr(INFO + "/RECORD", "")
    return name
"""


def build_marking_sdist(out_dir: Path, name: str, version: str, mark: Path) -> Path:
    """``name-version.tar.gz`` whose build backend (in the sdist) appends to ``mark`` on
    every hook it runs. Its dependencies are dynamic, so a resolver must run it to learn them."""
    import tarfile

    dist = name.replace("-", "_")
    root = f"{dist}-{version}"
    files = {
        f"{root}/pyproject.toml": (
            '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
            f'[project]\nname = "{name}"\nversion = "{version}"\ndynamic = ["dependencies"]\n'
        ),
        f"{root}/backend.py": _BACKEND.format(
            mark=str(mark), name=name, version=version, dist=dist
        ),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        for member, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(member)
            info.size = len(data)
            info.mtime = 1704067200
            tf.addfile(info, io.BytesIO(data))
    return path


def write_simple_index(wheel_dir: Path, index_dir: Path) -> str:
    """A PEP 503 index over the wheels and sdists in ``wheel_dir``; returns its file:// URL."""
    by_name: dict[str, list[Path]] = {}
    for whl in sorted([*wheel_dir.glob("*.whl"), *wheel_dir.glob("*.tar.gz")]):
        by_name.setdefault(canonicalize_name(whl.name.split("-")[0]), []).append(whl)
    index_dir.mkdir(parents=True, exist_ok=True)
    root_links = []
    for name, wheels in sorted(by_name.items()):
        (index_dir / name).mkdir(exist_ok=True)
        links = []
        for whl in wheels:
            sha = hashlib.sha256(whl.read_bytes()).hexdigest()
            links.append(f'<a href="{whl.resolve().as_uri()}#sha256={sha}">{whl.name}</a><br/>')
        (index_dir / name / "index.html").write_text(
            "<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n"
        )
        root_links.append(f'<a href="{name}/">{name}</a><br/>')
    (index_dir / "index.html").write_text(
        "<html><body>\n" + "\n".join(root_links) + "\n</body></html>\n"
    )
    return index_dir.resolve().as_uri()


def build_static_sdist(
    out_dir: Path,
    name: str,
    version: str,
    requires: Iterable[str] = (),
    *,
    metadata_version: str = "2.2",
) -> Path:
    """``name-version.tar.gz`` with a top-level PKG-INFO (and no build code at all)."""
    import tarfile

    dist = name.replace("-", "_")
    root = f"{dist}-{version}"
    meta = "\n".join(
        [
            f"Metadata-Version: {metadata_version}",
            f"Name: {name}",
            f"Version: {version}",
            *(f"Requires-Dist: {r}" for r in requires),
        ]
    )
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{root}.tar.gz"
    with tarfile.open(path, "w:gz") as tf:
        data = (meta + "\n").encode()
        info = tarfile.TarInfo(f"{root}/PKG-INFO")
        info.size = len(data)
        info.mtime = 1704067200
        tf.addfile(info, io.BytesIO(data))
    return path

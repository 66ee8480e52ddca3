"""Root filesystems for test images, assembled from this machine's own programs (no
registry): a binary, the shared libraries `ldd` names, and for Python the standard-library
modules a probe run imports, each at its own path."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterable
from pathlib import Path


def copy_into(rootfs: Path, files: Iterable[Path]) -> None:
    for src in files:
        dest = rootfs / str(src).lstrip("/")
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)


def libraries(binary: str) -> set[Path]:
    out = subprocess.run(["ldd", binary], capture_output=True, text=True, check=True).stdout
    return {Path(p) for p in re.findall(r"(/\S+\.so[.\d]*)", out)}


def python_binary() -> str:
    return str(os.path.realpath(sys._base_executable))  # type: ignore[attr-defined]


def stdlib_dir() -> Path:
    return Path(sysconfig.get_paths()["stdlib"])


def python_files(imports: str) -> set[Path]:
    """The interpreter, its libraries and the standard-library files ``imports`` loads."""
    probe = (
        imports + "\nimport sys\n"
        "print('\\n'.join('MOD ' + m.__file__ for m in list(sys.modules.values()) "
        "if getattr(m, '__file__', None)))\n"
    )
    run = subprocess.run(
        [python_binary(), "-I", "-c", probe], capture_output=True, text=True, check=True
    )
    stdlib = stdlib_dir()
    files = {Path(line[4:]) for line in run.stdout.splitlines() if line.startswith("MOD ")}
    keep = {f for f in files if stdlib in f.parents and "site-packages" not in f.parts}
    keep |= set((stdlib / "encodings").glob("*.py"))
    keep.add(stdlib / "os.py")
    python = python_binary()
    return {Path(python), *libraries(python), *keep}


def node_files() -> set[Path]:
    node = shutil.which("node")
    assert node, "node not found on PATH (Debian's nodejs)"
    real = os.path.realpath(node)
    return {Path(real), *libraries(real)}


_PIP_PROBE = """\
import atexit, os, sys
def _dump():
    with open(os.environ["MODS_OUT"], "w") as fh:
        fh.write("\\n".join(m.__file__ for m in list(sys.modules.values())
                            if getattr(m, "__file__", None)))
atexit.register(_dump)
from pip._internal.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def pip_files(wheels: Path, requirements: Path, scratch: Path) -> set[Path]:
    """The interpreter, its libraries and the standard-library files (extension modules with
    their own libraries) that a real ``pip install --no-index -r`` run loads, run here once."""
    mods = scratch / "mods.txt"
    subprocess.run(
        [
            python_binary(),
            "-c",
            _PIP_PROBE,
            "install",
            "--no-cache-dir",
            "--no-index",
            "--find-links",
            str(wheels),
            "--no-deps",
            "--require-hashes",
            "-r",
            str(requirements),
            "--target",
            str(scratch / "target"),
            "-q",
        ],
        check=True,
        env={**os.environ, "MODS_OUT": str(mods), "PYTHONPATH": str(pip_dir().parent)},
        capture_output=True,
    )
    stdlib = stdlib_dir()
    files = {Path(p) for p in mods.read_text().splitlines()}
    keep = {f for f in files if stdlib in f.parents and "site-packages" not in f.parts}
    keep |= set((stdlib / "encodings").glob("*.py"))
    keep.add(stdlib / "os.py")
    for ext in [f for f in keep if f.suffix == ".so"]:
        keep |= libraries(str(ext))
    python = python_binary()
    return {Path(python), *libraries(python), *keep}


def pip_dir() -> Path:
    """pip's package folder (this environment's, copied into an image's site-packages)."""
    import pip

    return Path(pip.__file__).parent


def site_packages() -> Path:
    """The interpreter's own site-packages path (what it puts on sys.path in an image)."""
    return stdlib_dir() / "site-packages"

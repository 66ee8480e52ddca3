"""The lock readers on files written by the real tools (tests/fixtures/existing_locks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentguard.lock.readers.interface import LockEdge, LockReadError
from agentguard.lock.readers.poetry_lock import PoetryLockReader
from agentguard.lock.readers.pylock import PylockReader
from agentguard.lock.readers.uv_lock import UvLockReader

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "existing_locks"

# name -> (version, wheel sha256, sdist sha256): the same on PyPI for every tool
PINS = {
    "anyio": (
        "4.6.2.post1",
        "6d170c36fba3bdd840c73d3868c1e777e33676a69c3a72cf0a0d5d6d8009b61d",
        "4c8bc31ccdb51c7f7bd251f51c609e038d63e34219b44aa86e47576389880b4c",
    ),
    "exceptiongroup": (
        "1.2.2",
        "3111b9d131c238bec2f8f516e123e14ba243563fb135d3fe885990585aa7795b",
        "47c2edf7c6738fafb49fd34290706d1a1a2f4d1c6df275526b62cbb4aa5393cc",
    ),
    "idna": (
        "3.10",
        "946d195a0d259cbba61165e88e65941f16e9b36ea6ddb97f00452bae8b1287d3",
        "12f65c9b470abda6dc35cf8e63cc574b1c52b11df2c86030af0ac09b01b13ea9",
    ),
    "sniffio": (
        "1.3.1",
        "2f6da418d1f1e0fddd844478f41680e794e6051915791a034ff65e5f100525a2",
        "f4324edc670a0f49750a81b895f35c3adb843cca46f0530f79fc1babb23789dc",
    ),
    "typing-extensions": (
        "4.12.2",
        "04e5ca0351e0f3f85c6853954072df659d0d13fac324d0072316b67d7794700d",
        "1a7ead55c7e559dd4dee8856e3a88b41225abfe1ce8df57b7c13915fe121ffb8",
    ),
}


def _read(folder: str, name: str):  # type: ignore[no-untyped-def]
    reader = {"uv.lock": UvLockReader(), "poetry.lock": PoetryLockReader()}.get(
        name, PylockReader()
    )
    return reader.read((FIXTURES / folder / name).read_text(encoding="utf-8"), name)


def _facts(lock) -> set[tuple[str, str, tuple[str, ...]]]:  # type: ignore[no-untyped-def]
    return {(p.name, p.version, p.hashes) for p in lock.packages()}


def _expected(*names: str, sdist: bool = True) -> set[tuple[str, str, tuple[str, ...]]]:
    out = set()
    for n in names:
        version, wheel, sd = PINS[n]
        hashes = {f"sha256:{wheel}", *([f"sha256:{sd}"] if sdist else [])}
        out.add((n, version, tuple(sorted(hashes))))
    return out


def test_uv_lock_poetry_lock_and_uv_pylock_read_into_the_same_pins() -> None:
    everything = _expected(*PINS)
    assert _facts(_read("anyio", "uv.lock")) == everything
    assert _facts(_read("anyio", "poetry.lock")) == everything
    assert _facts(_read("anyio-uv-pylock", "pylock.toml")) == everything


def test_pip_pylock_reads_the_pins_pip_locked_for_its_interpreter() -> None:
    lock = _read("anyio-pip-pylock", "pylock.toml")
    # pip locks for Python 3.11 (no backports) and only wheels; the project is a local pin.
    assert _facts(lock) == _expected("anyio", "idna", "sniffio", sdist=False)
    assert [(p.name, p.source) for p in lock.pins if p.local] == [("fixture-bot", "local")]
    assert lock.created_by == "pip"


def test_markers_of_marker_only_packages() -> None:
    uv_pylock = {p.name: p.marker for p in _read("anyio-uv-pylock", "pylock.toml").pins}
    poetry = {p.name: p.marker for p in _read("anyio", "poetry.lock").pins}
    assert uv_pylock["exceptiongroup"] == 'python_full_version < "3.11"'
    assert poetry["exceptiongroup"] == 'python_version == "3.10"'
    assert uv_pylock["idna"] is None and poetry["idna"] is None


def test_uv_and_poetry_record_the_same_edges_poetry_with_ranges() -> None:
    uv = _read("anyio", "uv.lock")
    poetry = _read("anyio", "poetry.lock")
    pairs = {("anyio", "exceptiongroup"), ("anyio", "idna"), ("anyio", "sniffio")}
    pairs.add(("anyio", "typing-extensions"))
    assert {(e.parent, e.child) for e in uv.edges if e.parent != "fixture-bot"} == pairs
    assert {(e.parent, e.child) for e in poetry.edges} == pairs
    assert {e for e in poetry.edges if e.parent == "anyio"} == {
        LockEdge("anyio", "4.6.2.post1", "exceptiongroup", 'python_version < "3.11"', ">=1.0.2"),
        LockEdge("anyio", "4.6.2.post1", "idna", None, ">=2.8"),
        LockEdge("anyio", "4.6.2.post1", "sniffio", None, ">=1.1"),
        LockEdge("anyio", "4.6.2.post1", "typing-extensions", 'python_version < "3.11"', ">=4.1"),
    }
    # uv records the project's own requirements as it locked them
    assert uv.root_requires == (
        "anyio==4.6.2.post1",
        "exceptiongroup==1.2.2 ; python_full_version < '3.11'",
        "idna==3.10",
        "sniffio==1.3.1",
        "typing-extensions==4.12.2 ; python_full_version < '3.11'",
    )


def _lines(name: str) -> list[str]:
    return (FIXTURES / "anyio" / name).read_text(encoding="utf-8").splitlines(keepends=True)


@pytest.mark.parametrize(
    ("cut", "message"),
    [
        # inside an array: not TOML any more
        (12, "uv.lock:12: not valid TOML (Invalid value); the file ends early"),
        # after a package's source: valid TOML, but a registry package without files
        (23, "uv.lock:20: exceptiongroup==1.2.2 names no wheel or sdist (cut short?)"),
        # between packages: a dependency names a package the file no longer holds
        (49, "uv.lock:5: anyio depends on idna, which the lock does not hold (cut short?)"),
        # after a package's header and name
        (60, "uv.lock:59: sniffio has no version (cut short?)"),
    ],
)
def test_a_cut_short_uv_lock_is_an_error_with_file_and_line(cut: int, message: str) -> None:
    text = "".join(_lines("uv.lock")[:cut])
    with pytest.raises(LockReadError) as err:
        UvLockReader().read(text, "uv.lock")
    assert str(err.value) == message
    assert err.value.code == "lockfile-invalid"


def test_an_empty_file_is_not_an_empty_lock() -> None:
    with pytest.raises(LockReadError, match=r"^uv.lock:1: no lock `version`"):
        UvLockReader().read("", "uv.lock")
    with pytest.raises(LockReadError, match=r"^poetry.lock: no \[metadata\] content-hash"):
        PoetryLockReader().read("", "poetry.lock")
    with pytest.raises(LockReadError, match=r"^pylock.toml: not a valid PEP 751 lock"):
        PylockReader().read("", "pylock.toml")

"""The table of regular-expression programs (agentguard/regexcode.py): the patterns are the
ones Python's compiler makes, a second run compiles none of agentguard's, a pattern that
may warn or is compiled for debugging is never kept, and a table that is not one (or a
program the engine refuses) is never used."""

from __future__ import annotations

import marshal
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from agentguard import codetable, regexcode
from tests.codetable_support import env, inspect, plant_and_rerun, sealed, table_file, written

_PATTERNS: list[tuple[str | bytes, int]] = [
    (r"(?P<name>--?[A-Za-z][A-Za-z0-9_.-]*)[\"']?(?:=|\s*,\s*|\s+)", 0),
    (r"(?<![^\s\"'\[(,=])(?P<n>x)(?P=n)", 0),
    (r"tok|secret|pass|pwd|key", re.IGNORECASE),
    (r"(?x) a  b  # a comment", 0),
    (r"^\s*(\w+)\s*=\s*(.*)$", re.MULTILINE),
    (r"[\u00e9\u4e2d]+\d{2,5}?", 0),
    (r"(?=a)a(?!b)(?<=a)", 0),
    (r"\bfoo\b.*?bar", re.DOTALL | re.ASCII),
    (rb"m[ \tp](?:(?<=from[ \t])[ \t]*(?:mcp|claude)|(?<=imp)ort[ \t]+(?:mcp))", 0),
    (rb"[\x80-\xff]+", 0),
    (rb"(?i)agentguard", 0),
    (r"(?i:Bearer)\s+(?P<tok>[^\s]+)", 0),
]


def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> codetable.Table[object, object]:
    """A table of its own (loaded, empty, kept under tmp_path) in place of the process's."""
    table: codetable.Table[object, object] = codetable.Table(
        "regex-programs",
        b"test",
        regexcode._valid_key,
        regexcode._whole,
        verify=regexcode._verified,  # type: ignore[arg-type]
    )
    table.path = str(tmp_path / "regex-programs.bin")
    table.loaded = True
    monkeypatch.setattr(regexcode, "_TABLE", table)
    return table


def kept(pattern: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple:  # type: ignore[type-arg]
    """The program the table keeps for ``pattern`` (compiled through a table of its own)."""
    table = _fresh(monkeypatch, tmp_path)
    regexcode._compile(pattern, 0)
    return table.entries[(pattern, 0)]  # type: ignore[return-value]


def _compiler() -> object:
    return getattr(re, "_compiler", None) or re.sre_compile  # type: ignore[attr-defined]


def test_installed_when_agentguard_is_imported() -> None:
    assert _compiler().compile is regexcode._compile  # type: ignore[attr-defined]


@pytest.mark.parametrize(("pattern", "flags"), _PATTERNS)
def test_the_patterns_are_the_ones_python_compiles(
    pattern: str | bytes, flags: int, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    table = _fresh(monkeypatch, tmp_path)
    flags = int(flags)  # (re._compile hands the compiler an int)
    theirs = regexcode._ORIGINAL(pattern, flags)
    missed = regexcode._compile(pattern, flags)  # (compiled by Python's compiler, kept)
    assert table.entries.keys() == {(pattern, flags)}
    hit = regexcode._compile(pattern, flags)  # (from the table)
    for ours in (missed, hit):
        assert ours == theirs
        assert (ours.pattern, ours.flags, ours.groups) == (
            theirs.pattern,
            theirs.flags,
            theirs.groups,
        )
        assert dict(ours.groupindex) == dict(theirs.groupindex)
    sample = "x --token=abc Bearer t0k foo bar \u00e9\u00e912 ab c"
    text: str | bytes = sample.encode() if isinstance(pattern, bytes) else sample
    assert [m.span() for m in hit.finditer(text)] == [m.span() for m in theirs.finditer(text)]  # type: ignore[arg-type]


def test_what_the_table_holds_survives_a_write_and_a_read(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    table = _fresh(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    for pattern, flags in _PATTERNS:
        regexcode._compile(pattern, int(flags))
    assert table.save()
    again = {k: marshal.loads(v) for k, v in table.load().items()}
    assert again == table.entries and len(again) == len(_PATTERNS)
    for (pattern, flags), program in again.items():
        assert regexcode._sre.compile(pattern, *program) == regexcode._ORIGINAL(pattern, flags)


@pytest.mark.parametrize(
    ("pattern", "warning"),
    [
        ("[[a]", FutureWarning),  # a set that may nest
        ("[a||b]", FutureWarning),  # a set union to be
        ("[a&&b]", FutureWarning),
        ("(a)(?(+1)b|c)", DeprecationWarning),  # a conditional group's reference, not digits
    ],
)
def test_a_pattern_that_may_warn_is_never_kept_and_warns_each_time(
    pattern: str, warning: type[Warning], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Each compile warns (or fails) as Python's does, every time; it is never kept. (A
    conditional group's `+1` warns under 3.11 and 3.12, is an error from 3.13 on.)"""
    table = _fresh(monkeypatch, tmp_path)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        try:
            regexcode._ORIGINAL(pattern, 0)
            failed: str | None = None
        except re.error as exc:
            failed = str(exc)
    if failed is None and (warning is FutureWarning or sys.version_info >= (3, 11)):
        assert [w.category for w in theirs] == [warning]  # (3.10 reads `+1` silently)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            if failed is None:
                regexcode._compile(pattern, 0)
            else:
                with pytest.raises(re.error, match=re.escape(failed)):
                    regexcode._compile(pattern, 0)
        assert [w.category for w in seen] == [w.category for w in theirs]
    assert (pattern, 0) not in table.entries


def test_a_debug_compile_and_a_parsed_pattern_are_the_compilers_alone(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table = _fresh(monkeypatch, tmp_path)
    regexcode._compile("ab+", re.DEBUG)
    assert "LITERAL" in capsys.readouterr().out  # (the compiler's own dump, each time)
    parser = getattr(re, "_parser", None) or re.sre_parse  # type: ignore[attr-defined]
    parsed = parser.parse("a|b", 0)
    assert regexcode._compile(parsed, 0).match("b")  # (re.Scanner's way: no text to key by)
    assert not table.entries


def test_a_program_the_engine_refuses_is_compiled_again_and_dropped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    table = _fresh(monkeypatch, tmp_path)
    for bad in ([999999, 1, 2], ["x"], [2**70]):
        table.entries[("ab+c", 0)] = (32, bad, 0, {}, (None,))  # type: ignore[assignment]
        got = regexcode._compile("ab+c", 0)
        assert got == regexcode._ORIGINAL("ab+c", 0) and got.match("abbc")
        assert table.entries[("ab+c", 0)] != (32, bad, 0, {}, (None,))  # (compiled anew)


# --- across processes: each test keeps its tables under its own bytecode prefix ---------

_COUNT = (
    "import agentguard.regexcode as r, agentguard.cli, agentguard.commands.inspect;"
    "import agentguard.engine.inspect_run, agentguard.redact, agentguard.policy;"
    "t = r._TABLE; print(t.compiled, len(t.entries) - t.compiled, t.path)"
)


def _count(prefix: Path) -> tuple[int, int, str]:
    ran = subprocess.run(
        [sys.executable, "-c", _COUNT], env=env(prefix), capture_output=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-2000:]
    compiled, loaded, path = ran.stdout.decode().split(maxsplit=2)
    return int(compiled), int(loaded), path.strip()


def test_a_second_run_compiles_none_of_its_patterns(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    compiled, loaded, _ = _count(prefix)
    assert loaded == 0 and compiled > 30  # (no table yet: every pattern compiled)
    inspect(prefix, empty)
    table = table_file(prefix, "regex-programs")
    assert table.is_file()
    compiled, loaded, path = _count(prefix)
    assert loaded > 30 and compiled == 0
    assert Path(path) == table  # (where Python keeps agentguard's own bytecode)


def test_no_table_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    inspect(prefix, empty, write=False)
    assert not table_file(prefix, "regex-programs").exists()


def test_both_tables_on_disk_load_whatever_is_imported_first(tmp_path: Path) -> None:
    """A table is read in the middle of the import that first compiles a pattern or makes a
    record class (pathlib's own, a reader's): its read imports nothing then. Seen when a
    reader module was imported first with both tables written."""
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    inspect(prefix, empty)
    for first in ("agentguard.inspect.project.python_agents", "pathlib", "agentguard.lock.early"):
        code = (
            f"import agentguard, {first}, agentguard.classcode as c, agentguard.regexcode as r;"
            "import agentguard.policy;"
            "print(len(c._TABLE.stored) > 50, len(r._TABLE.stored) > 50)"
        )
        ran = subprocess.run(
            [sys.executable, "-c", code], env=env(prefix), capture_output=True, timeout=60
        )
        assert (ran.returncode, ran.stdout.split()) == (0, [b"True", b"True"]), ran.stderr


@pytest.mark.parametrize(
    "what",
    [
        "garbage",
        "another-version",
        "not-a-dict",
        "a-key-of-another-shape",
        "groups-not-its-names",
        "changed-on-disk",
        "a-link",
    ],
)
def test_a_table_that_is_not_one_is_never_used(tmp_path: Path, what: str) -> None:
    prefix, _, table = written(tmp_path, "regex-programs")
    good = table.read_bytes()
    assert regexcode._TABLE is not None
    head = regexcode._TABLE.head  # (this interpreter's: the same in the child)
    assert good.startswith(head)
    program = (32, [17], 0, {}, (None,))
    blobs = {
        "garbage": b"\x00" * 64,
        "another-version": head.replace(b"regex-programs ", b"regex-programs 0")
        + good[len(head) :],
        "not-a-dict": sealed(head, [("a", 0)]),
        "a-key-of-another-shape": sealed(head, {("a", 0, 1): program}),
        "groups-not-its-names": sealed(head, {("(x)", 0): (32, [17], 2**28, {}, (None,))}),
        "changed-on-disk": good[:-9] + bytes([good[-9] ^ 0x20]) + good[-8:],
    }
    plant_and_rerun(tmp_path, table, blobs.get(what), lambda: _count(prefix)[:2], 30)

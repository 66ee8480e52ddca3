"""The table of regular-expression programs (agentguard/regexcode.py): the patterns are the
ones Python's compiler makes, a second run compiles none of agentguard's, a pattern that
may warn or is compiled for debugging is never kept, and a table that is not one (or a
program the engine refuses) is never used."""

from __future__ import annotations

import marshal
import os
import re
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

from agentguard import codetable, regexcode

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
        regexcode._valid,
        verify=regexcode._verified,  # type: ignore[arg-type]
    )
    table.path = str(tmp_path / "regex-programs.bin")
    table.loaded = True
    monkeypatch.setattr(regexcode, "_TABLE", table)
    return table


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
    again = table.load()
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
    table = _fresh(monkeypatch, tmp_path)
    for _ in range(2):
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            regexcode._compile(pattern, 0)
        assert [w.category for w in seen] == [warning]
    assert not table.entries


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


def _env(prefix: Path, *, write: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(prefix)
    if not write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _table(prefix: Path) -> Path:
    found = list(prefix.rglob("regex-programs.*.bin"))
    assert len(found) <= 1, found
    return found[0] if found else prefix / "none"


def _inspect(prefix: Path, folder: Path, *, write: bool = True) -> None:
    ran = subprocess.run(
        [sys.executable, "-m", "agentguard", "inspect", str(folder), "--no-cache"],
        env=_env(prefix, write=write),
        capture_output=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-2000:]


def _count(prefix: Path) -> tuple[int, int, str]:
    ran = subprocess.run(
        [sys.executable, "-c", _COUNT], env=_env(prefix), capture_output=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-2000:]
    compiled, loaded, path = ran.stdout.decode().split(maxsplit=2)
    return int(compiled), int(loaded), path.strip()


def test_a_second_run_compiles_none_of_its_patterns(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    compiled, loaded, _ = _count(prefix)
    assert loaded == 0 and compiled > 30  # (no table yet: every pattern compiled)
    _inspect(prefix, empty)
    table = _table(prefix)
    assert table.is_file()
    compiled, loaded, path = _count(prefix)
    assert loaded > 30 and compiled == 0
    assert Path(path) == table  # (where Python keeps agentguard's own bytecode)


def test_no_table_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    _inspect(prefix, empty, write=False)
    assert not _table(prefix).exists()


def test_both_tables_on_disk_load_whatever_is_imported_first(tmp_path: Path) -> None:
    """A table is read in the middle of the import that first compiles a pattern or makes a
    record class (pathlib's own, a reader's): its read imports nothing then. Seen when a
    reader module was imported first with both tables written."""
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    _inspect(prefix, empty)
    for first in ("agentguard.inspect.project.python_agents", "pathlib", "agentguard.lock.early"):
        code = (
            f"import agentguard, {first}, agentguard.classcode as c, agentguard.regexcode as r;"
            "import agentguard.policy;"
            "print(len(c._TABLE.entries) > 50, len(r._TABLE.entries) > 50)"
        )
        ran = subprocess.run(
            [sys.executable, "-c", code], env=_env(prefix), capture_output=True, timeout=60
        )
        assert (ran.returncode, ran.stdout.split()) == (0, [b"True", b"True"]), ran.stderr


def _sealed(head: bytes, value: object) -> bytes:
    """A table file as agentguard writes one (its head, the checksum, the body) of ``value``."""
    body = marshal.dumps(value)
    return head + zlib.crc32(body).to_bytes(4, "little") + body


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
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    _inspect(prefix, empty)
    table = _table(prefix)
    good = table.read_bytes()
    assert regexcode._TABLE is not None
    head = regexcode._TABLE.head  # (this interpreter's: the same in the child)
    assert good.startswith(head)
    program = (32, [17], 0, {}, (None,))
    blobs = {
        "garbage": b"\x00" * 64,
        "another-version": head.replace(b"regex-programs ", b"regex-programs 0")
        + good[len(head) :],
        "not-a-dict": _sealed(head, [("a", 0)]),
        "a-key-of-another-shape": _sealed(head, {("a", 0, 1): program}),
        "groups-not-its-names": _sealed(head, {("(x)", 0): (32, [17], 2**28, {}, (None,))}),
        "changed-on-disk": good[:-9] + bytes([good[-9] ^ 0x20]) + good[-8:],
    }
    if what == "a-link":
        target = tmp_path / "elsewhere.bin"
        target.write_bytes(good)
        table.unlink()
        table.symlink_to(target)
    else:
        table.write_bytes(blobs[what])
    compiled, loaded, _ = _count(prefix)
    assert loaded == 0 and compiled > 30  # (every pattern compiled as without a table)
    _inspect(prefix, empty)  # a run works, and writes a good table again (never via a link)
    if what == "a-link":
        assert target.read_bytes() == good
    else:
        compiled, loaded, _ = _count(prefix)
        assert compiled == 0 and loaded > 30


# --- attacks on the table (each a hole found by trying; see the commit that adds them) ---


def test_the_screen_for_warnings_is_linear_in_the_pattern() -> None:
    """A Dockerfile's `ADD URL DEST` compiles `re.escape(DEST)` and a .dockerignore's
    `[...]` compiles its class: a scanned file chooses the text. The screen's `.*?` from
    every `[` to the end made it quadratic: one 60 KB line cost 14 s more per run."""
    import time

    pattern = "[" + "a[" * 20000 + "]"  # (a class Python compiles in milliseconds, no warning)
    started = time.perf_counter()
    regexcode._keepable(pattern)
    regexcode._keepable(re.escape("a[" * 20000))
    regexcode._keepable("[" + "a" * 4000 + "(?" * 20000)
    assert time.perf_counter() - started < 1.0


@pytest.mark.parametrize(
    "pattern",
    ["a(?t)", "a(?tx)", "(a)(?t)", "a|(?ut)", "x(?it)b"],  # (3.10's template flag, late)
)
def test_the_screen_for_warnings_knows_every_flag_the_parser_reads(
    pattern: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Python 3.10 reads `(?t)` as a global flag: late, it warns (DeprecationWarning) as
    the other letters do, and a program kept from it would never warn again. The screen
    takes the letters from the parser's own table (3.10's, as here), not from a list."""
    monkeypatch.setattr(regexcode, "_LATE_FLAGS", "aiLmsuxt")
    assert not regexcode._keepable(pattern)
    assert regexcode._keepable(pattern.replace("(?", "(?:"))  # (a group, not flags)


def test_the_late_flags_screened_are_the_parsers_own() -> None:
    parser = getattr(re, "_parser", None) or re.sre_parse  # type: ignore[attr-defined]
    if sys.version_info < (3, 11):
        assert set(regexcode._LATE_FLAGS) == set(parser.FLAGS) >= set("aiLmsuxt")
    else:  # (late global flags are an error from 3.11 on: nothing to screen)
        assert regexcode._LATE_FLAGS == ""


def test_a_warning_names_the_line_that_compiled_the_pattern() -> None:
    """The compiler's warnings count their stack level from the pattern's caller; the
    table's compile is one more frame, so the warning named re's own file, and Python's
    default filter, which shows a DeprecationWarning only for __main__, hid it."""
    pattern = "[[" + "warnsatthecaller" + "]"
    re.purge()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        re.compile(pattern)
    assert [w.category for w in seen] == [FutureWarning]
    assert seen[0].filename == __file__


def test_a_pattern_too_deep_for_the_stack_fails_on_every_run(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Kept when it once compiled (a higher recursion limit, a shallower stack), a
    pattern Python cannot parse at this depth came from the table without its
    RecursionError: a pattern with many parentheses is never kept."""
    table = _fresh(monkeypatch, tmp_path)
    deep = "(" * 600 + "a" + ")" * 600
    limit = sys.getrecursionlimit()
    try:
        sys.setrecursionlimit(20000)
        assert regexcode._compile(deep, 0).match("a")
    finally:
        sys.setrecursionlimit(limit)
    assert (deep, 0) not in table.entries
    with pytest.raises(RecursionError):
        regexcode._ORIGINAL(deep, 0)  # (what Python does here)
    with pytest.raises(RecursionError):
        regexcode._compile(deep, 0)
    shallow = "(" * regexcode.MAX_KEPT_GROUPS + "a" + ")" * regexcode.MAX_KEPT_GROUPS
    regexcode._compile(shallow, 0)
    assert (shallow, 0) in table.entries


def test_a_program_whose_group_count_is_not_its_names_is_never_used(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """`_sre` takes any group count up to 2**30 (2**29 from 3.11) with the same code: each
    match then allocates 2 * (groups + 1) marks (2**28: 4 GB and 2 s per match)."""
    table = _fresh(monkeypatch, tmp_path)
    pattern = "(?P<a>x)(y)"
    program = regexcode._program(pattern, 0)
    assert program is not None
    flags, code, _, names, numbers = program
    table.entries[(pattern, 0)] = (flags, code, 2**28, names, numbers)
    assert regexcode._compile(pattern, 0).groups == 2


def _child(prefix: Path, code: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-c", code], env=_env(prefix), capture_output=True, timeout=120, **kw
    )


def _table_path(prefix: Path) -> Path:
    ran = _child(prefix, "import agentguard.regexcode as r; print(r._TABLE.path)")
    assert ran.returncode == 0, ran.stderr
    return Path(ran.stdout.decode().strip())


def test_a_table_declaring_a_huge_tuple_is_ignored_not_fatal(tmp_path: Path) -> None:
    """marshal makes a tuple or list of the length its header claims before it reads one
    item: 110 bytes claiming 2**31 - 1 items raised MemoryError out of the first
    `re.compile` under a memory limit (and without one took 56 s and 16 GB), at every
    start, and a run that dies never writes the table again."""
    import resource
    import struct

    prefix = tmp_path / "pyc"
    path = _table_path(prefix)
    assert regexcode._TABLE is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        regexcode._TABLE.head
        + b"{"
        + marshal.dumps(("zz", 0))
        + b"("
        + struct.pack("<i", 2**31 - 1)
    )

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, 2 * 1024**3))

    ran = _child(
        prefix, "import agentguard, re; assert re.compile('x+y').match('xy')", preexec_fn=limit
    )
    assert ran.returncode == 0, ran.stderr.decode(errors="replace")[-800:]


def test_a_program_changed_by_one_word_never_crashes_a_run(tmp_path: Path) -> None:
    """`_sre` checks a program's code, but not enough: one word of a real program changed
    (found by mutating programs: many such, on 3.10 to 3.13) passes the check and the
    match reads out of bounds. A table changed on disk is trusted as a .pyc is, yet a
    table that is not the one agentguard wrote must be ignored, not kill every run."""
    prefix = tmp_path / "pyc"
    pattern = r"(?P<a>x+)(y|z)*?\1"
    program = regexcode._program(pattern, 0)
    assert program is not None
    flags, code, groups, names, numbers = program
    assert code[23] == 5  # (the same word on 3.10 to 3.13)
    code[23] = 0
    path = _table_path(prefix)
    assert regexcode._TABLE is not None
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        regexcode._TABLE.head + marshal.dumps({(pattern, 0): (flags, code, groups, names, numbers)})
    )
    ran = _child(prefix, f"import agentguard, re; re.compile({pattern!r}).search('xxyzyxx')")
    assert ran.returncode == 0, (ran.returncode, ran.stderr.decode(errors="replace")[-800:])


def test_an_entry_is_written_only_when_it_makes_pythons_own_pattern(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """What a run compiled is checked against Python's own compiler when the table is
    written: a program that makes another pattern (a compiler that works otherwise) is
    not kept."""
    table = _fresh(monkeypatch, tmp_path)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    regexcode._compile("ab+c", 0)
    regexcode._compile("x(y)z", 0)
    flags, code, groups, names, numbers = table.entries[("ab+c", 0)]
    table.entries[("ab+c", 0)] = (flags, [c for c in code if c != ord("b")], groups, names, numbers)
    assert table.save()
    assert set(table.load()) == {("x(y)z", 0)}

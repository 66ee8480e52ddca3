"""The table of regular-expression programs under attack (agentguard/regexcode.py): each
test a hole found by trying (linear screen, every warning kept out and named at its caller,
the stack's depth, a program's group count, a damaged table), fixed at its mechanism."""

from __future__ import annotations

import marshal
import re
import subprocess
import sys
import warnings
import zlib
from pathlib import Path

import pytest

from agentguard import regexcode
from tests.codetable_support import env, sealed, systemerror_bytes
from tests.test_regexcode import _fresh, kept

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


class _Text(str):
    """A pattern of a str subclass (an enum.StrEnum member is one)."""


@pytest.mark.parametrize(
    "call",
    [
        pytest.param(lambda p: re.sub(p, "", ""), id="sub"),
        pytest.param(lambda p: re.subn(p, "", ""), id="subn"),
        pytest.param(lambda p: re.split(p, ""), id="split"),
        pytest.param(lambda p: re.compile(p, True), id="bool-flags"),
        pytest.param(lambda p: re.compile(_Text(p)), id="str-subclass"),
    ],
)
def test_a_warning_names_the_caller_whatever_the_flags_and_patterns_type(
    call: object,
) -> None:
    """3.13's re.sub, re.subn and re.split hand re's compiler a flags of an int subclass
    (their keyword's sentinel); the table's compile handed such a flags, a bool, or a
    pattern of a str subclass to Python's compile from one frame deeper, so the warning
    named re's own file (and was hidden outside __main__)."""
    pattern = "[[" + "warnsatthecallertoo" + "]"
    re.purge()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        call(pattern)  # type: ignore[operator]
    found = [w for w in seen if w.category is FutureWarning]
    assert len(found) == 1
    assert found[0].filename == __file__


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
    pattern = "(?P<a>x)(y)"
    flags, code, _, names, numbers = kept(pattern, monkeypatch, tmp_path / "first")
    table = _fresh(monkeypatch, tmp_path)
    assert table.path is not None
    Path(table.path).write_bytes(
        sealed(table.head, {(pattern, 0): (flags, code, 2**28, names, numbers)})
    )
    table.loaded = False  # (read from the file: the entry is checked when asked for)
    assert regexcode._compile(pattern, 0).groups == 2
    assert table.entries[(pattern, 0)][2] == 2  # (the entry dropped: compiled anew)


def _child(prefix: Path, code: str, **kw: object) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(  # type: ignore[call-overload,no-any-return]
        [sys.executable, "-c", code], env=env(prefix), capture_output=True, timeout=120, **kw
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


def test_a_program_changed_by_one_word_never_crashes_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`_sre` checks a program's code, but not enough: one word of a real program changed
    (found by mutating programs: many such, on 3.10 to 3.13) passes the check and the
    match reads out of bounds. A table changed on disk is trusted as a .pyc is, yet a
    table that is not the one agentguard wrote must be ignored, not kill every run."""
    prefix = tmp_path / "pyc"
    pattern = r"(?P<a>x+)(y|z)*?\1"
    flags, code, groups, names, numbers = kept(pattern, monkeypatch, tmp_path / "first")
    monkeypatch.undo()
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


def test_an_entry_marshal_fails_with_systemerror_is_compiled_anew(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A value's read catches five of marshal's errors, not SystemError (a code object whose
    fields are of the wrong types: one byte of a method's kept code changed): it went out of
    `re.compile` itself instead of the entry being compiled anew as any value not of its
    kind is."""
    pattern = "a(b)c"
    table = _fresh(monkeypatch, tmp_path)
    assert table.path is not None
    code = marshal.dumps(compile("def f(self): return 1", "<string>", "exec"))
    body = marshal.dumps({(pattern, 0): systemerror_bytes(code)})
    Path(table.path).write_bytes(table.head + zlib.crc32(body).to_bytes(4, "little") + body)
    table.loaded = False
    assert regexcode._compile(pattern, 0).groups == 1  # (raised SystemError)
    assert table.entries[(pattern, 0)][2] == 1  # (compiled anew and kept)

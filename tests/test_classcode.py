"""The table of the methods dataclasses writes (agentguard/classcode.py): the same methods
as without it, a second run compiles none of agentguard's, and a table that is not one is
never used."""

from __future__ import annotations

import dataclasses
import marshal
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from agentguard import classcode, codetable
from tests.codetable_support import (
    env,
    inspect,
    plant_and_rerun,
    sealed,
    systemerror_bytes,
    table_file,
    written,
)

_RECORDS = textwrap.dedent(
    """
    from dataclasses import dataclass, field

    @dataclass(frozen=True)
    class Frozen:
        name: str
        tags: tuple[str, ...] = ()
        extra: dict[str, int] = field(default_factory=dict, compare=False)

    @dataclass(order=True)
    class Ordered:
        a: int
        b: "list[int]" = field(default_factory=list)

    @dataclass(eq=False, repr=False, kw_only=True)
    class Plain:
        x: int = 1
    """
)


def _made(with_table: bool) -> dict[str, type]:
    """The classes of ``_RECORDS``, made with the table's exec or with the builtin's."""
    namespace: dict[str, object] = {"__name__": __name__}
    saved = dataclasses.__dict__.pop("exec", None)
    try:
        if with_table:
            dataclasses.exec = classcode._exec  # type: ignore[attr-defined]
        exec(compile(_RECORDS, "records.py", "exec", dont_inherit=True), namespace)
    finally:
        dataclasses.__dict__.pop("exec", None)
        if saved is not None:
            dataclasses.exec = saved  # type: ignore[attr-defined]
    return {k: v for k, v in namespace.items() if isinstance(v, type)}


def _qualname(code: object) -> object:
    return getattr(code, "co_qualname", None)  # (3.11 on)


def test_installed_when_agentguard_is_imported() -> None:
    assert dataclasses.__dict__.get("exec") is classcode._exec


def test_the_methods_are_the_ones_dataclasses_writes() -> None:
    ours, theirs = _made(True), _made(False)
    compared = 0
    for name, cls in theirs.items():
        for attr, fn in vars(cls).items():
            code = getattr(fn, "__code__", None)
            if code is None:
                continue
            mine = vars(ours[name])[attr].__code__
            assert mine == code, (name, attr)
            assert (mine.co_filename, mine.co_flags, _qualname(mine)) == (
                code.co_filename,
                code.co_flags,
                _qualname(code),
            )
            compared += 1
    assert compared >= 12  # (__init__, __repr__, __eq__, __hash__, order, frozen setters)
    frozen = ours["Frozen"]("a", ("t",))
    assert frozen == ours["Frozen"]("a", ("t",), {"x": 1})  # (compare=False kept)
    assert hash(frozen) == hash(ours["Frozen"]("a", ("t",)))
    with pytest.raises(dataclasses.FrozenInstanceError):
        frozen.name = "b"  # type: ignore[misc]
    assert ours["Ordered"](1) < ours["Ordered"](2)
    with pytest.raises(TypeError):
        ours["Plain"](2)  # (keyword-only)


def test_other_uses_of_exec_are_the_builtins() -> None:
    space: dict[str, object] = {}
    classcode._exec(compile("y = 2", "<t>", "exec"), space)
    classcode._exec(b"z = 3", space)
    assert (space["y"], space["z"]) == (2, 3)


# --- across processes: each test keeps its table under its own bytecode prefix ----------

# What importing the CLI compiles: one text per method, or per class from 3.13 on (37 texts)
MANY = 100 if sys.version_info < (3, 13) else 30


_COUNT = (
    "import agentguard.classcode as c, agentguard.cli, agentguard.commands.inspect;"
    "import agentguard.engine.inspect_run, agentguard.report.text;"
    "t = c._TABLE; print(t.compiled, len(t.entries) - t.compiled, t.path)"
)


def _python(code: str, prefix: Path) -> bytes:
    """What ``python -c code`` prints, its table under ``prefix``."""
    ran = subprocess.run(
        [sys.executable, "-c", code], env=env(prefix), capture_output=True, timeout=60, check=True
    )
    return ran.stdout


def _count(prefix: Path) -> tuple[int, int, str]:
    compiled, loaded, path = _python(_COUNT, prefix).decode().split(maxsplit=2)
    return int(compiled), int(loaded), path.strip()


def test_a_second_run_compiles_none_of_its_records(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    assert _count(prefix)[1] == 0  # (no table yet: every method compiled)
    inspect(prefix, empty)
    table = table_file(prefix, "dataclass-methods")
    assert table.is_file()
    compiled, loaded, path = _count(prefix)
    assert loaded > MANY and compiled == 0
    assert Path(path) == table  # (where Python keeps agentguard's own bytecode)
    before = table.stat().st_mtime_ns
    inspect(prefix, empty)
    assert table.stat().st_mtime_ns == before  # (nothing new: not written again)


def test_no_table_is_written_where_python_writes_no_bytecode(tmp_path: Path) -> None:
    prefix, empty = tmp_path / "pyc", tmp_path / "empty"
    empty.mkdir()
    inspect(prefix, empty, write=False)
    assert not table_file(prefix, "dataclass-methods").exists()


@pytest.mark.parametrize(
    "what",
    [
        "garbage",
        "truncated",
        "another-magic",
        "not-a-dict",
        "values-not-marshalled-apart",
        "a-value-not-code",
        "code-named-otherwise",
        "too-large",
        "changed-on-disk",
        "a-link",
    ],
)
def test_a_table_that_is_not_one_is_never_used(tmp_path: Path, what: str) -> None:
    prefix, _, table = written(tmp_path, "dataclass-methods")
    good = table.read_bytes()
    assert classcode._TABLE is not None
    head = good[: len(classcode._TABLE.head)]
    evil = compile("import os; os.environ['PWNED'] = '1'", "<string>", "exec")
    source = "def __create_fn__():\n def __init__(self): pass\n return __init__"
    blobs = {
        "garbage": b"\x00" * 64,
        "truncated": good[: len(good) // 2],
        "another-magic": head[:-4] + b"\x00\x00\x0d\x0a" + good[len(head) :],
        "not-a-dict": sealed(head, [evil]),
        # (the whole table unmarshalled at once, as before version 2: not a table of this kind)
        "values-not-marshalled-apart": _whole_body(head, {source: evil}),
        "a-value-not-code": sealed(head, {source: "x"}),
        "code-named-otherwise": sealed(head, {source: compile("1", "evil.py", "exec")}),
        "too-large": sealed(head, {source: evil}) + b"\x00" * codetable.MAX_BYTES,
        "changed-on-disk": good[:-9] + bytes([good[-9] ^ 0x20]) + good[-8:],
    }
    plant_and_rerun(tmp_path, table, blobs.get(what), lambda: _count(prefix)[:2], MANY)


def _whole_body(head: bytes, value: object) -> bytes:
    body = marshal.dumps(value)
    return head + zlib.crc32(body).to_bytes(4, "little") + body


def _table_at(path: Path) -> codetable.Table[str, object]:
    table: codetable.Table[str, object] = codetable.Table(
        "dataclass-methods", b"test", classcode._valid_key, classcode._valid_value
    )
    table.path = str(path)
    return table


@pytest.mark.parametrize(
    "bad",
    [b"\xff\x00", marshal.dumps("x"), marshal.dumps(compile("1", "evil.py", "exec")), b""],
    ids=["not-marshal", "not-code", "code-named-otherwise", "empty"],
)
def test_one_bad_entry_is_compiled_anew_and_the_others_still_serve(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: bytes
) -> None:
    """A table's values are unmarshalled one by one, when asked for: one that is not of
    its kind is compiled as without a table and written again as compiled; the others
    serve as kept."""
    good = "def __create_fn__():\n def f(self): return 1\n return f"
    other = "def __create_fn__():\n def g(self): return 2\n return g"
    path = tmp_path / "dataclass-methods.bin"
    table = _table_at(path)
    raw = {good: marshal.dumps(compile(good, "<string>", "exec", dont_inherit=True)), other: bad}
    body = marshal.dumps(raw)
    path.write_bytes(table.head + zlib.crc32(body).to_bytes(4, "little") + body)
    assert table.get(good) is not None and table.compiled == 0
    assert table.get(other) is None and other not in table.stored
    monkeypatch.setattr(classcode, "_TABLE", table)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    space: dict[str, object] = {}
    classcode._exec(other, space)
    assert callable(space["__create_fn__"]) and table.compiled == 2  # (dropped, compiled anew)
    assert table.save()
    again = _table_at(path)
    assert set(again.load()) == {good, other}
    code = again.get(other)
    assert isinstance(code, type(compile("1", "<string>", "exec"))) and again.compiled == 0


def test_a_forked_reader_writes_no_table(tmp_path: Path) -> None:
    prefix = tmp_path / "pyc"
    script = textwrap.dedent(
        """
        import dataclasses, os, sys
        import agentguard.classcode as c
        @dataclasses.dataclass
        class New:
            only_here_1f3a: int
        pid = os.fork()
        if pid == 0:
            os._exit(3 if c._TABLE.save() else 0)
        _, status = os.waitpid(pid, 0)
        print(os.waitstatus_to_exitcode(status), c._TABLE.save())
        """
    )
    assert _python(script, prefix).split() == [b"0", b"True"]  # (the child: no; the parent: yes)


def test_a_table_over_its_budget_keeps_what_the_run_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A table that only grew (texts of earlier releases' classes, never used again) is
    written again with what this run used, never left as it was nor over the read cap."""
    table = codetable.Table("dataclass-methods", b"1", classcode._valid_key, classcode._valid_value)
    path = tmp_path / "dataclass-methods.bin"
    table.path = str(path)
    table.loaded = True
    table.entries = {
        text: compile(text, "<string>", "exec", dont_inherit=True)
        for text in (f"# an earlier release's class {i}\n" + "x = 1\n" * 40 for i in range(200))
    }
    stale = len(table._blob({k: marshal.dumps(v) for k, v in table.entries.items()}))
    monkeypatch.setattr(classcode, "_TABLE", table)
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    for cap in ("MAX_BYTES", "KEEP_BYTES"):
        monkeypatch.setattr(codetable, cap, stale - 1)
    used = "def __create_fn__():\n def f(self): return 1\n return f"
    classcode._exec(used, {})
    assert table.save()
    assert set(table.load()) == {used}


def test_an_entry_marshal_fails_with_systemerror_is_compiled_anew(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """marshal raises more than the five errors a value's read catches: a code object whose
    fields are of the wrong types (one byte of a kept entry changed: its reference flag)
    raises SystemError, which went out of `re.compile` and `@dataclass` (every `inspect`
    with such a table died at import with a traceback) instead of the entry being compiled
    anew as any other value that is not of its kind is."""
    good = "def __create_fn__():\n def f(self): return 1\n return f"
    other = "def __create_fn__():\n def g(self): return 2\n return g"
    kept = marshal.dumps(compile(other, "<string>", "exec", dont_inherit=True))
    path = tmp_path / "dataclass-methods.bin"
    table = _table_at(path)
    raw = {
        good: marshal.dumps(compile(good, "<string>", "exec", dont_inherit=True)),
        other: systemerror_bytes(kept),
    }
    body = marshal.dumps(raw)
    path.write_bytes(table.head + zlib.crc32(body).to_bytes(4, "little") + body)
    assert table.get(good) is not None
    monkeypatch.setattr(classcode, "_TABLE", table)
    space: dict[str, object] = {}
    classcode._exec(other, space)  # (raised SystemError)
    assert callable(space["__create_fn__"]) and other not in table.stored


def test_a_table_marshal_fails_with_systemerror_is_ignored(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same error from the table's own read (its body a dict holding such a code object
    itself, as a table before version 2 held its values): out of `@dataclass` at every
    call (the table never counts as loaded), where any other table not of this kind is
    ignored whole."""
    text = "def __create_fn__():\n def g(self): return 2\n return g"
    bad = systemerror_bytes(marshal.dumps(compile(text, "<string>", "exec", dont_inherit=True)))
    path = tmp_path / "dataclass-methods.bin"
    table = _table_at(path)
    body = b"{" + marshal.dumps(text) + bad + b"0"
    path.write_bytes(table.head + zlib.crc32(body).to_bytes(4, "little") + body)
    monkeypatch.setattr(classcode, "_TABLE", table)
    space: dict[str, object] = {}
    classcode._exec(text, space)  # (raised SystemError)
    assert callable(space["__create_fn__"]) and table.loaded and not table.stored

"""The fast lock reader (lock_toml) is tomllib where it answers: on every lock the tests
carry, on hostile texts (multi-line strings, inline tables split over lines, comments, CRLF,
a key or table twice) and on random edits of real locks. Where tomllib fails, it does not
answer (None): the caller then reads with tomllib and reports tomllib's error. The Poetry
reader's fast name of an extras entry is the name packaging reads in it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from packaging.requirements import InvalidRequirement, Requirement

from agentguard.lock.readers import READERS
from agentguard.lock.readers.interface import LockReadError, load_toml
from agentguard.lock.readers.lock_toml import loads
from agentguard.lock.readers.poetry_lock import _extra_dependency

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
LOCKS = sorted(
    p
    for pattern in ("**/uv.lock", "**/poetry*.lock", "**/pylock*.toml")
    for p in FIXTURES.glob(pattern)
)


def _same(a: Any, b: Any) -> bool:
    """Equal with the same types and the same key order (True is not 1, [] is not {})."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def _agrees(text: str) -> tuple[bool, Any]:
    """(whether the fast reader answered, tomllib's value or error); fails if they disagree."""
    try:
        want: Any = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        want = exc
    got = loads(text)
    if isinstance(want, Exception):
        assert got is None, f"tomllib rejects ({want}), the fast reader gave {got!r}"
        return False, want
    if got is None:
        return False, want
    assert _same(got, want), f"fast {got!r} != tomllib {want!r}"
    return True, want


def test_the_fixtures_hold_the_real_locks() -> None:
    names = {p.name for p in LOCKS}
    assert {"uv.lock", "poetry.lock", "pylock.toml"} <= names
    assert len(LOCKS) >= 8


@pytest.mark.parametrize("path", LOCKS, ids=lambda p: str(p.relative_to(FIXTURES)))
def test_every_lock_in_the_fixtures_reads_as_tomllib_reads_it(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    answered, _ = _agrees(text)
    if path.name in ("uv.lock", "poetry.lock"):  # the layout the fast reader is for
        assert answered
    answered_crlf, _ = _agrees(text.replace("\n", "\r\n"))
    assert answered_crlf == answered


@pytest.mark.parametrize("path", [p for p in LOCKS if p.name in ("uv.lock", "poetry.lock")])
def test_a_lock_reader_gives_the_same_lock_either_way(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = path.read_text(encoding="utf-8")
    reader = next(r for r in READERS if r.filename == path.name)
    fast = reader.read(text, path.name)
    monkeypatch.setattr("agentguard.lock.readers.lock_toml.loads", lambda _t: None)
    assert reader.read(text, path.name) == fast


# (text, what tomllib does: "ok" or "error"; "toml-1.1": an error in TOML 1.0, valid in 1.1);
# the fast reader may decline an "ok" (None), never answers an "error", and where it answers
# it equals tomllib
HOSTILE = [
    ('a = "x"\nb = 1\n', "ok"),
    ('a = "x"\r\nb = [\r\n  1,\r\n]\r\n', "ok"),
    ('a = "x"\rb = 1\n', "error"),  # a lone CR
    ('a = """x\ny"""\n', "ok"),  # multi-line string
    ('a = """\nb = 1\n"""\n', "ok"),  # a line that looks like a key, inside a string
    ("a = 'x'\n", "ok"),
    ("a = '''x\n'''\n", "ok"),
    ('w = { url = "u",\n  hash = "h" }\n', "toml-1.1"),  # inline table split over lines
    ('w = { url = "u", hash = [\n  "h",\n] }\n', "ok"),  # an array in it may be
    ('w = { url = "u", }\n', "toml-1.1"),  # trailing comma in an inline table
    ('w = { url = "u" hash = "h" }\n', "error"),
    ('w = { url = "u", url = "v" }\n', "error"),
    ('w = { url = "u", "url" = "v" }\n', "error"),
    ('w = { a = { b = 1 }, c = [1, { d = "e" }] }\n', "ok"),
    ("w = {}\nv = { }\n", "ok"),
    ('a = "x" # comment\n# a line\n  # indented\nb = 2#c\n', "ok"),
    ("a = [ # c\n  1, # c\n  2 # c\n  , 3,\n]\n", "ok"),
    ("a = [\n  1,\n  ,\n]\n", "error"),
    ("a = [1 2]\n", "error"),
    ("a = [[1, 2], [], [[3]]]\n", "ok"),
    ('a = [1, "x", true, { b = 1 }]\n', "ok"),
    ('a = "x"\na = "y"\n', "error"),
    ('a = 1\n"a" = 2\n', "error"),
    ("[t]\na = 1\n[t]\nb = 1\n", "error"),
    ("[t.u]\n[t]\na = 1\n", "ok"),
    ("[t.u]\n[t]\nu = 1\n", "error"),
    ("[t]\n[t.u]\n[t]\n", "error"),
    ("[[p]]\na = 1\n[p]\n", "error"),
    ("[p]\n[[p]]\n", "error"),
    ("[[p]]\nname = 1\n[p.m]\nx = 1\n[[p]]\nname = 2\n[p.m]\nx = 2\n", "ok"),
    ("[[p]]\n[p.m]\n[p.m]\n", "error"),
    ("[[p.q]]\n[p]\na = 1\n", "ok"),
    ("[[p.q]]\n[[p]]\n", "error"),
    ("a = { b = 1 }\n[a.c]\n", "error"),
    ("a = [{ b = 1 }]\n[[a]]\n", "error"),
    ("a = 1\n[a.b]\n", "error"),
    ("[a]\nb = { c = 1 }\n[a.b.d]\n", "error"),
    ("[ t ]\n", "ok"),
    ('[t."q.k"]\n', "ok"),
    ("[t]]\n", "error"),
    ("[[t]\n", "error"),
    ("a.b = 1\n", "ok"),
    ("  a = 1\n", "ok"),
    ('"" = 1\n"a.b" = 2\n', "ok"),
    ('"a\\u0062" = 1\n', "ok"),
    ('a = "q\\"uote\\\\back"\n', "ok"),
    ('a = "\\n\\t\\u00e9"\n', "ok"),
    ('a = "\\x"\n', "error"),
    ('a = "x\ty"\n', "ok"),
    ('a = "x\x01y"\n', "error"),
    ('a = "x\x7fy"\n', "error"),
    ("# c\x00\n", "error"),
    ('a = "unterminated\n', "error"),
    ('a = "ü ✓ 漢"\n# ü\n', "ok"),
    ("\ufeffa = 1\n", "error"),
    ("a = -0\nb = 0\nc = 123456789012345678901234567890\n", "ok"),
    ("a = 01\n", "error"),
    ("a = +1\n", "ok"),
    ("a = 1_000\n", "ok"),
    ("a = 0x1f\n", "ok"),
    ("a = 1.5\n", "ok"),
    ("a = 1e3\n", "ok"),
    ("a = inf\n", "ok"),
    ("a = 1979-05-27\n", "ok"),
    ("a = 1979-05-27T07:32:00Z\n", "ok"),
    ("a = 12abc\n", "error"),
    ("a = true\nb = false\n", "ok"),
    ("a = truex\n", "error"),
    ("a = True\n", "error"),
    ("a =\n", "error"),
    ("a = 1", "ok"),
    ("a = [1,", "error"),
    ("a = [1,\n", "error"),
    ("a = {", "error"),
    ("[t]", "ok"),
    ("a = 1 b = 2\n", "error"),
    ("= 1\n", "error"),
    ("a b = 1\n", "error"),
    ("a = [" * 2000 + "]" * 2000 + "\n", "error"),
    ("", "ok"),
    ("\n\n  \t\n", "ok"),
]


@pytest.mark.parametrize(("text", "outcome"), HOSTILE)
def test_a_hostile_text_is_read_as_tomllib_reads_it_or_left_to_tomllib(
    text: str, outcome: str
) -> None:
    answered, want = _agrees(text)
    if outcome == "toml-1.1":
        assert not answered  # whichever TOML the tomllib at hand reads, it decides
    else:
        assert isinstance(want, Exception) == (outcome == "error"), want


def test_the_fast_reader_answers_the_layout_it_is_for() -> None:
    # the table above would pass with a reader that never answers: this one must answer
    for text in (
        'a = "x"\r\nb = [\r\n  1,\r\n]\r\n',
        "[[p]]\nname = 1\n[p.m]\nx = 1\n[[p]]\nname = 2\n[p.m]\nx = 2\n",
        'w = { a = { b = 1 }, c = [1, { d = "e" }] }\n',
        'a = "q\\"uote\\\\back"\n"" = 1\n',
        "a = -0\nb = 0\nc = 123456789012345678901234567890\n",
    ):
        assert _agrees(text)[0], text


def test_an_error_is_tomllibs_with_the_line() -> None:
    with pytest.raises(LockReadError) as err:
        load_toml('a = 1\nw = { url = "u" hash = "h" }\n', "uv.lock")
    assert err.value.line == 2
    assert str(err.value).startswith("uv.lock:2: not valid TOML")


SMALL = [
    (FIXTURES / "existing_locks" / "anyio" / "uv.lock").read_text(encoding="utf-8"),
    (FIXTURES / "existing_locks" / "anyio" / "poetry.lock").read_text(encoding="utf-8"),
]
TOKENS = [
    '"', "\\", "[", "]", "[[", "]]", "{", "}", ",", "=", "#", "\n", "\r", "\r\n", " ", "\t",
    ".", "'", '"""', "\x00", "\x7f", "0", "1", "-", "+", "a", "ü", "true", '\\"', "\\n",
    "[p]\n", "[[package]]\n", 'name = "x"\n', "= 1\n", "{ a = 1 }", ":", "_", "e",
]  # fmt: skip


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_a_randomly_edited_real_lock_is_read_as_tomllib_reads_it(data: st.DataObject) -> None:
    text = data.draw(st.sampled_from(SMALL))
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, len(text)))
        cut = data.draw(st.integers(0, 3))
        text = text[:at] + data.draw(st.sampled_from(TOKENS)) + text[at + cut :]
    _agrees(text)


_KEYS = st.sampled_from(["a", "b", "p", '"a"', '"a.b"', '""', "a-b_1"])
_SCALARS = st.one_of(
    st.integers(-(10**20), 10**20).map(str),
    st.sampled_from(["true", "false", '""', '"x"', '"\\""', '"a = 1"', "01", "1.0", "'l'"]),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=8).map(lambda s: f'"{s}"'),
)


def _values(depth: int) -> st.SearchStrategy[str]:
    if depth == 0:
        return _SCALARS
    inner = _values(depth - 1)
    pair = st.tuples(_KEYS, inner).map(lambda kv: f"{kv[0]} = {kv[1]}")
    return st.one_of(
        _SCALARS,
        st.lists(inner, max_size=3).map(lambda xs: "[" + ", ".join(xs) + "]"),
        st.lists(inner, max_size=3).map(lambda xs: "[\n" + "".join(f"  {x},\n" for x in xs) + "]"),
        st.lists(pair, max_size=3).map(lambda ps: "{ " + ", ".join(ps) + " }"),
    )


_LINES = st.one_of(
    st.tuples(_KEYS, _values(2)).map(lambda kv: f"{kv[0]} = {kv[1]}"),
    st.lists(st.sampled_from(["a", "b", "p"]), min_size=1, max_size=3).map(
        lambda ks: "[" + ".".join(ks) + "]"
    ),
    st.lists(st.sampled_from(["a", "b", "p"]), min_size=1, max_size=3).map(
        lambda ks: "[[" + ".".join(ks) + "]]"
    ),
    st.sampled_from(["", "# c", "  ", "a = 1 # c"]),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=st.lists(_LINES, max_size=12), crlf=st.booleans())
def test_a_generated_document_is_read_as_tomllib_reads_it(lines: list[str], crlf: bool) -> None:
    _agrees(("\r\n" if crlf else "\n").join(lines))


def _requirement_name(item: str) -> str:
    """What the Poetry reader took an extras entry's name to be before its fast path."""
    try:
        return Requirement(item.replace(" (", "(")).name
    except InvalidRequirement:
        return item.split(" ", 1)[0]


EXTRAS = sorted(
    {
        str(item)
        for p in LOCKS
        if p.name.startswith("poetry")
        for pkg in tomllib.loads(p.read_text(encoding="utf-8")).get("package", [])
        for items in (pkg.get("extras") or {}).values()
        for item in items
    }
    | {
        "pytest (>=6.0) ; python_version < \"3.9\"", "zope.interface (>=5)", "foo-", "foo- (>=1)",
        "foo (bad", "x[y] (>=1)", "x;y", "x (>=1) ; not a marker", "_x", "x_", "x.", "ü", "",
        " x", "x\t(>=1)", "x  (>=1)", "x (>=1)(<2)", "x @ https://index.example/x.whl",
    }
)  # fmt: skip


@pytest.mark.parametrize("item", EXTRAS)
def test_a_poetry_extras_entry_names_the_package_packaging_reads_in_it(item: str) -> None:
    assert _extra_dependency(item) == _requirement_name(item)

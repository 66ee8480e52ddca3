"""The one output escaper (agentguard/escape.py, #23 item 6): each channel's function, and
structural checks that every writer of a channel goes through it."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from agentguard import escape

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "agentguard"
LINE_BREAKS = [
    "\n",
    "\r",
    "\r\n",
    "\x0b",
    "\x0c",
    "\x1c",
    "\x1d",
    "\x1e",
    "\x85",
    "\u2028",
    "\u2029",
]


@pytest.mark.parametrize("nl", LINE_BREAKS)
def test_no_line_break_survives_the_terminal_escaper(nl: str) -> None:
    out = escape.terminal(f"a{nl}::error::b")
    assert len(out.splitlines()) == 1 and "::error::b" in out


def test_the_terminal_escaper_breaks_the_legacy_prefix() -> None:
    assert escape.terminal("docs ##[error]x") == "docs #\\x23[error]x"
    assert "##[" not in escape.terminal("#" * 5 + "[" + "##[")


@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("::error::x", "\\x3a:error::x"),
        ("   ::warning file=a::x", "   \\x3a:warning file=a::x"),
        ("\t::add-mask::x", "\t\\x3a:add-mask::x"),
        ("ok\n  ::stop-commands::t\nfine :: here", "ok\n  \\x3a:stop-commands::t\nfine :: here"),
        ("a ##[error]b", "a #\\x23[error]b"),
    ],
)
def test_commands_breaks_every_runner_command(text: str, want: str) -> None:
    assert escape.commands(text) == want


def test_command_data_is_percent_encoded() -> None:
    assert escape.command_data("50%\r\n::x") == "50%25%0D%0A::x"


def test_json_text_keeps_the_data() -> None:
    import json

    doc = json.dumps({"name": "docs ##[error]x"})
    out = escape.json_text(doc)
    assert "##[" not in out and json.loads(out) == {"name": "docs ##[error]x"}


def test_a_snippet_line_is_one_line_whatever_its_values_hold() -> None:
    ref = "main\n::error::x\r\n::add-mask::y\u2028z"
    out = escape.snippet(f"uses: a/b@<sha>  # {ref}", "second")
    assert out.split("\n") == [
        "uses: a/b@<sha>  # main\\n::error::x\\r\\n::add-mask::y\\u2028z",
        "second",
    ]


@pytest.mark.parametrize(
    "data",
    [
        "x\n# heading",
        "<img src=x onerror=alert(1)>",
        "[click](https://evil.example)",
        "![i](https://evil.example/x.png)",
        "a | b",
        "`code` and ``more``",
        "@octocat",
        "&#x202e;",
        "\\[x](y)",
    ],
)
def test_markdown_text_opens_nothing(data: str) -> None:
    out = escape.md_text(data)
    assert "\n" not in out
    unescaped = re.sub(r"\\.", "", out)  # what is left after the backslash escapes
    for meta in ("<", "[", "]", "|", "@", "&"):  # (backtick pairs stay code spans)
        assert meta not in unescaped, (data, out)


def test_markdown_text_keeps_the_prose_code_spans() -> None:
    assert escape.md_text("set `allowed_tools` <b>") == "set `allowed_tools` \\<b\\>"
    # data that closes a span early: what follows is escaped text, never markup
    out = escape.md_text("`a` <img> `b")
    assert out == "`a` \\<img\\> \\`b"


@pytest.mark.parametrize("data", ["a`b", "``", "` x", "x`", "", " "])
def test_a_code_span_holds_any_backticks(data: str) -> None:
    out = escape.md_code(data)
    fence = re.match(r"`+", out)
    assert fence is not None
    n = len(fence.group(0))
    assert out.endswith("`" * n) and "`" * n not in out[n:-n]


def test_a_fence_no_line_can_close() -> None:
    out = escape.md_fence(["```", "~~~~", "x\ny"])
    assert out[0] == out[-1] == "````"  # (a ~~~ line does not close a ``` fence)
    assert out[1:-1] == ["```", "~~~~", "x\\ny"]


# -- structure: every writer goes through the escaper ---------------------------------


@functools.cache
def _modules() -> list[tuple[Path, ast.Module]]:
    return [(p, ast.parse(p.read_text("utf-8"))) for p in sorted(PACKAGE.rglob("*.py"))]


def _snippet_ok(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return node.value is None or isinstance(node.value, str)
    if isinstance(node, ast.IfExp):
        return _snippet_ok(node.body) and _snippet_ok(node.orelse)
    if isinstance(node, ast.Call):
        name = getattr(node.func, "attr", getattr(node.func, "id", ""))
        return name in ("snippet", "snippet_lines")
    return False


def test_every_fix_snippet_is_built_by_the_escaper() -> None:
    """A snippet is a constant, or ``escape.snippet(line, ...)``: a value from the project
    is escaped before it is put into one (the text report prints a snippet line by line)."""
    bad = []
    seen = 0
    for path, tree in _modules():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or getattr(node.func, "id", None) != "Fix":
                continue
            for value in [k.value for k in node.keywords if k.arg == "snippet"] + node.args[1:2]:
                seen += 1
                if not _snippet_ok(value):
                    bad.append(f"{path.relative_to(ROOT)}:{value.lineno}: {ast.unparse(value)}")
    assert seen > 30  # (the walk found the rules' fixes)
    assert bad == []


# Each module that writes to stdout/stderr itself, and why its text is escaped.
WRITERS = {
    "agentguard/cli_shared.py",  # write_result: a rendered report (report.render escapes)
    "agentguard/__main__.py",  # through cli_shared.say
    "agentguard/inspect/image/__main__.py",  # through cli_shared.say
    "agentguard/cli.py",  # typer.echo of say() or a constant
    "agentguard/docs.py",  # the docs generator: shipped file names only
    "agentguard/cli_reference.py",  # the CLI reference generator: its own output path
    "agentguard/progress.py",  # the status line: escape.terminal + escape.commands
    # a debug compile's blank line, as Python's own compile prints it (a constant; the dump
    # after it is the standard library's): only for a caller that asks for re.DEBUG
    "agentguard/regexcode.py",
}


def _writes(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    f = node.func
    if isinstance(f, ast.Name) and f.id == "print":
        return True
    if isinstance(f, ast.Attribute) and f.attr in ("write", "echo", "secho"):
        base = ast.unparse(f.value)
        return base in ("sys.stdout", "sys.stderr", "typer", "click")
    return False


def test_only_the_known_writers_write_to_the_terminal() -> None:
    found = {
        str(path.relative_to(ROOT))
        for path, tree in _modules()
        if any(_writes(n) for n in ast.walk(tree))
    }
    assert found <= WRITERS, found - WRITERS


def test_every_echo_is_escaped() -> None:
    """typer.echo and sys.std*.write outside write_result take say(...) or a constant."""
    bad = []
    for path, tree in _modules():
        rel = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            if not _writes(node) or not isinstance(node, ast.Call) or not node.args:
                continue
            arg = node.args[0]
            if isinstance(arg, ast.BinOp):  # say(...) + "\n"
                arg = arg.left
            ok = isinstance(arg, ast.Constant) or (
                isinstance(arg, ast.Call) and getattr(arg.func, "id", "") in ("say",)
            )
            allowed = rel == "agentguard/cli_shared.py" and ast.unparse(arg) == "text"
            allowed = allowed or rel in ("agentguard/docs.py", "agentguard/cli_reference.py")
            allowed = allowed or ast.unparse(arg) == "f'agentguard {__version__}'"
            if not ok and not allowed:
                bad.append(f"{rel}:{node.lineno}: {ast.unparse(node)}")
    assert bad == []


def test_the_report_renderers_end_in_the_escaper() -> None:
    """render() escapes JSON and SARIF for the runner, render_text every line."""
    init = (PACKAGE / "report" / "__init__.py").read_text()
    assert init.count("escape.json_text(") == 2
    text = (PACKAGE / "report" / "text.py").read_text()
    assert "return escape.commands(buf.getvalue())" in text


_MD_OK = {"code", "text", "md_code", "md_text", "len", "_head"}
_MD_NAMES = {"holds", "line"}  # built from code(...) / image_deps_lines (checked here too)
_MD_ATTRS = {"rule_id", "value"}  # a rule id and a severity: agentguard's own words
_MD_FUNCTIONS = {
    "agentguard/harden/summary.py": (
        "_head",
        "image_deps_lines",
        "_secrets_line",
        "render_summary",
    ),
    "agentguard/harden/engines.py": ("render_engine_section",),
}


def _md_ok(v: ast.expr) -> bool:
    if isinstance(v, ast.Call):
        name = getattr(v.func, "id", None)
        if name in _MD_OK:
            return True
        if isinstance(v.func, ast.Attribute) and v.func.attr == "join" and v.args:
            gen = v.args[0]
            return isinstance(gen, (ast.GeneratorExp, ast.ListComp)) and _md_ok(gen.elt)
        return False
    if isinstance(v, ast.Name):
        return v.id in _MD_NAMES
    if isinstance(v, ast.Attribute):
        return v.attr in _MD_ATTRS or v.attr.isupper()  # a module's constant file name
    return isinstance(v, ast.Constant)


def test_every_value_in_summary_markdown_is_escaped() -> None:
    """Each ``{...}`` in an f-string of a SUMMARY.md writer is md_code/md_text of the value
    (or agentguard's own constant)."""
    bad = []
    for rel, functions in _MD_FUNCTIONS.items():
        tree = ast.parse((ROOT / rel).read_text("utf-8"))
        defs = {n.name: n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert set(functions) <= set(defs), rel
        for name in functions:
            stack: list[ast.AST] = [defs[name]]
            while stack:
                node = stack.pop()
                if isinstance(node, ast.FormattedValue):
                    if not _md_ok(node.value):
                        bad.append(f"{rel}:{node.lineno}: {ast.unparse(node.value)}")
                    continue
                stack.extend(ast.iter_child_nodes(node))
    assert bad == []


def test_the_summary_writers_are_all_listed() -> None:
    """Whatever writes SUMMARY.md lines is in the list above (a new writer is checked)."""
    writers = set()
    for path, tree in _modules():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and ast.get_docstring(node):
                doc = ast.get_docstring(node) or ""
                if "SUMMARY.md lines" in doc or node.name == "render_summary":
                    writers.add((str(path.relative_to(ROOT)), node.name))
    listed = {(rel, f) for rel, fs in _MD_FUNCTIONS.items() for f in fs}
    assert writers <= listed, writers - listed

"""The second-stage pre-filter: a Python file that passed the first (it imports an agent
or LLM library) is parsed only when one of the code readers can find something in it.

Each reader's test is a necessary condition of its finding anything, so skipping the parse
never loses a fact: these tests hold the pre-filtered reading equal to the full one, on
every Python file the project carries, on generated handlers laid out in every way Python
allows, and hold the name lists to the readers that match them.
"""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project import python_fallback_options, python_frameworks
from agentguard.inspect.project.python_agents import analyse_python
from agentguard.inspect.project.python_api_tools import may_declare
from agentguard.inspect.project.python_fallback_filter import may_switch_model
from agentguard.inspect.project.python_handlers import handler_texts
from tests.inspect.project.prefilter_support import facts as _facts
from tests.inspect.project.prefilter_support import full as _full
from tests.inspect.project.prefilter_support import read_whole

ROOT = Path(__file__).resolve().parents[3]


def _corpus() -> list[Path]:
    files = [
        p
        for folder in ("agentguard", "tests", "benchmarks", "examples")
        if (ROOT / folder).is_dir()
        for p in sorted((ROOT / folder).rglob("*.py"))
    ]
    assert len(files) > 200  # the walk found the project's files
    return files


def test_the_pre_filtered_reading_equals_the_full_one_on_every_file_of_the_project() -> None:
    compared = with_facts = skipped = 0
    for path in _corpus():
        data = path.read_bytes()
        rel = str(path.relative_to(ROOT))
        try:
            full = _full(rel, data)
        except (SyntaxError, ValueError):
            continue
        got = analyse_python(rel, data)
        assert _facts(got) == _facts(full), rel
        compared += 1
        with_facts += any(_facts(full).values())
        skipped += not got.parsed
    # the corpus holds agent code (fixtures) and code that is none (agentguard's own)
    assert with_facts >= 10 and skipped >= 100, (compared, with_facts, skipped)


def test_the_pre_filtered_reading_equals_the_full_one_on_an_agent_sdk_shaped_tree(
    tmp_path: Path,
) -> None:
    from benchmarks.agents_tree import generate_agents_tree

    generate_agents_tree(tmp_path, seed=3)
    files = sorted(tmp_path.rglob("*.py"))[::7]  # a sample: the tree has ~900 files
    assert len(files) > 100
    for path in files:
        data = path.read_bytes()
        rel = str(path.relative_to(tmp_path))
        read_whole(rel, data)


# -- handlers: every layout Python allows between `except` and the switch --------------

_SWITCH = "client = anthropic.Anthropic(base_url=BACKUP)"

_FILLERS = [
    'msg = """\nnothing to see here\n"""',  # a triple-quoted string with a line at column 0
    "log(\n'a',\n'b')",  # a bracket continued at column 0
    "total = 1 + \\\n2",  # a backslash continuation at column 0
    "# a comment at column 0",
    "",
    "x = ')'  # a closing bracket in a string",
    'y = "\\"\\"\\""  # quotes in a string',
    "z = '#'",
    "items = [\n  1,\n]",
    "text = '''a\n\n'''",
    "def inner():\n    return 1",
    "if retry:\n    pass",
]


def _handler_source(fillers: list[str], switch_at: int, tabs: bool) -> str:
    body = [*fillers[:switch_at], _SWITCH, *fillers[switch_at:]]
    ind = "\t" if tabs else "    "
    lines: list[str] = []
    for stmt in body:
        first, *rest = stmt.split("\n") if stmt else [""]
        lines.append(ind * 2 + first if first else "")
        # continuation lines keep their own (zero) indentation; block lines are indented
        lines += [(ind * 2 + r if r.startswith("    ") else r) for r in rest]
    return (
        "import anthropic\n\nBACKUP = 'https://backup'\n\n\ndef answer(ask):\n"
        f"{ind}try:\n{ind * 2}return ask()\n{ind}except Exception:\n"
        + "\n".join(lines)
        + f"\n{ind * 2}return None\n\n\ndef after():\n{ind}return 2\n"
    )


@settings(max_examples=300, deadline=None)
@given(
    fillers=st.lists(st.sampled_from(_FILLERS), max_size=6),
    where=st.integers(min_value=0, max_value=6),
    tabs=st.booleans(),
    newline=st.sampled_from(["\n", "\r\n", "\r"]),
)
def test_a_switch_anywhere_in_a_handler_is_seen(
    fillers: list[str], where: int, tabs: bool, newline: str
) -> None:
    source = _handler_source(fillers, min(where, len(fillers)), tabs)
    try:
        ast.parse(source)
    except SyntaxError:
        return  # a combination Python rejects (a filler that cannot follow another)
    data = source.replace("\n", newline).encode()
    full = read_whole("a.py", data)
    assert full.fallbacks, source  # the generator really wrote a switch
    assert may_switch_model(data), source


@pytest.mark.parametrize(
    "body",
    [
        pytest.param('model = "claude-haiku-4-5"', id="holder-assigned"),
        pytest.param('ask(model="x")', id="model-keyword"),
        pytest.param('ask("gpt-4o-mini")', id="model-named-in-a-string"),
        pytest.param('ask("gp" "t-4o-mini")', id="implicit-concatenation"),
        pytest.param('ask("\\x67pt-4o-mini")', id="escaped"),
        pytest.param("self.llm = other", id="attribute-holder"),
        pytest.param("return OpenAI()", id="client-class"),
    ],
)
def test_each_kind_of_switch_passes_the_filter(body: str) -> None:
    source = textwrap.dedent(
        f"""\
        from openai import OpenAI
        import openai

        def f(ask, other, self):
            try:
                return ask()
            except Exception:
                {body}
        """
    ).encode()
    assert _full("a.py", source).fallbacks, body
    assert may_switch_model(source)


@pytest.mark.parametrize(
    "binding",
    [
        "mk = openai.OpenAI",
        "from openai import OpenAI as mk",
        "from langchain_openai import ChatOpenAI as mk",
    ],
)
def test_a_client_class_called_under_another_name_is_seen(binding: str) -> None:
    """The handler holds no word of a switch: the client class is bound to `mk` elsewhere
    (found on review: the handler's text alone is not enough for a client call)."""
    source = textwrap.dedent(
        f"""\
        import openai
        {binding}

        def f(ask):
            try:
                return ask()
            except Exception:
                c = mk()
                return c
        """
    ).encode()
    assert _full("a.py", source).fallbacks, binding
    assert may_switch_model(source)
    read_whole("a.py", source)


# -- where a name stands: every layout of a binding, and of a `"type"` key's value -------

_TARGETS = ["mk", "(mk)", "mk: type", "(\nmk\n): type", "if 1: mk"]
_GAPS = ["", " ", " \\\n ", "  # c\n"]
_VALUES = ["openai.OpenAI", "OpenAI", "(openai  # c\n .OpenAI)", "openai.OpenAI()", "other"]
_VALUES += ['"OpenAI"', "None", "openai.Other", "(\nother\n)"]


@settings(max_examples=300, deadline=None)
@given(
    target=st.sampled_from(_TARGETS),
    gaps=st.tuples(st.sampled_from(_GAPS), st.sampled_from(_GAPS)),
    value=st.sampled_from(_VALUES),
    walrus=st.booleans(),
    other=st.sampled_from(["openai.AsyncOpenAI", "print", "OpenAI()"]),
)
def test_a_name_bound_to_a_client_in_any_layout_is_seen(
    target: str, gaps: tuple[str, str], value: str, walrus: bool, other: str
) -> None:
    """A handler that only calls `mk()`: whenever the full reader resolves `mk` to a
    client class, the fallback pre-filter lets the file through; either way the facts are
    the full reading's."""
    binding = (
        f"[({target}{gaps[0]}:={gaps[1]}{value})]"
        if walrus
        else f"{target}{gaps[0]}={gaps[1]}{value}"
    )
    source = (
        f"import openai\nfrom openai import OpenAI\nother = {other}\n{binding}\n\n"
        "def f(ask):\n    try:\n        return ask()\n    except Exception:\n        return mk()\n"
    )
    try:
        ast.parse(source)
    except SyntaxError:
        return  # (a layout Python rejects)
    data = source.encode()
    full = read_whole("a.py", data)
    if full.fallbacks:
        assert may_switch_model(data), source


_KEYS = ['"type"', "'type'", '("type")', '"ty" "pe"', '"t\\x79pe"', "'''type'''", '"kind"', "KEY"]
_TOOL_VALUES = ['"bash_20250124"', '("local_shell")', '"" "computer_use"', '"local_" "shell"']
_TOOL_VALUES += ['"\\x62ash_20250124"', "r'text_editor_20250429'", '"computer"', '"web_search_x"']


@settings(max_examples=300, deadline=None)
@given(
    key=st.sampled_from(_KEYS),
    gaps=st.tuples(st.sampled_from(_GAPS), st.sampled_from(_GAPS)),
    value=st.sampled_from(_TOOL_VALUES),
    context=st.sampled_from(["client.create(tools=[{}])", "TOOLS = [{}]", "KINDS = {}"]),
)
def test_a_tool_type_in_any_layout_of_a_dict_display_is_seen(
    key: str, gaps: tuple[str, str], value: str, context: str
) -> None:
    """Whenever the full reader reads a grant from a dict display, the API tool reader's
    pre-filter lets the file through; either way the facts are the full reading's."""
    entry = "{" + f"{key}{gaps[0]}:{gaps[1]}{value}" + ", 'name': 'x'}"
    source = f"import anthropic\nimport openai\nKEY = 'type'\n{context.replace('{}', entry)}\n"
    try:
        ast.parse(source)
    except SyntaxError:
        return
    data = source.encode()
    full = read_whole("a.py", data)
    if full.grants:
        assert may_declare(data), source


def test_a_one_line_handler_and_a_handler_at_the_end_of_the_file() -> None:
    one_line = b"import openai\ntry:\n    x = 1\nexcept Exception: model = 'gpt-4o'\n"
    assert _full("a.py", one_line).fallbacks and may_switch_model(one_line)
    last = b"import openai\ntry:\n    x = 1\nexcept Exception:\n    model = 'gpt-4o'"
    assert _full("a.py", last).fallbacks and may_switch_model(last)


def test_handlers_that_switch_nothing_are_not_parsed_for_a_fallback() -> None:
    source = textwrap.dedent(
        """\
        import openai

        def f(d):
            try:
                return d["key"]
            except KeyError:
                return None
            finally:
                print("model")  # after the handler: not in it
        """
    ).encode()
    texts = list(handler_texts(source))
    assert len(texts) == 1 and b"finally" not in texts[0]
    assert not may_switch_model(source)
    assert not analyse_python("a.py", source).parsed  # and nothing else in it is read


def test_an_unterminated_string_reads_on_to_the_end_of_the_file() -> None:
    source = b"try:\n    x = 1\nexcept E:\n    s = '''open\nrest = 1\nmodel = 2\n"
    assert next(handler_texts(source)).endswith(b"model = 2\n")


# -- the name lists are the readers' own ------------------------------------------------


def _compared_names(module: object, variable: str) -> set[str]:
    """The string constants ``module``'s source compares ``variable`` against (``==``,
    ``!=``, ``in`` a literal), and the keys of the module-level tables it tests with ``in``."""
    tree = ast.parse(Path(module.__file__).read_text())  # type: ignore[attr-defined]
    tables = {
        t.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name) and isinstance(node.value, ast.Dict)
    }
    out: set[str] = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and isinstance(node.left, ast.Name)):
            continue
        if node.left.id != variable:
            continue
        for comp in node.comparators:
            if isinstance(comp, ast.Constant) and isinstance(comp.value, str):
                out.add(comp.value)
            elif isinstance(comp, ast.Tuple | ast.Set | ast.List):
                out |= {e.value for e in comp.elts if isinstance(e, ast.Constant)}
            elif isinstance(comp, ast.Name) and comp.id in tables:
                keys = tables[comp.id].keys  # type: ignore[attr-defined]
                out |= {k.value for k in keys if isinstance(k, ast.Constant)}
    return out


def test_every_callee_name_the_framework_readers_match_is_a_needle() -> None:
    names = _compared_names(python_frameworks, "last")
    assert {"ShellTool", "SandboxAgent", "CodeAgent", "load_tools"} <= names  # it reads them
    needles = {n.decode() for n in python_frameworks.NEEDLES}
    # crewai's reader matches `Agent` under the crewai module only with its
    # `allow_code_execution` keyword written out: that keyword is the needle
    assert names - {"Agent"} <= needles and "allow_code_execution" in needles
    source = inspect.getsource(python_frameworks._crewai)
    assert '_kw(node, "allow_code_execution")' in source and "**" not in source


def test_every_name_the_option_readers_match_passes_their_filter() -> None:
    names = _compared_names(python_fallback_options, "last") | {"with_fallbacks"}
    assert "FallbackModel" in names
    for name in names:
        for module in ("agno", "pydantic_ai", "litellm"):
            text = f"import {module}\nx = {module}.{name}(fallbacks=[], fallback_models=[])\n"
            assert python_fallback_options.may_take_fallbacks(text.encode()), name


def test_a_file_not_parsed_is_still_read_for_claude_command_lines() -> None:
    from agentguard.inspect.project.files import process_file

    source = (
        b'import subprocess\nsubprocess.run(["claude", "-p", "hi", "--allowedTools", "Bash"])\n'
    )
    assert not analyse_python("run.py", source).parsed
    out = process_file("run.py", "python", source)
    assert out.configs and out.configs[0].engine.startswith("claude"), out.configs
    assert out.parsed == 0 and not out.sources  # read, nothing to parse, nothing failed


def test_the_index_holds_every_dict_literal_of_the_module() -> None:
    # (the API tool reader and the MCP reader look only at the index's dicts)
    from agentguard.inspect.project.python_scope import ModuleIndex

    count = 0
    for path in _corpus():
        try:
            tree = ast.parse(path.read_bytes())
        except (SyntaxError, ValueError):
            continue
        every = {id(n) for n in ast.walk(tree) if isinstance(n, ast.Dict)}
        assert {id(n) for n, _ in ModuleIndex(tree).dicts} == every, path
        count += len(every)
    assert count > 1000


def test_the_handlers_are_found_where_a_search_anchored_at_each_line_finds_them() -> None:
    """handler_texts finds the keyword, then looks back to its line's start (8 times
    faster than a search anchored at every line): the same handler texts as the anchored
    search gives, on crafted layouts and on every file here."""
    import re

    from agentguard.inspect.project import python_handlers

    anchored = re.compile(rb"^([ \t\f]*)except\b", re.M)

    def by_anchor(data: bytes) -> list[bytes]:
        if b"\r" in data:
            data = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        out = []
        for m in anchored.finditer(data):
            column = python_handlers._indent(data, m.start())[0]
            out.append(data[m.start() : python_handlers._handler_end(data, m.end(), column)])
        return out

    crafted = [
        b"except E:\n    model = 1\n",  # (at the file's start)
        b"try:\n\tpass\n\texcept E:\n\t\tx = 1\n",
        b"try: pass\n\x0c  except E: x = 1\n",
        b"x = 1; except_ = 2\nmyexcept = 3\n  except_hook = 4\n",
        b"y = 'except'\n  except E:\n",
        b"try:\r\n  pass\r\nexcept E:\r\n  pass\rexcept F:\r  pass",
        b"a = 1  except\n",
        b"\n\n\nexcept",
        b"except\x00except\nexcept",
        b"try: pass\nexcept E: pass\ntry: pass\nexcept E: pass\n",  # (the same text twice)
    ]
    files = [path.read_bytes() for path in _corpus()]
    assert sum(b"except" in data for data in files) > 100
    for data in crafted + files:
        assert list(handler_texts(data)) == by_anchor(data), data[:200]

"""The pre-filters' import and definition tests read past string literals and comments.

Modelled on the field: pydantic-ai's own modules (``pydantic_ai/agent/__init__.py``,
``_agent_graph.py``) hold docstring examples that import the SDK and call ``Agent(...)``;
its tests import the client and spell tool types in recorded responses. A name in a
docstring, a string or a comment is no import and no call, so a file that holds the
framework only there is not parsed; a file whose code imports it still is, whatever
strings come before the import (an f-string whose end cannot be told for certain stops
the scan: everything after it is code).

:mod:`agentguard.inspect.project.python_literals` is held to Python's own tokenizer on
every Python file of this project and on generated ones: no code token is ever called a
string or a comment.
"""

from __future__ import annotations

import io
import textwrap
import tokenize
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentguard.inspect.project import python_agents
from agentguard.inspect.project.files import process_file
from agentguard.inspect.project.python_agents import Wanted
from agentguard.inspect.project.python_import_needles import may_import
from agentguard.inspect.project.python_literals import Literals

ROOT = Path(__file__).resolve().parents[3]

# pydantic-ai's own module: relative imports, and the SDK named only in docstring examples
LIBRARY = textwrap.dedent(
    '''\
    """Agents.

    Example:
    ```python
    from pydantic_ai import Agent

    agent = Agent('openai:gpt-4o', instructions='Be concise.')
    result = agent.run_sync('What is the capital of France?')
    ```
    """
    from __future__ import annotations

    from .models import Model  # from pydantic_ai import Agent (a comment)


    class Agent:
        """An agent.

        >>> from pydantic_ai import Agent
        >>> agent = Agent('test')
        """

        def __init__(self, model: Model, name: str = "from pydantic_ai import Agent") -> None:
            self.model = model
            self.doc = f"{name!r}: agent = Agent(model)"
    '''
).encode()
# the same module with an import of the SDK in code, after the strings
IMPORTING = LIBRARY + b"\nfrom pydantic_ai import Agent as _A\n\nagent = _A('openai:gpt-4o')\n"


@pytest.fixture()
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Python files ``ast.parse`` was called on."""
    seen: list[str] = []
    real = python_agents.ast.parse

    def counting(source: bytes, filename: str = "<unknown>", *a: object, **k: object) -> object:
        seen.append(filename)
        return real(source, filename, *a, **k)  # type: ignore[arg-type]

    monkeypatch.setattr(python_agents.ast, "parse", counting)
    return seen


def test_a_file_that_names_the_sdk_only_in_strings_and_comments_is_not_parsed(
    parses: list[str],
) -> None:
    assert not may_import(LIBRARY, (b"pydantic_ai",))
    assert not Wanted.of(LIBRARY).any()
    out = process_file("pydantic_ai/agent/__init__.py", "python", LIBRARY)
    assert parses == [] and out.parsed == 0 and not out.sources


def test_the_same_file_with_an_import_in_code_is_parsed_and_its_agent_found(
    parses: list[str],
) -> None:
    out = process_file("pydantic_ai/agent/__init__.py", "python", IMPORTING)
    assert parses == ["pydantic_ai/agent/__init__.py"] and out.parsed == 1
    assert [(d.framework, d.line) for d in out.definitions] == [
        ("pydantic-ai", IMPORTING.count(b"\n"))
    ], out.definitions


@pytest.mark.parametrize(
    "before",
    [
        # Python 3.12: a field may hold a string in the same quotes, or a comment; the
        # scan cannot end these for certain, so it stops: what follows is code
        pytest.param('x = f"{d["key"]}"\n', id="fstring-same-quotes"),
        pytest.param('x = f"{d["a" + """b"""]}"\n', id="fstring-nested-triple"),
        pytest.param("x = f'''{\n  y # a comment }'''\n'''\n", id="fstring-comment"),
        pytest.param('x = f"{ {1: 2}[1] }"\n', id="fstring-nested-braces"),
        pytest.param('x = rf"{a}\\"" "\'"\n', id="raw-fstring-escaped-quote"),
        pytest.param("x = Rb'\\'' + '''a''' + \"\"\"b\"\"\"\n", id="escapes-and-triples"),
        pytest.param('x = "a\\\n b"\n', id="continued-string"),
        pytest.param("x = '''''' + ''\n", id="empty-strings"),
        pytest.param('x = "unterminated\n', id="unterminated-string"),
        pytest.param('x = """unterminated\n', id="unterminated-triple"),
        pytest.param("if'a'in b: pass\n", id="string-after-a-keyword"),
    ],
)
def test_an_import_after_any_string_is_still_an_import(before: str) -> None:
    source = (before + "from agents import ShellTool\n").encode()
    assert may_import(source, (b"agents",)), source
    at = source.index(b"from agents")
    assert Literals(source).in_code(at)


def _code_offsets(source: bytes) -> list[int]:
    """Byte offsets of the code tokens Python's tokenizer finds (NAME, OP, NUMBER), outside
    f-strings (whose fields, since 3.12, it reports as code: they hold no import)."""
    lines = source.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))
    depth = 0
    out: list[int] = []
    fstart = getattr(tokenize, "FSTRING_START", -1)
    fend = getattr(tokenize, "FSTRING_END", -2)
    for tok in tokenize.tokenize(io.BytesIO(source).readline):
        depth += (tok.type == fstart) - (tok.type == fend)
        if depth or tok.type not in (tokenize.NAME, tokenize.OP, tokenize.NUMBER):
            continue
        row, col = tok.start
        out.append(starts[row - 1] + len(lines[row - 1].decode("utf-8")[:col].encode()))
    return out


def _assert_code_is_code(source: bytes) -> None:
    literals = Literals(source)
    for at in _code_offsets(source):
        assert literals.in_code(at), (at, source[max(0, at - 40) : at + 40])


def test_no_code_token_of_the_project_is_taken_for_a_string() -> None:
    files = [p for d in ("agentguard", "tests") for p in sorted((ROOT / d).rglob("*.py"))]
    assert len(files) > 300
    masked = 0
    for path in files:
        source = path.read_bytes()
        _assert_code_is_code(source)
        masked += not Literals(source).in_code(source.find(b'"""') + 1)
    assert masked > 100  # (and docstrings are strings)


_TOKENS = st.sampled_from(
    [
        "x", "agents", " ", "\n", "\\\n", "(", ")", "{", "}", "[", "]", ",", ":", "=", "#",
        "'", '"', "'''", '"""', "\\", "f", "rb", "Rf", "u", "import ", "from ", "é", "1",
    ]
)  # fmt: skip


@settings(max_examples=800, deadline=None)
@given(st.lists(_TOKENS, max_size=25))
def test_no_code_token_is_taken_for_a_string_in_generated_code(pieces: list[str]) -> None:
    source = "".join(pieces).encode()
    try:
        _code_offsets(source)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # (invalid escapes in generated strings)
            compile(source, "<generated>", "exec")
    except (SyntaxError, tokenize.TokenError, ValueError, UnicodeDecodeError):
        return  # (only what Python reads is held to Python's reading)
    _assert_code_is_code(source)


def test_the_scan_reads_only_as_far_as_it_is_asked() -> None:
    source = b"from agents import X\n" + b'"""doc"""\n' * 200_000
    literals = Literals(source)
    assert literals.in_code(0)
    assert literals._scanned < len(source) // 10  # (2 MB of strings after it: not scanned)

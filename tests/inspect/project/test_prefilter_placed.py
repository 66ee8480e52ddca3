"""The second-stage pre-filters read where a name stands, not only that it is spelled
(issue 25): a tool type counts only where a ``"type"`` key's value can stand, and a bare
name called in an ``except`` handler only when the file may bind it to a client class.

Each file here is modelled on a real one of openai-agents-python: the shapes that made
its modules parsed for nothing (a tool type named as a mapping's value, a return value, a
comparison; a handler that calls a logging helper or an exception class, in a module that
imports ``AsyncOpenAI``) are skipped; every spelling that the full reader reads as a grant
or a fallback (aliases, annotated and parenthesised targets, comments, continuations,
string pieces) is still parsed, with the same facts.
"""

from __future__ import annotations

import pytest

from agentguard.inspect.project.python_agents import analyse_python
from agentguard.inspect.project.python_api_tools import may_declare
from agentguard.inspect.project.python_fallback_filter import may_switch_model
from tests.inspect.project.prefilter_support import facts as _facts
from tests.inspect.project.prefilter_support import full as _full
from tests.inspect.project.prefilter_support import read_whole
from tests.inspect.project.prefilter_support import src as _src

# -- tool types: only a `"type"` key's value ---------------------------------------------

# openai-agents-python src/agents/run_internal/tool_planning.py, run_state.py, tool.py,
# turn_resolution.py, tool_actions.py: tool types named as a mapping's value, a return
# value, a comparison, an item appended to a list of names, a constant before its docstring
_NAMED_NOT_HANDED = [
    '_KIND = {\n    "computer_call": "computer",\n    "local_shell_call": "local_shell",\n}',
    'def tool_type(self):\n    return "computer_use_preview"',
    'def f(tool_name, tool_map, tool):\n    if tool_name == "computer_use_preview":\n'
    '        tool_map["computer_use_preview"] = tool',
    'tools_used = []\ntools_used.append("local_shell")',
    'class C:\n    TRACE_TOOL_NAME = "computer"\n    """Tracing should expose the tool."""',
    "def test_args(called_input):\n    assert '\"properties\"' in called_input\n"
    "    assert '\"text\"' in called_input",
    'x = [\n    "local_shell_actions",\n    "local_shell",\n]',
    'x: "local_shell" = None',
    "f = lambda: 'bash_20250124'",
    'x = d["kind":"local_shell"]',
    "y = {'kind': 'local_shell', 'name': 'bash_20250124'}",
]


@pytest.mark.parametrize("code", _NAMED_NOT_HANDED)
def test_a_tool_type_that_is_no_type_keys_value_is_not_parsed_for_a_grant(code: str) -> None:
    source = f"from openai import AsyncOpenAI\nimport anthropic\n\n{code}\n".encode()
    assert not may_declare(source), code
    assert not _full("a.py", source).grants
    read_whole("a.py", source)


# every way a `"type"` key and a tool type can stand in a dict display that is handed over
_HANDED = [
    "{'type': 'local_shell'}",
    '{"type" : ("computer_use_preview"), "display_width": 1024}',
    '{("type"): "bash_20250124", "name": "bash"}',
    '{"ty" "pe": "bash_20250124"}',
    '{"t\\x79pe": "text_editor_20250429"}',
    "{'''type''': 'web_search_20250305'}",
    '{"type":  # the tool\n    "bash_20250124"}',
    '{"type":  # the tool \\\n    "bash_20250124"}',
    '{"type":\n    # a comment line\n    # and another\n    "code_execution_20250825"}',
    '{"type"  # the key\n    : "web_fetch_20250910"}',
    '{"type": \\\n "bash_20250124"}',
    '{"type": "" "local_shell"}',
    '{"type": r"" "local_" "shell"}',
    '{"type": ("computer_" "20250124")}',
    '{**BASE, "type": "text_editor_20250429"}',
    '{"type": u"computer_use"}',
]


@pytest.mark.parametrize("literal", _HANDED)
@pytest.mark.parametrize("hand_over", ["create(tools=[{}])", "TOOLS = [{}]", "tools.append({})"])
def test_a_tool_type_as_a_type_keys_value_is_still_parsed(literal: str, hand_over: str) -> None:
    code = hand_over.replace("{}", literal)
    source = f"import anthropic\nimport openai\nBASE = {{}}\ntools = []\n{code}\n".encode()
    full = read_whole("agent.py", source)
    assert full.grants, code
    assert may_declare(source), code


def test_a_tool_types_context_is_read_in_bounded_time() -> None:
    # (each candidate looks back over its own gap and one line: no scan of the file per
    # candidate, whatever the line endings)
    import time

    many = b"import openai\n" + b"x = ['local_shell',\r\r\r\r\r\r\r\r 'bash_20250124']\r" * 20000
    started = time.process_time()
    assert not may_declare(many)
    assert time.process_time() - started < 5  # (about 0.1 s)


# -- fallbacks: a bare name called in a handler ------------------------------------------

# openai-agents-python src/agents/models/chatcmpl_helpers.py, run_internal/run_loop.py,
# tool.py, voice/models/openai_stt.py, realtime/twilio_sip/server.py: a module that
# imports a client class, and handlers that call a logging helper, an exception class, a
# builtin or a callback passed as a parameter (annotated, defaulted, passed by keyword)
_NO_CLIENT_CALLED = _src(
    """\
    from dataclasses import dataclass
    from typing import Callable

    from openai import AsyncOpenAI

    from ..logger import log_model_action_debug, logger
    from .errors import ErrorSentinel, UserError

    client = AsyncOpenAI()


    @dataclass
    class FunctionTool:
        timeout_error_function: Callable[..., str] | None = None

        def run(self, context, timeout_error):
            try:
                return self.invoke(context)
            except TimeoutError:
                timeout_error_function = self.timeout_error_function
                if timeout_error_function is None:
                    raise UserError("timed out")
                return timeout_error_function(context, timeout_error)


    async def run_loop(
        save_items: Callable[[list, str | None], None],
        items: list,
    ) -> None:
        try:
            await client.responses.create(input=items)
        except Exception as exc:
            # Cleanup must not fail the turn.
            log_model_action_debug(logger, "Skipping cleanup", exc)
            save_items(items, str(exc))
            raise ErrorSentinel(exc)


    async def _save(items, response_id):
        return None


    async def resume(items):
        await run_loop(save_items=_save, items=items)
    """
)


def test_a_module_spelling_a_client_class_is_read_for_its_handlers_bare_calls() -> None:
    """(Whether a called name is bound to a client class is the parser's to say: a byte
    test of it was attacked and missed chains, walruses and line ends; not taken.)"""
    source = _NO_CLIENT_CALLED
    assert may_switch_model(source)
    read_whole("model.py", source)


# every way a file may bind a name to a client class, then call it in a handler
_BINDINGS = [
    "from openai import OpenAI as make",
    "from openai import (\n    AsyncOpenAI as  # the async one\n    make,\n)",
    "from openai import (\n    AsyncOpenAI as\n    # the async one\n    make,\n)",
    "import openai.OpenAI as make",
    "make = openai.OpenAI",
    "make = (\n    openai  # the module\n    .AzureOpenAI\n)",
    "make = openai . OpenAI",
    "other = openai.OpenAI\nmake = other",
    "from openai import OpenAI\nfirst = OpenAI\nsecond = first\nmake = second",
    "make = other = openai.OpenAI",
    "make: type = openai.OpenAI",
    "make: Callable[\n    ..., object\n] = openai.OpenAI",
    "(make) = openai.OpenAI",
    "(make): type = openai.OpenAI",
    "if openai: make = openai.OpenAI",
    "if openai: make: type = openai.OpenAI",
    "x = 1; make = openai.OpenAI",
    "make \\\n = openai.OpenAI",
    "[(make := openai.OpenAI)]",
    "from openai import OpenAI\nmake = OpenAI",
    "from anthropic import AsyncAnthropic as make",
    "from langchain_openai import ChatOpenAI\nmake: type[ChatOpenAI] = ChatOpenAI",
    # (the line before ends in a dot that is no attribute's: an ellipsis, a float)
    "x = ...\nmake = openai.OpenAI",
    "x = 1.\nmake = openai.OpenAI",
    "((make)) = openai.OpenAI",
    "from openai import \\\n    OpenAI as make",
    "from  openai.lib  import (OpenAI as make)",
    "try:\n    from openai import OpenAI as make\nexcept ImportError:\n    raise",
]


@pytest.mark.parametrize("binding", _BINDINGS)
def test_a_name_bound_to_a_client_and_called_in_a_handler_is_still_parsed(binding: str) -> None:
    source = (
        "import openai\nfrom typing import Callable\n"
        f"{binding}\n\n"
        "def ask(q, log):\n"
        "    try:\n"
        "        return q()\n"
        "    except Exception as exc:\n"
        "        log(exc)  # (no word of a switch in the handler: the call alone)\n"
        "        return make()\n"
    ).encode()
    full = read_whole("agent.py", source)
    assert full.fallbacks, binding
    assert may_switch_model(source), binding


@pytest.mark.parametrize(
    "handler",
    [
        "return OpenAI(base_url=BACKUP)",  # (the class itself, imported)
        "return openai.OpenAI(base_url=BACKUP)",  # (an attribute call)
        "self.client = make_client()",  # (a holder assigned: whatever is called)
        'return self.client.chat.completions.create(model="gpt-4o-mini")',  # (a method)
        "return ask(BACKUP_MODEL)",  # (a model named in an argument)
    ],
)
def test_the_handlers_that_never_needed_a_bound_name_are_still_parsed(handler: str) -> None:
    source = (
        "import openai\nfrom openai import OpenAI\nBACKUP = 'b'\nBACKUP_MODEL = 'gpt-4o-mini'\n\n"
        "class Agent:\n"
        "    def ask(self, ask, make_client):\n"
        "        try:\n"
        "            return ask()\n"
        "        except Exception:\n"
        f"            {handler}\n"
    ).encode()
    full = read_whole("agent.py", source)
    assert full.fallbacks, handler
    assert may_switch_model(source)


def test_a_bracket_in_a_comment_before_an_annotated_binding_starts_nothing() -> None:
    source = (
        b"import openai\n# see make(\nmake: type = openai.OpenAI\n\n"
        b"def f(ask):\n    try:\n        return ask()\n    except Exception:\n        return make()\n"
    )
    assert _full("a.py", source).fallbacks
    assert may_switch_model(source)


# -- framework tools: a callee's last name, whole ------------------------------------------

# openai-agents-python tests/sandbox/capabilities/test_shell_capability.py and
# tests/test_items_helpers.py: names that hold a tool class's name inside a longer one
_LONGER_NAMES = _src(
    """\
    from agents import Agent
    from agents.sandbox.capabilities import Shell, ShellToolSet
    from openai.types.responses import ResponseComputerToolCall, ResponseApplyPatchToolCall

    def configure_tools(toolset: ShellToolSet) -> None:
        toolset.add(Shell())

    call = ResponseComputerToolCall(id="c", type="computer_call")
    patch: ResponseApplyPatchToolCall | None = None
    agent = Agent(name="a", tools=[])
    """
)


def test_a_tool_class_name_inside_a_longer_name_is_not_parsed_for_a_grant() -> None:
    from agentguard.inspect.project.python_frameworks import may_grant

    assert not may_grant(_LONGER_NAMES)
    assert not _full("test_shell.py", _LONGER_NAMES).grants
    got = analyse_python("tests/test_shell.py", _LONGER_NAMES)
    assert _facts(got) == _facts(_full("tests/test_shell.py", _LONGER_NAMES))


@pytest.mark.parametrize(
    "code",
    [
        "from agents import ShellTool as Shell\nt = Shell(executor=run)",
        "import agents\nt = agents.ComputerTool(computer=c)",
        "import agents\nt = (agents\n    .WebSearchTool)()",
        "from agents import Agent, LocalShellTool\nt = LocalShellTool(executor=run)",
        "from langchain_community.tools import ShellTool\nt = ShellTool()",
        "from autogen import AssistantAgent\na = AssistantAgent(code_execution_config={'use_docker': False})",
    ],
)
def test_a_tool_class_named_whole_is_still_parsed(code: str) -> None:
    from agentguard.inspect.project.python_frameworks import may_grant

    source = f"{code}\n".encode()
    full = read_whole("agent.py", source)
    assert full.grants, code
    assert may_grant(source)


@pytest.mark.parametrize(
    "source",
    [
        # (every piece a tool type may begin with, its comment read to the line's end)
        b"import openai\nx = 1 #" + b'{"type": "bash_1" #' * 8000 + b"\n",
        b"import openai\nx = 1 #" + b'{"type": "bash_" #' * 8000 + b"\n",
    ],
    ids=["tool-type-starts", "name-starts"],
)
def test_a_line_of_tool_type_starts_each_before_a_comment_is_read_in_linear_time(
    source: bytes,
) -> None:
    """The API tools' test asks, at each piece that may begin a tool type, whether another
    string follows; a comment there was read to its line's end each time: a 150 KB line
    of them took 13 s. A comment there now counts as "maybe" (the file is parsed)."""
    import time

    from agentguard.inspect.project.python_api_tools import may_declare

    started = time.perf_counter()
    assert may_declare(source)  # (maybe: parsed, and the reader finds nothing)
    assert time.perf_counter() - started < 2.0  # (about 0.001 s)


@pytest.mark.parametrize(
    "source",
    [
        # (the MCP test: `command`, then a comment of `#`s that no `=` follows)
        b"import mcp\nx = f(command " + b"#" * 4000 + b"\n)\n",
        # (the API tools' test: a tool type's first piece, then such a comment, no string)
        b'import openai\nx = {"type": "bash_2025" ' + b"#" * 4000 + b"\n}\n",
        # (backslash continuations with CR LF, each readable as a continuation and a line end)
        b'import openai\nx = {"type": "bash_2025" ' + b"\\\r\n" * 4000 + b"}\n",
        b"import mcp\nx = f(command " + b"\\\r\n" * 4000 + b"1)\n",
    ],
)
def test_a_gap_between_tokens_is_read_in_time_linear_in_its_length(source: bytes) -> None:
    """The gap the byte tests allow between a name and what follows it (blanks, line ends,
    continuations, comments) is spelled one way only: a gap that could be split several
    ways took time exponential in its length (forty `#`s after `command`: hours), in a
    file a pull request writes."""
    import time

    from agentguard.inspect.project.python_agents import Wanted

    started = time.perf_counter()
    Wanted.of(source)
    assert (
        time.perf_counter() - started < 2.0
    )  # (exponential: 22 `#`s took 0.2 s, each one doubled)

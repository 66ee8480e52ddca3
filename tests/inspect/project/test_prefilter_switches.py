"""The second-stage pre-filters made tighter for speed (issue 25, item 11): the fallback
reader's (each candidate handler parsed alone), the API tool reader's (a string that can be
a tool type), and the grant and fallback readers on a file parsed for another reader.

Every file here is modelled on a real one of the field trees: the fallback sites and API
tool grants found there must still be found (a speed-up that drops one fails here), and the
handlers that made crewAI's own modules parsed for nothing are no longer read.
"""

from __future__ import annotations

import pytest

from agentguard.inspect.project.python_agents import Wanted, analyse_python
from agentguard.inspect.project.python_api_tools import may_declare
from agentguard.inspect.project.python_fallback_filter import handler_may_switch, may_switch_model
from tests.inspect.project.prefilter_support import facts as _facts
from tests.inspect.project.prefilter_support import full as _full
from tests.inspect.project.prefilter_support import read_whole
from tests.inspect.project.prefilter_support import src as _src

# -- fallback sites of the field trees: still found ------------------------------------

# open_deep_research src/open_deep_research/deep_researcher.py: a model named in a call
_DEEP_RESEARCHER = _src(
    """\
    from langchain.chat_models import init_chat_model

    configurable_model = init_chat_model(configurable_fields=("model",))

    async def final_report_generation(state, config):
        configurable = Configuration.from_runnable_config(config)
        current_retry = 0
        while current_retry <= 3:
            try:
                final_report = await configurable_model.ainvoke([])
                return {"final_report": final_report.content}
            except Exception as e:
                # Handle token limit exceeded errors with progressive truncation
                if is_token_limit_exceeded(e, configurable.final_report_model):
                    current_retry += 1
                    model_token_limit = get_model_token_limit(configurable.final_report_model)
                    if not model_token_limit:
                        return {"final_report": f"Error: the model's maximum context. {e}"}
                    findings_token_limit = model_token_limit * 4
                else:
                    return {"final_report": f"Error generating final report: {e}"}
    """
)

# openai-agents-python src/agents/realtime/openai_realtime.py: a holder assigned
_REALTIME = _src(
    """\
    import logging
    from openai import AsyncOpenAI

    logger = logging.getLogger(__name__)

    class OpenAIRealtimeWebSocketModel:
        async def connect(self, options):
            previous_model = self.model
            try:
                self.model = options.get("model", self.model)
                try:
                    await self._create_websocket_connection()
                except BaseException:
                    try:
                        await self.close()
                    except BaseException:
                        logger.warning(
                            "Failed to clean up after Realtime connection setup failure",
                            exc_info=True,
                        )
                    raise
            except BaseException:
                self.model = previous_model
                raise
            finally:
                self._connection_attempt_active = False
    """
)

# pydantic-ai pydantic_ai_slim/pydantic_ai/models/openrouter.py: a `model_name=` keyword in
# the `else` of a try nested in the handler, after a comment and a `pass` handler
_OPENROUTER = _src(
    """\
    from openai import AsyncOpenAI
    from pydantic import ValidationError

    class OpenRouterModel:
        def _validate_completion(self, response):
            response_dict = response.model_dump()

            try:
                validated = _OpenRouterChatCompletion.model_validate(response_dict)
            except ValidationError as exc:
                # OpenRouter intermittently returns responses with null standard fields
                # (https://github.com/pydantic/pydantic-ai/issues/3994).
                try:
                    error_response = _OpenRouterErrorResponse.model_validate(response_dict)
                except ValidationError:
                    ...  # (pydantic-ai writes `pass`: the same empty handler)
                else:
                    raise ModelHTTPError(
                        status_code=error_response.error.code,
                        model_name=error_response.model or self.model_name,
                        body=error_response.error.model_dump(),
                    ) from exc
                raise
            return validated
    """
)

# openai-agents-python examples/sandbox/docker/mounts/mount_smoke.py: a string that reads
# as a model's name (`command`) handed to a call in the handler
_MOUNT_SMOKE = _src(
    """\
    import asyncio
    from agents.sandbox import MountCommandError

    async def main(sandbox):
        try:
            await sandbox.start()
        except MountCommandError as exc:
            print(f"mount command: {exc.context.get('command')}")
            print(f"mount stderr: {exc.context.get('stderr')}")
            raise
    """
)


@pytest.mark.parametrize(
    ("path", "source"),
    [
        ("src/open_deep_research/deep_researcher.py", _DEEP_RESEARCHER),
        ("src/agents/realtime/openai_realtime.py", _REALTIME),
        ("pydantic_ai_slim/pydantic_ai/models/openrouter.py", _OPENROUTER),
        ("examples/sandbox/docker/mounts/mount_smoke.py", _MOUNT_SMOKE),
    ],
)
def test_the_fallback_sites_of_the_field_trees_are_still_found(path: str, source: bytes) -> None:
    full = _full(path, source)
    assert full.fallbacks, path  # the reader finds the site
    assert may_switch_model(source)
    got = analyse_python(path, source)
    assert got.parsed and _facts(got) == _facts(full)


@pytest.mark.parametrize(
    "body",
    [
        pytest.param('ask({"model": BACKUP})', id="model-key-of-a-dict"),
        pytest.param("ask(fallback_model=BACKUP)", id="fallback-model-keyword"),
        pytest.param("ask(model_name=BACKUP)", id="model-name-keyword"),
        pytest.param("ask(BACKUP_MODEL)", id="argument-named-for-a-model"),
        pytest.param("ask(CONFIG.backup_model)", id="attribute-named-for-a-model"),
        pytest.param("client: object = make()", id="annotated-holder"),
        pytest.param("return openai.OpenAI()", id="client-class-as-an-attribute"),
        pytest.param("if retry:\n    model = 'gpt-4o'", id="switch-in-a-branch"),
        pytest.param("model = (\n'gpt-4o'\n)", id="continued-at-column-0"),
    ],
)
def test_each_switch_is_seen_in_the_handler_parsed_alone(body: str) -> None:
    lines = body.split("\n")
    indented = "\n".join(
        [lines[0], *("        " + x if x.startswith(" ") else x for x in lines[1:])]
    )
    source = (
        "import openai\n\nBACKUP = 'gpt-4o'\nBACKUP_MODEL = BACKUP\nCONFIG = load()\n\n"
        "def f(ask, self, retry, make):\n    try:\n        return ask()\n"
        f"    except Exception:\n        {indented}\n"
    ).encode()
    full = read_whole("a.py", source)
    assert full.fallbacks, source
    assert may_switch_model(source)


# -- crewAI's own handlers: no switch, so the file is not parsed for one ------------------

# lib/cli/src/crewai_cli/..., lib/crewai/src/crewai/llms/providers/gemini/completion.py:
# messages that name a model's maker, an LLM or a command, strings joined across lines,
# escapes in messages, a helper named for a model that is not called with one
_CREWAI_HANDLERS = _src(
    """\
    import subprocess

    import click
    from crewai import LLM

    def install(llm: LLM):
        try:
            subprocess.run(["uv", "sync"], check=True)
        except subprocess.CalledProcessError as e:
            click.secho(f"uv command failed with exit code {e.returncode}", fg="red")
        try:
            upload(llm)
        except Exception as e:
            raise _classify_gemini_error(e, "file") from e
        try:
            login()
        except Exception:
            click.secho(
                "\\n[bold yellow]Warning:[/bold yellow] continuing, but you may experience limitations "
                "with downloading and publishing tools."
                "\\nRun [bold]crewai login[/bold] to try logging in again.\\n",
                style="yellow",
            )
        try:
            answer = llm.call("hi")
        except ValueError as e:
            formatted_answer = process_llm_response(answer, e)
            return formatted_answer
    """
)


def test_handlers_that_only_name_a_model_or_an_llm_are_not_parsed_for_a_fallback() -> None:
    assert not _full("lib/cli/src/crewai_cli/install.py", _CREWAI_HANDLERS).fallbacks
    assert not may_switch_model(_CREWAI_HANDLERS)
    assert not analyse_python("lib/cli/src/crewai_cli/install.py", _CREWAI_HANDLERS).parsed


def test_a_client_class_named_only_in_a_docstring_or_a_comment_is_no_call() -> None:
    source = _src(
        '''\
        """Retries the OpenAI() client's request (see AsyncOpenAI)."""
        import openai

        def f(ask):
            try:
                return ask()
            except Exception:  # not ChatOpenAI()
                return ask()
        '''
    )
    assert not may_switch_model(source)
    assert not _full("a.py", source).fallbacks


def test_a_handler_that_does_not_parse_alone_counts_as_a_switch() -> None:
    # (an unterminated string: the handler's text runs to the end of the file)
    assert handler_may_switch(b"    except E:\n        s = '''open\nx = 1\n", clients=False)
    # (more than the handler: a text that is read on past it is not taken for one)
    assert handler_may_switch(b"except E:\n    pass\nexcept F:\n    pass\n", clients=False)
    assert not handler_may_switch(b"except E:\n    log(e)\n", clients=False)
    assert handler_may_switch(b"except E:\n    c = mk()\n", clients=True)  # (mk = OpenAI?)


# -- API tool types --------------------------------------------------------------------

# browser-use examples/custom-functions/cua.py
_CUA = _src(
    """\
    from openai import AsyncOpenAI

    client = AsyncOpenAI()

    async def computer_use(params, page_info):
        response = await client.responses.create(
            model='computer-use-preview',
            tools=[
                {
                    'type': 'computer_use_preview',
                    'display_width': page_info.viewport_width,
                    'environment': 'browser',
                }
            ],
        )
        return response
    """
)

# pydantic-ai tests/models/test_anthropic_bedrock_count_tokens.py
_BEDROCK = _src(
    """\
    from anthropic import AsyncAnthropicBedrock

    async def test_count_tokens(bedrock_client):
        tools = [{'type': 'web_search_20250305', 'name': 'web_search'}]
        return await count_tokens_via_bedrock(bedrock_client, tools=tools)
    """
)


@pytest.mark.parametrize(("path", "source"), [("cua.py", _CUA), ("test_count.py", _BEDROCK)])
def test_the_api_tool_grants_of_the_field_trees_are_still_found(path: str, source: bytes) -> None:
    full = read_whole(path, source)
    assert [g.tool for g in full.grants] in (["computer_use_preview"], ["web_search_20250305"])
    assert may_declare(source)


@pytest.mark.parametrize(
    "literal",
    [
        "'bash_20250124'",
        '"""text_editor_20250429"""',
        "'local_shell'",
        "'computer_' '20250124'",  # (the rest in a string after it)
        "'bash_\\x32\\x30\\x32\\x35\\x30\\x31\\x32\\x34'",  # (an escape: read as one)
        "'\\\nweb_fetch_20250910'",  # (a backslash-newline inside the string: nothing)
        "r'code_execution_20250825'",
        "'bash_\u0662\u0660\u0662\u0665\u0660\u0661\u0662\u0664'",  # (any digit is `\\d`)
    ],
)
def test_a_string_that_can_be_a_tool_type_passes(literal: str) -> None:
    source = f"import anthropic\nimport openai\ntools = [{{'type': {literal}}}]\n".encode()
    assert _full("a.py", source).grants, literal
    assert may_declare(source)


def test_the_first_piece_of_every_tool_type_passes() -> None:
    from agentguard.inspect.project.python_api_tools import NEEDLES, _tool_type, _typed_string

    types = ["bash_20250124", "text_editor_20250429", "computer_20250124", "local_shell"]
    types += ["computer_use", "computer_use_preview", "code_execution_20250825"]
    types += ["web_search_20250305", "web_fetch_20250910"]
    for name in types:
        whole = f"{{'type': '{name}'}}"
        assert _tool_type(name) is not None and _typed_string(whole.encode()), name
        needle = next(n.decode() for n in NEEDLES if name.startswith(n.decode()))
        for cut in range(len(needle), len(name)):  # `'bash_2025' '0124'`
            split = f"x = {{'type': ('{name[:cut]}'  # a comment\n  '{name[cut:]}')}}"
            assert _typed_string(split.encode()), split


def test_tool_type_names_that_no_string_can_be_are_not_parsed_for_a_grant() -> None:
    # pydantic-ai tests/models/test_openai_responses.py: response items, not tool types
    source = _src(
        """\
        from openai import AsyncOpenAI

        def test_web_search_call(openai_messages):
            # Find the web_search_call item in the output
            items = [m for m in openai_messages if m.get('type') == 'web_search_call']
            assert items[0] == {'type': 'computer_call', 'id': 'bash_1'}
            return f'computer_{items}', 'local_shell_call'
        """
    )
    assert not may_declare(source)
    assert not _full("a.py", source).grants


# -- a file parsed for one reader is read by the grant and fallback readers ---------------


def test_a_file_parsed_anyway_is_read_by_the_grant_and_fallback_readers() -> None:
    # (an SDK's test: Claude options, and a handler the fallback test would rule out)
    source = _src(
        """\
        from claude_agent_sdk import ClaudeAgentOptions
        import openai

        def test_options():
            try:
                options = ClaudeAgentOptions(allowed_tools=["Bash"])
            except TypeError:
                options = None
            return options
        """
    )
    wanted = Wanted.of(source, path="tests/test_options.py")
    assert wanted.claude and wanted.grants and wanted.fallbacks  # (read, whatever the tests)
    assert not may_switch_model(source)
    assert _facts(analyse_python("tests/test_options.py", source, wanted=wanted)) == _facts(
        _full("tests/test_options.py", source)
    )


def test_a_tool_type_piece_at_the_end_of_a_continued_string_is_no_tool_type() -> None:
    # (a file cut off after a backslash-newline inside a string: no character follows the
    # piece; the test asked whether None was a quote, and raised)
    source = b"import anthropic\ntools = [{'type': '\\\nbash_"
    assert not may_declare(source)
    assert not may_declare(source + b"2025")
    assert may_declare(source + b"20250124'}]\n")

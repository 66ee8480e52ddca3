"""Tools handed over by other agent frameworks, matched through the file's imports."""

from __future__ import annotations

import textwrap

from agentguard.inspect.project.python_agents import analyse_python


def _grants(source: str) -> list[tuple[str, str, str, int, bool]]:
    facts = analyse_python("a.py", textwrap.dedent(source).encode())
    return [(g.framework, g.tool, g.category, g.line, g.certain) for g in facts.grants]


def test_openai_agents_tools_and_sandbox_defaults() -> None:
    source = """
        from agents import Agent, WebSearchTool, ApplyPatchTool
        from agents.sandbox import SandboxAgent

        Agent(name="a", tools=[WebSearchTool(), ApplyPatchTool(editor=None)])
        SandboxAgent(name="s")
    """
    assert _grants(source) == [
        ("openai-agents", "WebSearchTool", "web", 5, True),
        ("openai-agents", "ApplyPatchTool", "file", 5, True),
        ("openai-agents", "SandboxAgent (default capabilities: Shell)", "shell", 6, True),
        ("openai-agents", "SandboxAgent (default capabilities: Filesystem)", "file", 6, True),
    ]


def test_langchain_autogen_crewai() -> None:
    source = """
        from langchain_community.agent_toolkits.load_tools import load_tools
        from autogen_ext.code_executors.local import LocalCommandLineCodeExecutor
        from autogen_ext.code_executors.docker import DockerCommandLineCodeExecutor
        from crewai import Agent
        import autogen

        tools = load_tools(["terminal", "requests_get", "wikipedia"])
        LocalCommandLineCodeExecutor(work_dir=".")
        DockerCommandLineCodeExecutor(work_dir=".")
        autogen.UserProxyAgent("u", code_execution_config={"use_docker": False})
        Agent(role="r", allow_code_execution=True, code_execution_mode="unsafe")
        Agent(role="s", allow_code_execution=True)
    """
    assert _grants(source) == [
        ("langchain", "load_tools('terminal')", "shell", 8, True),
        ("langchain", "load_tools('requests_get')", "web", 8, True),
        ("autogen", "LocalCommandLineCodeExecutor", "shell", 9, True),
        ("autogen", "UserProxyAgent(code_execution_config use_docker=False)", "shell", 11, True),
        ("crewai", "Agent(code_execution_mode='unsafe')", "shell", 12, True),
    ]


def test_unknown_executor_is_reported_uncertain() -> None:
    source = """
        import os
        from smolagents import CodeAgent

        CodeAgent(tools=[], model=None, executor_type=os.environ["EXECUTOR"])
    """
    assert _grants(source) == [("smolagents", "CodeAgent (executor unknown)", "shell", 5, False)]


def test_same_names_from_other_modules_are_not_grants() -> None:
    source = """
        from mytools import ShellTool, CodeAgent

        ShellTool()
        CodeAgent()
    """
    assert _grants(source) == []


def test_a_tool_imported_anywhere_under_any_alias_is_found() -> None:
    # the extractors skip a file whose imports name none of their modules: an import in
    # a function, an alias of an alias and a walrus are imports all the same
    source = """
        import os


        def build():
            import agents as sdk
            shell = sdk.ShellTool
            return shell(executor=None)


        def later():
            from langchain_community.tools import ShellTool as Tool
            if (made := Tool):
                return made()


        def fallback(llm, other):
            return llm.with_fallbacks([other])
    """
    assert _grants(source) == [
        ("openai-agents", "ShellTool", "shell", 8, True),
        ("langchain", "ShellTool", "shell", 14, True),
    ]
    facts = analyse_python("a.py", textwrap.dedent(source).encode())
    assert [(s.kind, s.line) for s in facts.fallbacks] == [("framework-option", 18)]


def test_a_relative_import_of_a_tool_name_is_not_the_framework() -> None:
    # the SDK's own modules import its tools relatively: that is not handing one to an agent
    source = """
        from .tool import ShellTool
        from . import agents

        ShellTool(executor=None)
        agents.ShellTool(executor=None)
    """
    assert _grants(source) == []

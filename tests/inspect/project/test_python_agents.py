"""Python agent code: names resolve through Python's scopes, unknowns stay unknown,
branches stay ambiguous."""

from __future__ import annotations

import textwrap

from agentguard.engine.project import scan_files
from agentguard.findings import Confidence, Location, Severity
from agentguard.inspect.facts import ProjectFile
from agentguard.inspect.project.model import OneOf, Option, PathSym, Unknown
from agentguard.inspect.project.python_agents import analyse_python


def _configs(source: str) -> list[tuple[int, dict[str, object], bool]]:
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    return [
        (c.line, {k: o.value for k, o in c.options.items()}, c.ambiguous) for c in facts.configs
    ]


SCOPE_TRAP = """
    from claude_agent_sdk import ClaudeAgentOptions

    TOOLS = ["WebFetch"]


    def reviewer():
        TOOLS = ["Read", "Grep"]
        return ClaudeAgentOptions(tools=TOOLS)


    def fixer():
        TOOLS = ["Bash", "Edit"]
        return ClaudeAgentOptions(tools=TOOLS)


    def reader():
        return ClaudeAgentOptions(tools=TOOLS)
"""


def test_scope_trap_each_function_resolves_its_own_list() -> None:
    assert _configs(SCOPE_TRAP) == [
        (9, {"tools": ("Read", "Grep")}, False),
        (14, {"tools": ("Bash", "Edit")}, False),
        (18, {"tools": ("WebFetch",)}, False),  # the module's list, not the first one found
    ]


def test_scope_trap_findings_point_at_each_configuration() -> None:
    result = scan_files(
        [ProjectFile("agent.py", textwrap.dedent(SCOPE_TRAP).encode())], workdir=None
    )
    shell = [f for f in result.findings if f.rule_id == "AG301"]
    assert [(f.locations, f.evidence["tools"], f.confidence) for f in shell] == [
        (
            (Location(path="agent.py", line=14, note="ClaudeAgentOptions(...)"),),
            ["Bash"],
            Confidence.HIGH,
        )
    ]
    web = [f.locations[0].line for f in result.findings if f.rule_id == "AG303"]
    assert web == [18]


def test_python_scoping_rules_closures_class_bodies_global() -> None:
    source = """
        from claude_agent_sdk import ClaudeAgentOptions

        MODE = "default"


        def outer():
            mode = "acceptEdits"

            def inner():
                return ClaudeAgentOptions(permission_mode=mode)

            return inner


        class Bot:
            MODE = "bypassPermissions"

            def options(self):
                return ClaudeAgentOptions(permission_mode=MODE)


        def switch():
            global MODE
            MODE = "plan"
            return ClaudeAgentOptions(permission_mode=MODE)
    """
    assert _configs(source) == [
        (11, {"permission_mode": "acceptEdits"}, False),
        # the class attribute is not visible in the method; the module binding is,
        # and switch() may have rebound it: both readings are kept
        (20, {"permission_mode": OneOf(("default", "plan"))}, False),
        (26, {"permission_mode": "plan"}, False),
    ]


def test_branches_make_configurations_ambiguous_never_first_found() -> None:
    source = """
        import sys
        from claude_agent_sdk import ClaudeAgentOptions, query

        if "--safe" in sys.argv:
            options = ClaudeAgentOptions(tools=["Read"])
        else:
            options = ClaudeAgentOptions(permission_mode="bypassPermissions")


        async def main():
            async for m in query(prompt="go", options=options):
                print(m)
    """
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    assert [(c.line, c.ambiguous, c.ambiguity) for c in facts.configs] == [
        (6, True, "line 12: `options` is one of the configurations built at lines 6, 8, "
         "depending on a branch"),
        (8, True, "line 12: `options` is one of the configurations built at lines 6, 8, "
         "depending on a branch"),
    ]  # fmt: skip


def test_values_that_cannot_be_known_are_unknown() -> None:
    source = """
        import os
        from claude_agent_sdk import ClaudeAgentOptions

        EXTRA = ["Read"]
        EXTRA.append(os.environ["TOOL"])


        def build(tools, **kwargs):
            return ClaudeAgentOptions(
                tools=tools,
                allowed_tools=EXTRA,
                permission_mode=os.getenv("MODE"),
                cwd=os.path.dirname(os.path.abspath(__file__)),
                **kwargs,
            )
    """
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    (cfg,) = facts.configs
    assert cfg.open_ended == "**kwargs"
    assert cfg.options == {
        "tools": Option(Unknown("tools", "function parameter"), 11, "tools"),
        "allowed_tools": Option(("Read", Unknown("EXTRA", "modified at line 6")), 12, "EXTRA"),
        "permission_mode": Option(
            Unknown("os.getenv('MODE')", "environment variable MODE"), 13, "os.getenv('MODE')"
        ),
        "cwd": Option(PathSym("source-dir"), 14, "os.path.dirname(os.path.abspath(__file__))"),
    }
    # an option not written down but possibly set by **kwargs reads as unknown, not unset
    assert cfg.option("setting_sources") == Option(
        Unknown("**kwargs", "may be set by options not known"), 10, ""
    )


def test_unknown_permission_mode_is_reported_with_low_confidence() -> None:
    source = b"""
import os
from claude_agent_sdk import ClaudeAgentOptions
OPTIONS = ClaudeAgentOptions(tools=["Read"], permission_mode=os.environ["MODE"], cwd="/w",
                             setting_sources=[])
"""
    result = scan_files([ProjectFile("a.py", source)], workdir=None)
    (bypass,) = [f for f in result.findings if f.rule_id == "AG305"]
    assert bypass.confidence is Confidence.LOW
    assert bypass.severity is Severity.MEDIUM  # an unknown is never graded as the worst case
    assert bypass.message == (
        "claude-agent-sdk configuration may bypass permission checks (the value could not "
        "be determined): `permission_mode` = "
        "unknown (environment variable MODE: `os.environ['MODE']`)."
    )


def test_import_in_try_except_names_either_sdk() -> None:
    source = """
        try:
            from claude_agent_sdk import ClaudeAgentOptions
        except ImportError:
            from claude_code_sdk import ClaudeCodeOptions as ClaudeAgentOptions

        OPTIONS = ClaudeAgentOptions(tools=["Bash"])
    """
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    assert [(c.engine, c.line) for c in facts.configs] == [
        ("claude-agent-sdk or claude-code-sdk", 7)
    ]


def test_a_name_that_only_looks_like_the_sdk_is_not_it() -> None:
    source = """
        def ClaudeAgentOptions(**kw):
            return kw

        OPTIONS = ClaudeAgentOptions(permission_mode="bypassPermissions")
    """
    assert _configs(source) == []


def test_attribute_set_after_construction_is_applied() -> None:
    source = """
        from claude_agent_sdk import ClaudeAgentOptions

        opts = ClaudeAgentOptions(tools=["Read"])
        opts.permission_mode = "bypassPermissions"
    """
    assert _configs(source) == [
        (4, {"tools": ("Read",), "permission_mode": "bypassPermissions"}, False)
    ]


def test_query_without_options_is_the_sdk_defaults() -> None:
    source = """
        import claude_agent_sdk as sdk

        async def main():
            async for m in sdk.query(prompt="hello"):
                print(m)
    """
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    assert [(c.line, c.label, dict(c.options)) for c in facts.configs] == [
        (5, "query() without options (SDK defaults)", {})
    ]


def test_bypass_with_a_root_container_in_the_same_project_is_critical() -> None:
    agent = (
        b"from claude_agent_sdk import ClaudeAgentOptions\n"
        b'O = ClaudeAgentOptions(tools=["Read"], permission_mode="bypassPermissions",\n'
        b'                       cwd="/srv/agent/work", setting_sources=[])\n'
    )
    dockerfile = b"FROM python:3.12-slim\nWORKDIR /srv/agent\nCOPY app.py .\nUSER root\n"
    result = scan_files(
        [ProjectFile("agent.py", agent), ProjectFile("Dockerfile", dockerfile)], workdir=None
    )
    (bypass,) = [f for f in result.findings if f.rule_id == "AG305"]
    assert bypass.severity is Severity.CRITICAL
    assert bypass.evidence["combined_with"] == ["the container runs as root (AG401)"]
    assert bypass.message.endswith("Worse here: the container runs as root (AG401).")


def test_dataclasses_replace_derives_a_configuration() -> None:
    source = """
        import dataclasses
        from claude_agent_sdk import ClaudeAgentOptions, query

        BASE = ClaudeAgentOptions(tools=["Read"], cwd="/srv/agent/work", setting_sources=[])


        async def fix(prompt):
            opts = dataclasses.replace(BASE, permission_mode="bypassPermissions")
            async for m in query(prompt=prompt, options=opts):
                print(m)
    """
    facts = analyse_python("agent.py", textwrap.dedent(source).encode())
    assert [
        (c.line, c.label, {k: o.value for k, o in c.options.items()}) for c in facts.configs
    ] == [
        (
            5,
            "ClaudeAgentOptions(...)",
            {"tools": ("Read",), "cwd": "/srv/agent/work", "setting_sources": ()},
        ),
        (
            9,
            "dataclasses.replace(...) of the configuration at line 5",
            {
                "tools": ("Read",),
                "cwd": "/srv/agent/work",
                "setting_sources": (),
                "permission_mode": "bypassPermissions",
            },
        ),
    ]


def test_a_global_never_assigned_is_unknown_not_a_crash() -> None:
    # valid Python: `global MODE` in a function, MODE assigned nowhere (set by another
    # module at run time); looking the name up used to raise KeyError and end the run
    source = """
        from claude_agent_sdk import ClaudeAgentOptions


        def make():
            global MODE
            MODE.reset()
            return ClaudeAgentOptions(permission_mode=MODE)
    """
    assert _configs(source) == [
        (8, {"permission_mode": Unknown("MODE", "name not defined in this file")}, False)
    ]


# Issue 23 item 13: setattr is an assignment.
def test_setattr_with_a_literal_name_is_an_attribute_assignment_and_fails_ag305() -> None:
    source = """
        from claude_agent_sdk import ClaudeAgentOptions

        opts = ClaudeAgentOptions(tools=["Read"], cwd="/srv/work", setting_sources=[])
        setattr(opts, "permission_mode", "bypassPermissions")
    """
    assert _configs(source) == [
        (
            4,
            {
                "tools": ("Read",),
                "cwd": "/srv/work",
                "setting_sources": (),
                "permission_mode": "bypassPermissions",
            },
            False,
        )
    ]
    result = scan_files([ProjectFile("agent.py", textwrap.dedent(source).encode())], workdir=None)
    (bypass,) = [f for f in result.findings if f.rule_id == "AG305"]
    assert bypass.severity is Severity.HIGH and bypass.confidence is Confidence.HIGH


def test_setattr_spread_of_a_known_tuple_is_the_same_assignment() -> None:
    source = """
        from claude_agent_sdk import ClaudeAgentOptions

        opts = ClaudeAgentOptions(tools=["Read"])
        args = (opts, "permission_mode", "bypassPermissions")
        setattr(*args)
    """
    assert _configs(source) == [
        (4, {"tools": ("Read",), "permission_mode": "bypassPermissions"}, False)
    ]


def test_setattr_with_a_name_not_known_makes_every_option_unknown() -> None:
    for call in ("setattr(opts, name, value)", "setattr(*stuff)"):
        source = f"""
            from claude_agent_sdk import ClaudeAgentOptions

            opts = ClaudeAgentOptions(tools=["Read"])
            {call}
        """
        facts = analyse_python("agent.py", textwrap.dedent(source).encode())
        (cfg,) = facts.configs
        unknown = Unknown(call, "setattr at line 5 with a name not known")
        assert dict(cfg.options) == {"tools": Option(OneOf((("Read",), unknown)), 4, "['Read']")}
        assert cfg.open_ended == call
        assert isinstance(cfg.option("permission_mode").value, Unknown)  # type: ignore[union-attr]

"""The agent rules read the capability model: which built-in tools exist (AG301-AG303) and
whether the cwd is the project (AG210, AG211, AG305) come from the configuration's entry,
worked out once where the model is built. A model that says something the options alone
would not is what the rule reports; a model that cannot tell stays "not known"."""

from __future__ import annotations

import ast
import dataclasses
from pathlib import Path

from agentguard.engine.capability_map import build_map
from agentguard.facts.agents import AgentConfig, Option, ProjectFacts
from agentguard.facts.capabilities import (
    LIVE,
    REMOVED,
    UNKNOWN,
    CapabilityMap,
    CwdReading,
    ToolAccess,
)
from agentguard.facts.workflows import ActionStep
from agentguard.findings import Confidence, Finding, Severity
from agentguard.rules.agent_checks import run_agent_rules

RULES = Path(__file__).resolve().parents[2] / "agentguard" / "rules"


def _cfg(**options: object) -> AgentConfig:
    return AgentConfig(
        engine="claude-agent-sdk",
        path="bot.py",
        line=3,
        label="ClaudeAgentOptions(...)",
        options={k: Option(v, 3, k) for k, v in options.items()},
    )


def _rules(facts: ProjectFacts, model: CapabilityMap, *ids: str) -> list[Finding]:
    return [f for f in run_agent_rules(facts, model) if f.rule_id in ids]


def _with_entry(facts: ProjectFacts, **changes: object) -> CapabilityMap:
    """The map built from ``facts``, its first configuration's entry changed."""
    model = build_map("p", facts, None)
    entry = model.of_config(0)
    assert entry is not None
    return dataclasses.replace(model, agents=(dataclasses.replace(entry, **changes),))


def _row(category: str, state: str, tools: tuple[str, ...]) -> ToolAccess:
    return ToolAccess(category, state, tools, UNKNOWN, (), Confidence.HIGH, reading="as drawn")


def test_the_shell_the_model_says_is_live_is_reported_though_the_options_remove_it() -> None:
    facts = ProjectFacts(configs=(_cfg(tools=()),))
    assert _rules(facts, build_map("p", facts, None), "AG301") == []  # the model's own rows
    model = _with_entry(facts, tools=(_row("shell", LIVE, ("Bash",)),))

    [shell] = _rules(facts, model, "AG301")

    assert shell.message.startswith(
        "claude-agent-sdk configuration leaves the built-in shell tools live: Bash (as drawn)."
    )
    assert (shell.evidence["tools"], shell.evidence["reason"]) == (["Bash"], "as drawn")
    assert shell.confidence is Confidence.HIGH


def test_tools_the_model_says_are_removed_are_not_reported() -> None:
    facts = ProjectFacts(configs=(_cfg(),))  # `tools` unset: every built-in tool by the options
    assert {f.rule_id for f in _rules(facts, build_map("p", facts, None), "AG301", "AG302",
                                      "AG303")} == {"AG301", "AG302", "AG303"}  # fmt: skip
    removed = tuple(_row(c, REMOVED, ()) for c in ("shell", "file", "web"))

    assert _rules(facts, _with_entry(facts, tools=removed), "AG301", "AG302", "AG303") == []


def test_a_configuration_the_model_has_no_entry_for_stays_not_known() -> None:
    facts = ProjectFacts(configs=(_cfg(tools=(), cwd="/srv/agent"),))
    model = dataclasses.replace(build_map("p", facts, None), by_config=())

    tools = _rules(facts, model, "AG301", "AG302", "AG303")
    [workdir] = _rules(facts, model, "AG210")

    # not "no tool" and not "the checkout": may, with low confidence, and says it was not read
    assert [(f.rule_id, f.confidence) for f in tools] == [
        ("AG301", Confidence.LOW),
        ("AG302", Confidence.LOW),
        ("AG303", Confidence.LOW),
    ]
    assert all("may leave" in f.message and "could not be read" in f.message for f in tools)
    assert workdir.confidence is Confidence.LOW
    assert "so which folder it reads is not known" in workdir.message
    assert workdir.evidence["project_markers"] == []


def test_a_cwd_the_model_reads_as_the_project_gives_ag210() -> None:
    facts = ProjectFacts(configs=(_cfg(cwd="/srv/agent"),), project_markers=("docs/",))
    assert _rules(facts, build_map("p", facts, None), "AG210") == []  # another folder
    model = build_map("p", facts, None)
    entry = model.of_config(0)
    assert entry is not None
    said = dataclasses.replace(entry.workdir, cwd=CwdReading(True, 3, (True,)))

    [workdir] = _rules(facts, _with_entry(facts, workdir=said), "AG210")

    assert workdir.message == (
        "claude-agent-sdk agent works in the project: `cwd` = '/srv/agent'. Read, Grep and "
        "Glob need no permission there. The project holds docs/."
    )
    assert (workdir.severity, workdir.confidence) == (Severity.HIGH, Confidence.HIGH)


def test_a_cwd_the_model_cannot_read_stays_unknown() -> None:
    facts = ProjectFacts(configs=(_cfg(cwd="."),), project_markers=("CLAUDE.md",))
    model = build_map("p", facts, None)
    entry = model.of_config(0)
    assert entry is not None
    unknown = dataclasses.replace(entry.workdir, cwd=CwdReading(True, 3, (None,)))

    [workdir] = _rules(facts, _with_entry(facts, workdir=unknown), "AG210")
    [settings] = _rules(facts, _with_entry(facts, workdir=unknown), "AG211")

    assert workdir.confidence is Confidence.LOW
    assert "may work in the project" in workdir.message
    assert workdir.evidence["project_markers"] == []  # the checkout's files are not cited
    assert settings.evidence["project_files"] == []


def test_each_configuration_has_its_entry_also_when_a_workflow_step_draws_it() -> None:
    """A Claude configuration read from an agent action's inputs is drawn in the step's
    entry; the rules find it there, with its tools and its cwd reading."""
    step = ActionStep("anthropics/claude-code-action", "v1", "ci.yml", 10, "review")
    in_step = AgentConfig("claude CLI", "ci.yml", 12, "claude_args", {})
    own = _cfg(cwd="/srv/agent")
    model = build_map("p", ProjectFacts(configs=(own, in_step), action_steps=(step,)), None)

    entries = [model.of_config(0), model.of_config(1)]

    assert [(e.site.kind, e.site.evidence.path) for e in entries if e] == [
        ("code", "bot.py"),
        ("workflow-step", "ci.yml"),
    ]
    assert [e.workdir.cwd for e in entries if e] == [
        CwdReading(True, 3, (False,)),
        CwdReading(False, 12, (True,)),
    ]
    assert all(len([t for t in e.tools if t.reading]) == 3 for e in entries if e)


def test_the_model_is_made_from_facts_not_from_findings() -> None:
    """``runs_as_root`` and ``project_mounted`` come from container findings (AG305 reads
    them); the map built before the rules never reads them."""
    cfg = _cfg(permission_mode="bypassPermissions")
    plain = ProjectFacts(configs=(cfg,))
    judged = ProjectFacts(configs=(cfg,), runs_as_root=True, project_mounted=True)

    assert build_map("p", plain, None) == build_map("p", judged, None)


def test_no_rule_module_makes_the_joins_the_model_holds() -> None:
    """The joins live in the engine's model builder (the rules-pure contract keeps the rules
    from importing it); no rule module defines them again."""
    joins = {"live_tools", "LiveTools", "cwd_reading", "_path_is_project", "_names_project"}
    joins |= {"placements", "holds_at", "copied_files", "unpinned_reason"}
    defined = {
        (path.name, node.name)
        for path in RULES.glob("*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name in joins
    }
    assert defined == set()

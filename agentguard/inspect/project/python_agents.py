"""Python agent code: Claude SDK options, MCP server definitions, other frameworks' tools.

Input is one file's bytes; output is facts (:mod:`agentguard.inspect.project.model`).
Parsing errors propagate to the caller, which records the file as a failed source.
"""

from __future__ import annotations

import ast
import dataclasses
import warnings
from dataclasses import dataclass, field
from typing import Any

from agentguard.context import path_context
from agentguard.facts.agents import CrewClass, ToolDecoration
from agentguard.inspect.project.model import (
    AgentConfig,
    AgentDefinition,
    ContainerHarness,
    FallbackSite,
    GateVerdict,
    McpServer,
    OneOf,
    Option,
    ToolGrant,
    Unknown,
    alternatives,
)
from agentguard.inspect.project.python_eval import Evaluator, plain
from agentguard.inspect.project.python_gates import callback_verdicts
from agentguard.inspect.project.python_import_needles import may_import, spelled_non_ascii
from agentguard.inspect.project.python_scope import (
    CallRef,
    ModuleIndex,
    Scope,
    short,
)

SDK_MODULES = {"claude_agent_sdk": "claude-agent-sdk", "claude_code_sdk": "claude-code-sdk"}
OPTION_CLASSES = {"ClaudeAgentOptions", "ClaudeCodeOptions"}
USE_SITES = {"query", "ClaudeSDKClient"}
_SDK_NEEDLES = tuple(m.encode() for m in SDK_MODULES)


def is_options_class(qualname: str) -> bool:
    parts = qualname.split(".")
    return parts[0] in SDK_MODULES and parts[-1] in OPTION_CLASSES


def _sdk_of(qualname: str) -> str:
    return SDK_MODULES.get(qualname.split(".")[0], qualname.split(".")[0])


@dataclass
class PythonFacts:
    configs: list[AgentConfig] = field(default_factory=list)
    grants: list[ToolGrant] = field(default_factory=list)
    harnesses: list[ContainerHarness] = field(default_factory=list)
    mcp_servers: list[McpServer] = field(default_factory=list)
    fallbacks: list[FallbackSite] = field(default_factory=list)
    definitions: list[AgentDefinition] = field(default_factory=list)
    crew_classes: list[CrewClass] = field(default_factory=list)  # crewAI's @CrewBase
    # tools decorated onto an agent imported from another module (the map's)
    tool_decorations: list[ToolDecoration] = field(default_factory=list)
    parsed: bool = True  # False: no reader could find anything in it, so it was not parsed


@dataclass(frozen=True)
class Wanted:
    """Which readers can find anything in a file, from its bytes alone (the second-stage
    pre-filter). Each test is a necessary condition of its reader's finding anything: the
    names it matches, as the file must spell them (through its imports or in place)."""

    claude: bool
    mcp: bool
    grants: bool
    fallbacks: bool
    option_fallbacks: bool
    harnesses: bool = False
    definitions: bool = False  # agent definitions for the map (no rule reads them)
    # `@X.tool` onto an agent `X` imported from another module (the map's)
    decorations: bool = False

    @classmethod
    def of(cls, data: bytes, *, risk_readers: bool = True, path: str | None = None) -> Wanted:
        """``risk_readers`` False: the file passed the first pre-filter for the map's
        definitions alone (:func:`~agentguard.inspect.project.python_prefilter.python_risk_may_matter`
        said no), so only that reader may read it. ``path``: the file's, when known: a
        test file is not read for definitions (:func:`analyse_python`), so its test is
        not made."""
        from agentguard.inspect.project.python_api_tools import may_declare
        from agentguard.inspect.project.python_definitions import may_define
        from agentguard.inspect.project.python_fallback_filter import may_switch_model
        from agentguard.inspect.project.python_fallback_options import may_take_fallbacks
        from agentguard.inspect.project.python_frameworks import may_grant
        from agentguard.inspect.project.python_harness import may_start_containers
        from agentguard.inspect.project.python_mcp_servers import may_declare_servers
        from agentguard.inspect.project.python_tool_needle import may_decorate_elsewhere

        defines = (path is None or path_context(path) != "test") and may_define(data)
        decorates = may_decorate_elsewhere(data)
        if not risk_readers:
            return cls(False, False, False, False, False, False, defines, decorates)
        if spelled_non_ascii(data):  # (names no test of bytes sees: every reader reads it)
            ours = path is None or path_context(path) != "test"
            return cls(True, True, True, b"except" in data, True, True, ours, True)
        claude = may_import(data, _SDK_NEEDLES)  # (_claude_configs' own test)
        mcp = may_declare_servers(data)
        option_fallbacks = may_take_fallbacks(data)
        harnesses = may_start_containers(data)
        # A file parsed for one reader is read by the grant and fallback readers whatever
        # their tests say: on a tree that is there already they find nothing faster than
        # their tests tell that they will find nothing (the tests are necessary conditions:
        # the same facts either way). The other readers cost more than their tests. (A
        # file's definitions count where its path is known: analyse_python drops them
        # from a test file, which may then be parsed for nothing else.)
        parsed = claude or mcp or option_fallbacks or harnesses or (defines and path is not None)
        grants = parsed or may_grant(data) or may_declare(data)
        return cls(
            claude=claude,
            mcp=mcp,
            grants=grants,
            fallbacks=b"except" in data and (grants or may_switch_model(data)),
            option_fallbacks=option_fallbacks,
            harnesses=harnesses,
            definitions=defines,
            decorations=decorates,
        )

    @classmethod
    def every(cls, data: bytes) -> Wanted:
        """Every reader, each under its own rule only (the MCP reader's: a file that never
        names MCP declares no server): what the pre-filter must equal."""
        return cls(True, b"mcp" in data.lower(), True, True, True, True, True, True)

    def any(self) -> bool:
        return (
            self.claude
            or self.mcp
            or self.grants
            or self.fallbacks
            or self.option_fallbacks
            or self.harnesses
            or self.definitions
            or self.decorations
        )


def analyse_python(
    path: str, data: bytes, *, origin: str = "project", wanted: Wanted | None = None
) -> PythonFacts:
    """Parse one Python file and extract agent facts. Raises SyntaxError/ValueError.

    A file in which no reader can find anything (``wanted``, from its bytes unless given)
    is not parsed: ``parsed`` is then False and the facts are empty."""
    wanted = Wanted.of(data) if wanted is None else wanted
    if (wanted.definitions or wanted.decorations) and path_context(path) == "test":
        # the map's plain agents (no risky tool) in a test suite are the suite's fixtures,
        # not agents anyone runs: not drawn, and a test file is not parsed for them alone
        wanted = dataclasses.replace(wanted, definitions=False, decorations=False)
    if not wanted.any():
        return PythonFacts(parsed=False)
    with warnings.catch_warnings():  # the project's own warnings (bad escapes) are not ours
        warnings.simplefilter("ignore")
        tree = ast.parse(data, filename=path)
    index = ModuleIndex(tree)
    ev = Evaluator(index, lambda q: is_options_class(q) or q == "dataclasses.replace")
    out = PythonFacts()
    if wanted.claude:
        _claude_configs(path, index, ev, out, origin)
    if wanted.mcp:
        from agentguard.inspect.project.python_mcp_servers import mcp_servers

        out.mcp_servers.extend(mcp_servers(path, index, ev))
    from agentguard.inspect.project.python_api_tools import api_tool_grants
    from agentguard.inspect.project.python_fallback import fallback_sites
    from agentguard.inspect.project.python_fallback_options import option_fallbacks
    from agentguard.inspect.project.python_frameworks import framework_grants

    if wanted.grants:
        out.grants.extend(framework_grants(path, index, ev))
        out.grants.extend(api_tool_grants(path, tree, index))
    if wanted.fallbacks:
        out.fallbacks.extend(fallback_sites(path, index, ev))
    if wanted.option_fallbacks:
        out.fallbacks.extend(option_fallbacks(path, index, ev))
    if wanted.harnesses:
        from agentguard.inspect.project.python_harness import container_harnesses

        out.harnesses.extend(container_harnesses(path, tree))
    if wanted.decorations:
        from agentguard.inspect.project.python_tool_imports import tool_decorations

        out.tool_decorations.extend(tool_decorations(path, index, ev))
    if wanted.definitions:
        from agentguard.inspect.project.python_definitions import agent_definitions

        out.definitions.extend(agent_definitions(path, index, ev))
        if "crewai" in index.import_roots:
            from agentguard.inspect.project.python_crews import crew_classes

            out.crew_classes.extend(crew_classes(path, tree, index, ev))
    return out


# --------------------------------------------------------------------------------------
# Claude SDK options
# --------------------------------------------------------------------------------------


def _options_from_call(
    node: ast.Call, scope: Scope, ev: Evaluator
) -> tuple[dict[str, Option], str | None]:
    options: dict[str, Option] = {}
    open_ended: str | None = None
    for kw in node.keywords:
        if kw.arg is None:
            spread = ev.eval(kw.value, scope)
            if isinstance(spread, dict) and "**" not in spread:
                for k, v in spread.items():
                    options[k] = Option(plain(v), kw.value.lineno, short(kw.value))
            else:
                if isinstance(spread, dict):
                    for k, v in spread.items():
                        if k != "**":
                            options[k] = Option(plain(v), kw.value.lineno, short(kw.value))
                open_ended = f"**{short(kw.value, 40)}"
            continue
        options[kw.arg] = Option(plain(ev.eval(kw.value, scope)), kw.value.lineno, short(kw.value))
    if node.args:
        open_ended = open_ended or "positional arguments"
    return options, open_ended


def _claude_configs(
    path: str, index: ModuleIndex, ev: Evaluator, out: PythonFacts, origin: str
) -> None:
    if not index.import_roots & SDK_MODULES.keys():
        return  # every callee below resolves to an import of the SDK
    built: dict[int, AgentConfig] = {}  # id(call node) -> config
    order: list[int] = []
    for node, scope in index.calls:
        names = [q for q in ev.qualnames(node.func, scope) if is_options_class(q)]
        if not names:
            continue
        q = names[0]
        options, open_ended = _options_from_call(node, scope, ev)
        built[id(node)] = AgentConfig(
            engine=" or ".join(dict.fromkeys(_sdk_of(n) for n in names)),
            path=path,
            line=node.lineno,
            label=f"{q.split('.')[-1]}(...)",
            options=options,
            origin=origin,
            open_ended=open_ended,
            gates=callback_verdicts(_keywords(node), scope, index),
        )
        order.append(id(node))

    # dataclasses.replace(base, option=...): a configuration derived from another
    for node, scope in index.calls:
        if ev.qualname(node.func, scope) != "dataclasses.replace" or not node.args:
            continue
        bases = [
            built[id(a.node)]
            for a in alternatives(ev.eval(node.args[0], scope))
            if isinstance(a, CallRef) and id(a.node) in built
        ]
        if not bases:
            continue
        changes, open_ended = _options_from_call(
            ast.Call(func=node.func, args=[], keywords=node.keywords), scope, ev
        )
        base = bases[0]
        merged = dict(base.options)
        if len(bases) > 1:  # the base depends on a branch: each option is one of them
            for name in {k for b in bases for k in b.options}:
                vals = tuple(b.options[name].value if name in b.options else None for b in bases)
                merged[name] = Option(OneOf(vals), node.lineno, short(node.args[0]))
        merged.update(changes)
        built[id(node)] = AgentConfig(
            engine=base.engine,
            path=path,
            line=node.lineno,
            label=f"dataclasses.replace(...) of the configuration at line {base.line}",
            options=merged,
            origin=origin,
            open_ended=open_ended or base.open_ended,
            gates=_regated(base.gates if len(bases) == 1 else (), node, scope, index),
        )
        order.append(id(node))

    # obj.option = value after construction
    for target, value, scope, conditional in index.attr_assigns:
        if not isinstance(target.value, ast.Name):
            continue
        refs = [a for a in alternatives(ev.eval(target.value, scope)) if isinstance(a, CallRef)]
        for ref in refs:
            cfg = built.get(id(ref.node))
            if cfg is None:
                continue
            new = Option(plain(ev.eval(value, scope)), target.lineno, short(value))
            old = cfg.options.get(target.attr)
            if conditional or len(refs) > 1:
                before = old.value if old else None
                new = Option(OneOf((before, new.value)), target.lineno, short(value))
            cfg = _replace_option(cfg, target.attr, new)
            if target.attr in ("can_use_tool", "hooks") and isinstance(value, ast.expr):
                change = ast.Call(
                    func=target, args=[], keywords=[ast.keyword(arg=target.attr, value=value)]
                )
                gates = _regated(cfg.gates, change, scope, index)
                if conditional or len(refs) > 1:  # one reading keeps the old one: a gate
                    gates = tuple(g for g in gates if g in cfg.gates)  # only if both were
                cfg = dataclasses.replace(cfg, gates=gates)
            built[id(ref.node)] = cfg

    # setattr(obj, name, value) with a name not written literally: any option may be set
    for call, scope in index.setattrs_unknown:
        for ref in alternatives(ev.eval(call.args[0], scope)):
            if isinstance(ref, CallRef) and id(ref.node) in built:
                built[id(ref.node)] = _set_unknown(built[id(ref.node)], call)
    # setattr(*args): the arguments when they are known, else any option of any configuration
    for call, scope in index.setattrs_starred:
        first = call.args[0] if len(call.args) == 1 else None
        spread = ev.eval(first.value, scope) if isinstance(first, ast.Starred) else None
        if isinstance(spread, tuple) and len(spread) == 3 and isinstance(spread[1], str):
            for ref in alternatives(spread[0]):
                if isinstance(ref, CallRef) and id(ref.node) in built:
                    new = Option(plain(spread[2]), call.lineno, short(call))
                    built[id(ref.node)] = _replace_option(built[id(ref.node)], spread[1], new)
            continue
        for key in order:
            built[key] = _set_unknown(built[key], call)

    ambiguous: dict[int, str] = {}
    defaults: list[AgentConfig] = []
    for node, scope in index.calls:
        uses = [
            n
            for n in ev.qualnames(node.func, scope)
            if n.split(".")[0] in SDK_MODULES and n.split(".")[-1] in USE_SITES
        ]
        if not uses:
            continue
        q = uses[0]
        expr: ast.expr | None = None
        for kw in node.keywords:
            if kw.arg == "options":
                expr = kw.value
        if expr is None and q.endswith("ClaudeSDKClient") and node.args:
            expr = node.args[0]
        used: Any = None if expr is None else ev.eval(expr, scope)
        alts = alternatives(used)
        refs = [a for a in alts if isinstance(a, CallRef) and id(a.node) in built]
        has_default = any(a is None for a in alts)
        if has_default:
            defaults.append(
                AgentConfig(
                    engine=_sdk_of(q),
                    path=path,
                    line=node.lineno,
                    label=f"{q.split('.')[-1]}() without options (SDK defaults)",
                    options={},
                    ambiguous=len(alts) > 1,
                    ambiguity=(
                        f"line {node.lineno}: options may be None or a configuration, "
                        "depending on a branch"
                        if len(alts) > 1
                        else None
                    ),
                    origin=origin,
                )
            )
        if len(refs) + (1 if has_default else 0) > 1:
            lines = ", ".join(str(r.node.lineno) for r in refs)
            for r in refs:
                ambiguous[id(r.node)] = (
                    f"line {node.lineno}: `{short(expr, 40) if expr else 'options'}` is one of "
                    f"the configurations built at lines {lines}"
                    + (" or the SDK defaults" if has_default else "")
                    + ", depending on a branch"
                )
    for key in order:
        cfg = built[key]
        if key in ambiguous:
            cfg = dataclasses.replace(cfg, ambiguous=True, ambiguity=ambiguous[key])
        out.configs.append(cfg)
    out.configs.extend(defaults)


def _replace_option(cfg: AgentConfig, name: str, opt: Option) -> AgentConfig:
    return dataclasses.replace(cfg, options={**cfg.options, name: opt})


def _set_unknown(cfg: AgentConfig, call: ast.Call) -> AgentConfig:
    """After ``setattr`` with a name not known: every option may have been set."""
    unknown = Unknown(short(call, 60), f"setattr at line {call.lineno} with a name not known")
    options = {k: Option(OneOf((o.value, unknown)), o.line, o.expr) for k, o in cfg.options.items()}
    return dataclasses.replace(
        cfg, options=options, open_ended=cfg.open_ended or short(call, 40), gates=()
    )


def _keywords(node: ast.Call) -> dict[str, ast.expr]:
    return {kw.arg: kw.value for kw in node.keywords if kw.arg is not None}


def _regated(
    before: tuple[GateVerdict, ...], node: ast.Call, scope: Scope, index: ModuleIndex
) -> tuple[GateVerdict, ...]:
    """The verdicts after a change of options: those of the changed keywords read again
    (a changed option that cannot be read has none: unknown)."""
    changed = _keywords(node)
    kept = tuple(
        g
        for g in before
        if not (g.option == "can_use_tool" and "can_use_tool" in changed)
        and not (g.option.startswith("PreToolUse") and "hooks" in changed)
    )
    return kept + callback_verdicts(changed, scope, index)

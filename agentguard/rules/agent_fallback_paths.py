"""AG321: the fallback path is built with other tools or another system prompt than the
primary (the fallback witness, statically). Reads the builds the AG320 reader found in
the ``try`` body and in the handler; compares only calls to the same callee whose values
the text shows: an unknown is never a finding."""

from __future__ import annotations

from agentguard.facts.agents import FallbackSite, PathBuild
from agentguard.facts.values import Unknown
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.base import Rule, register


@register
class FallbackPathDiffers(Rule):
    """The fallback model path is built with other tools or another system prompt.

    ## What it does
    Where an `except` handler answers with another model (the AG320 reader), compares what
    the primary path (the `try` body) and the fallback path (the handler) are built with:
    the tools (`tools=`, `allowed_tools=`, `mcp_servers=`...) and the system prompt
    (`system_prompt=`, `instructions=`, `system=`) of the same call on both sides
    (`ClaudeAgentOptions(...)`, `Agent(...)`, `client.messages.create(...)`). Reports the
    difference when the text shows both values. A value the text does not show (a
    parameter, `**kwargs`, a call) is unknown and not reported.

    ## Why is this bad?
    A fallback should answer worse, not do other things. A fallback with fewer tools
    hides the failure behind an agent that cannot do what was asked; one with more, or
    another prompt, is an agent nobody reviewed, running exactly when something already
    went wrong.

    ## Example
    ```python
    try:
        opts = ClaudeAgentOptions(model=PRIMARY, allowed_tools=["Read", "Grep", "mcp__t__a"])
    except Exception:
        opts = ClaudeAgentOptions(model=BACKUP, allowed_tools=["Read"])
    ```

    ## Use instead
    Build both paths with one function that takes the model, so they differ in it alone:
    ```python
    def make_options(model: str) -> ClaudeAgentOptions:
        return ClaudeAgentOptions(model=model, allowed_tools=TOOLS, system_prompt=PROMPT)
    ```
    """

    id = "AG321"
    name = "fallback-path-differs"
    title = "Fallback path built with other tools or another system prompt"
    default_severity = Severity.MEDIUM
    family = "agent-tools"


def _known(value: object) -> bool:
    return not isinstance(value, Unknown)


def _pairs(site: FallbackSite) -> list[tuple[PathBuild, PathBuild]]:
    """The first build of each callee found on both paths."""
    out: list[tuple[PathBuild, PathBuild]] = []
    for b in site.fallback:
        a = next((p for p in site.primary if p.callee == b.callee), None)
        if a is not None and all(a is not x for x, _ in out):
            out.append((a, b))
    return out


def _tool_diff(a: PathBuild, b: PathBuild) -> tuple[str, dict[str, JSONValue]] | None:
    if not (_known(a.tools) and _known(b.tools)):
        return None
    if a.tools_key and b.tools_key and a.tools_key != b.tools_key:
        return None  # `tools=` on one side, `allowed_tools=` on the other: not comparable
    key = a.tools_key or b.tools_key
    if key is None or (key == "allowed_tools" and None in (a.tools, b.tools)):
        return None  # no allow-list is not "no tools" (every built-in tool is live)
    primary, fallback = tuple(a.tools or ()), tuple(b.tools or ())
    if set(primary) == set(fallback):
        return None
    missing = [t for t in primary if t not in fallback]
    extra = [t for t in fallback if t not in primary]
    parts = []
    if missing:
        parts.append(f"without {', '.join(f'`{t}`' for t in missing)}")
    if extra:
        parts.append(f"with {', '.join(f'`{t}`' for t in extra)} added")
    text = (
        f"the fallback path has {len(fallback)} tools (`{key}`), the primary {len(primary)} "
        f"({'; '.join(parts)})"
    )
    return text, {"primary_tools": list(primary), "fallback_tools": list(fallback), "key": key}


def _prompt_diff(a: PathBuild, b: PathBuild) -> str | None:
    if not (_known(a.prompt) and _known(b.prompt)) or a.prompt == b.prompt:
        return None
    if a.prompt is None:
        return "the fallback path sets a system prompt the primary does not"
    if b.prompt is None:
        return "the fallback path is built without the primary's system prompt"
    return "the fallback path is built with another system prompt"


def check_fallback_paths(site: FallbackSite) -> list[Finding]:
    out: list[Finding] = []
    for a, b in _pairs(site):
        tools = _tool_diff(a, b)
        prompt = _prompt_diff(a, b)
        if tools is None and prompt is None:
            continue
        said = [t for t in (tools[0] if tools else None, prompt) if t]
        evidence: dict[str, JSONValue] = {
            "callee": a.callee,
            "primary_line": a.line,
            "fallback_line": b.line,
            "primary_model": a.model,
            "fallback_model": b.model,
            **(tools[1] if tools else {}),
            "prompt_differs": prompt is not None,
        }
        model = f" (model {b.model!r})" if b.model else ""
        out.append(
            FallbackPathDiffers.finding(
                f"`{a.callee}(...)` at line {b.line}{model}: {'; and '.join(said)}. The "
                "fallback answers with other abilities, not only with another model.",
                locations=[
                    Location(path=site.path, line=b.line, note="fallback path"),
                    Location(path=site.path, line=a.line, note="primary path"),
                ],
                fix=Fix(
                    "Build both paths with one function that takes the model (the tools and "
                    "the system prompt the same), so the fallback differs in its model alone."
                ),
                evidence=evidence,
                confidence=Confidence.HIGH,
            )
        )
    return out

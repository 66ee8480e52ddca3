"""AG6xx: the locked environment does not start (``lock --smoke``, ``check --smoke``).

Pure verdicts over :class:`~agentguard.smoke.facts.SmokeFacts`: what the scratch install,
the probe child and the stdio MCP servers did. What could not be tried is a skipped
source of the run, never a finding and never a pass.
"""

from __future__ import annotations

from agentguard.facts.smoke import FAILED, NOT_IN_REGISTRY, Probe, SmokeFacts
from agentguard.findings import Confidence, Finding, JSONValue, Location, Severity
from agentguard.rules.base import Rule, register
from agentguard.rules.smoke_crash import crash_message

_FAMILY = "smoke"


@register
class LockDoesNotInstall(Rule):
    """The lock does not install into a fresh environment.

    ## What it does
    With `--smoke`, installs the lock into a scratch environment in a temporary folder, as
    a deployment would (`uv pip sync --require-hashes`, the project's own lock written out
    as requirements when it has one), with the Python the project targets. Reports the
    lock when the installer refuses it (a hash that does not match, a pin that conflicts).
    An index that cannot be reached, or a platform the lock has no files for, is a skipped
    source, not this finding.

    ## Why is this bad?
    A lock that does not install is a deploy that fails, found at deploy time.

    ## Example
    A `requirements.lock` edited by hand whose hash no longer matches the wheel.

    ## Use instead
    Re-lock (`agentguard lock`) and commit both lock files.
    """

    id = "AG601"
    name = "lock-does-not-install"
    title = "The lock does not install into a fresh environment"
    default_severity = Severity.HIGH
    family = _FAMILY


@register
class AgentImportFails(Rule):
    """Importing the agent SDK the code uses fails in the locked environment.

    ## What it does
    In a child process of the scratch environment, imports each agent SDK or MCP module
    the project's agent code imports (`from claude_agent_sdk import query, tool`), and
    each name it takes from it. Reports the exception: its type, message, the frame of
    the package that raised it, and the versions involved.

    ## Why is this bad?
    The agent does not start. An `ImportError` at start-up is often caught by a
    supervisor or a fallback and turned into a quieter failure.

    ## Example
    `mcp-agent` 0.2.6 with mcp 2.3.0: `from mcp.server.fastmcp import FastMCP` fails.

    ## Use instead
    Cap the dependency that moved to the major the SDK was built against (the fix of the
    AG101 finding on that range, when there is one), re-lock, and run `--smoke` again.
    """

    id = "AG602"
    name = "agent-import-fails"
    title = "An agent SDK module does not import in the locked environment"
    default_severity = Severity.HIGH
    family = _FAMILY


@register
class InProcessServerFails(Rule):
    """An in-process MCP server cannot be built, or cannot list its tools.

    ## What it does
    For each in-process MCP server the code builds (`create_sdk_mcp_server`, FastMCP, the
    `mcp` server class), builds one in a child of the scratch environment with a
    one-tool probe (the project's own modules are never imported: that would run its
    code) and lists its tools through the SDK's own path (the Claude SDK's MCP router).
    Reports the exception of the stage that failed: construction or `tools/list`.

    ## Why is this bad?
    This is the incident: `claude-agent-sdk` 0.2.95 with `mcp` 2.3.0 raises
    `AttributeError: 'Server' object has no attribute 'list_tools'` in
    `create_sdk_mcp_server`, so the agent's tool server never starts; an exception
    handler that falls back to another model hides it.

    ## Example
    ```toml
    dependencies = ["claude-agent-sdk==0.2.95"]  # mcp>=1.23.0 resolves to mcp 2.3.0
    ```

    ## Use instead
    ```toml
    dependencies = ["claude-agent-sdk==0.2.95", "mcp>=1.23.0,<2.0.0"]
    ```
    """

    id = "AG603"
    name = "in-process-mcp-server-fails"
    title = "An in-process MCP server does not start in the locked environment"
    default_severity = Severity.HIGH
    family = _FAMILY


@register
class StdioServerFails(Rule):
    """A stdio MCP server the project launches does not start or does not answer.

    ## What it does
    Starts each stdio MCP server the project launches (`.mcp.json`, Claude settings,
    `mcp_servers=` in code) through `npx`, `uvx` or `python -m`, with the minimal
    environment of the smoke run, and speaks MCP to it (`initialize`, `tools/list`)
    under a deadline. Reports a server that exits, hangs past the deadline or answers
    an error. A server whose configuration declares environment variables (it gets
    none) and does not start is "needs credentials": a skipped source, not this finding.

    ## Why is this bad?
    The agent starts without the tools it was given, or does not start.

    ## Example
    A server package whose latest release needs a newer Node than the image has.

    ## Use instead
    Pin the server's package to a release that starts (`npx -y pkg@1.2.3`), and run
    `--smoke` again.
    """

    id = "AG604"
    name = "stdio-mcp-server-fails"
    title = "A stdio MCP server does not start"
    default_severity = Severity.HIGH
    family = _FAMILY


@register
class ServerPackageNotInRegistry(Rule):
    """The package a stdio MCP server is launched from is held by no registry.

    ## What it does
    Reports a stdio MCP server whose launcher (`npx`, `uvx`) answered that the registry
    has no such package.

    ## Why is this bad?
    The server cannot start anywhere the registry is the public one. And a name that is
    free on the public registry can be registered by anyone: the next `npx -y` would run
    their code (a dependency-confusion hole).

    ## Example
    ```json
    {"mcpServers": {"tracker": {"command": "npx", "args": ["-y", "@acme/tracker-mcp"]}}}
    ```

    ## Use instead
    Name the package as published, pinned (`@scope/name@1.2.3`); a private package is
    installed from the private registry (an `.npmrc` scope mapping) into the image, not
    fetched by `npx` at start.
    """

    id = "AG605"
    name = "mcp-server-package-not-in-registry"
    title = "An MCP server's package is held by no registry"
    default_severity = Severity.MEDIUM
    family = _FAMILY


def _where(p: Probe) -> list[Location]:
    return [Location(path=p.path, line=p.line, note=f"smoke: {p.kind} {p.subject}")]


def check_smoke(facts: SmokeFacts) -> list[Finding]:
    out: list[Finding] = []
    inst = facts.install
    if inst is not None and inst.status == FAILED:
        out.append(
            LockDoesNotInstall.finding(
                f"{inst.lock} does not install into a fresh Python {inst.interpreter} "
                f"environment with `uv pip sync`: {inst.detail}",
                locations=[Location(path=inst.lock, note="smoke: install")],
                fix="Re-lock (`agentguard lock`) and commit both lock files; then run `--smoke` again.",
                evidence={
                    "lock": inst.lock,
                    "interpreter": inst.interpreter,
                    "output": list(inst.output[-8:]),
                },
            )
        )
    for p in facts.probes:
        if p.kind == "stdio":
            out += _stdio(p)
            continue
        if p.status != FAILED:
            continue
        msg, fix, evidence = crash_message(p, facts)
        rule = AgentImportFails if p.kind == "import" else InProcessServerFails
        out.append(rule.finding(msg, locations=_where(p), fix=fix, evidence=evidence))
    return out


def _stdio(p: Probe) -> list[Finding]:
    evidence: dict[str, JSONValue] = {
        "server": p.subject,
        "package": p.package,
        "stage": p.stage,
        "output": list(p.output[-8:]),
    }
    if p.status == NOT_IN_REGISTRY:
        return [
            ServerPackageNotInRegistry.finding(
                f"MCP server {p.subject!r}: no registry holds its package "
                f"{p.package or '(unknown)'}; it cannot start from the public registry, and "
                "anyone may publish that name.",
                locations=_where(p),
                fix=(
                    f"Name the package as published, pinned (`{p.package or 'name'}@<version>`); "
                    "install a private package from the private registry into the image instead "
                    "of fetching it with `npx -y` at start."
                ),
                evidence=evidence,
                confidence=Confidence.MEDIUM,  # a private registry may hold it
            )
        ]
    if p.status != FAILED:
        return []
    return [
        StdioServerFails.finding(
            f"MCP server {p.subject!r} ({p.package or 'its command'}) does not start: {p.detail}.",
            locations=_where(p),
            fix=(
                f"Pin the server's package to a release that starts (`{p.package or 'pkg'}@<version>`"
                " for npx, `name==<version>` for uvx), and run `--smoke` again."
            ),
            evidence=evidence,
        )
    ]

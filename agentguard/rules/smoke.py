"""AG6xx: the locked environment does not start (``lock --smoke``, ``check --smoke``).

Pure verdicts over :class:`~agentguard.smoke.facts.SmokeFacts`: what the scratch install,
the probe child and the stdio MCP servers did. What could not be tried is a skipped
source of the run, never a finding and never a pass.
"""

from __future__ import annotations

import re

from agentguard import escape
from agentguard.facts.smoke import FAILED, NOT_IN_REGISTRY, Crash, Crossing, Probe, SmokeFacts
from agentguard.findings import Confidence, Finding, Fix, JSONValue, Location, Severity
from agentguard.rules.base import Rule, register

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


def _canon(name: str | None) -> str:
    return re.sub(r"[-_.]+", "-", name or "").lower()


def _where(p: Probe) -> list[Location]:
    return [Location(path=p.path, line=p.line, note=f"smoke: {p.kind} {p.subject}")]


def _crossing(c: Crash, facts: SmokeFacts, p: Probe) -> tuple[Crossing, str | None] | None:
    """The AG101 crossing that explains the crash (the package whose object lacks the
    attribute, or whose frame raised, is the child of a range across majors), and the
    version of it installed: the crossing whose locked pin is that version first."""
    candidates = (
        (c.owner_package, c.owner_version),
        (c.frame_package, c.frame_version),
        (p.package, p.version),  # the probed package itself moved (its own API went)
    )
    for name, seen in candidates:
        if not name:
            continue
        mine = [x for x in facts.crossings if _canon(x.package) == _canon(name)]
        installed = facts.version_of(name) or seen
        exact = [x for x in mine if installed in x.locked]
        if exact or mine:
            return (exact or mine)[0], installed
    return None


def _admits(snippet: str | None, package: str, version: str | None) -> bool | None:
    """Whether AG101's snippet (``name>=a,<b ; marker``) admits ``version``; None: unknown."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not snippet or not version:
        return None
    try:
        req = Requirement(snippet)
    except InvalidRequirement:
        return None
    if _canon(req.name) != _canon(package):
        return None
    return req.specifier.contains(version, prereleases=True)


def _crossing_fix(cross: Crossing, installed: str | None, caller: str | None) -> Fix:
    """A fix that leaves the major that crashed: AG101's when its snippet does (without
    its other choice), else a cap below the installed major."""
    again = " Then re-lock and run `--smoke` again."
    if _admits(cross.snippet, cross.package, installed) is False:
        text = cross.fix.split(" Or `")[0].rstrip()
        return Fix(
            text + ("" if text.endswith(".") else ".") + again,
            snippet=escape.snippet(cross.snippet) if cross.snippet else None,
        )
    major = next(
        (
            m
            for m in reversed(cross.majors)
            if installed and (installed == m or installed.startswith(m + "."))
        ),
        None,
    )
    if major is None:
        return Fix(
            f"Cap {cross.package} at the major the code was written against (the lock admits "
            f"{', '.join(cross.majors)}), or port the code to the locked one." + again
        )
    snippet = f"{cross.package}<{major}"
    other = (
        f"or move to a release of {caller} that works with {cross.package} {major}"
        if caller and _canon(caller) != _canon(cross.package)
        else f"or port the code to {cross.package} {major}"
    )
    who = caller if caller and _canon(caller) != _canon(cross.package) else "the code"
    return Fix(
        f"Cap {cross.package} below the major that fails here: add `{snippet}` to your "
        f"requirements ({who} was written against an earlier major), {other}." + again,
        snippet=escape.snippet(snippet),
    )


def _crash_message(p: Probe, facts: SmokeFacts) -> tuple[str, Fix, dict[str, JSONValue]]:
    c = p.crash
    what = {
        "import": f"importing `{p.subject}`",
        "sdk-server": "`create_sdk_mcp_server()`",
        "fastmcp": "building a FastMCP server",
        "mcp-server": "building an `mcp` Server",
    }.get(p.kind, p.kind)
    stage = " (listing its tools)" if p.stage == "list-tools" else ""
    pkg = f"{p.package} {p.version}" if p.package and p.version else (p.package or p.subject)
    evidence: dict[str, JSONValue] = {
        "probe": p.kind,
        "subject": p.subject,
        "stage": p.stage,
        "package": p.package,
        "version": p.version,
        "installed_into": facts.install.interpreter if facts.install else None,
    }
    if c is None:
        msg = f"In the locked environment, {what}{stage} of {pkg} fails: {p.detail}."
        fix = Fix(
            "Run the same import in the environment of the lock to see the failure, fix the "
            "pin it points to, re-lock and run `--smoke` again."
        )
        evidence["output"] = list(p.output[-8:])
        return msg, fix, evidence
    evidence["crash"] = c.to_json()
    at = f" at {c.frame}" if c.frame else ""
    src = f" (`{c.frame_source}`)" if c.frame_source else ""
    msg = f"In the locked environment, {what}{stage} of {pkg} raises {c.exc_type}: {c.message}{at}{src}."
    found = _crossing(c, facts, p)
    if c.attribute and c.owner and c.owner_package:
        owner = f"{c.owner_package} {c.owner_version}" if c.owner_version else c.owner_package
        verb = "removed" if found is not None else "has no"
        if c.exc_type == "AttributeError":
            caller = (
                f"{c.frame_package} {c.frame_version}"
                if c.frame_package and c.frame_version
                else pkg
            )
            cls = c.owner.rsplit(".", 1)[-1]
            msg += f" {owner} {verb} `{cls}.{c.attribute}`, which {caller} calls."
        else:  # `from module import name`: the owner is the module
            caller = (
                f"{c.frame_package} {c.frame_version}"
                if c.frame_package and c.frame_version
                else "the project's code"
            )
            msg += f" {owner} {verb} `{c.owner}.{c.attribute}`, which {caller} imports."
    if found is not None:
        cross, installed = found
        through = (
            "the project's own range, which admits"
            if cross.parent == "project"
            else f"a range of {cross.parent}"
            + (f" {cross.parent_version}" if cross.parent_version else "")
            + " that admits"
        )
        msg += (
            f" The lock takes {cross.package} {installed or ', '.join(cross.locked)} through "
            f"{through} majors {', '.join(cross.majors)} (AG101)."
        )
        evidence["crossing"] = {
            "package": cross.package,
            "locked": list(cross.locked),
            "parent": cross.parent,
        }
        return msg, _crossing_fix(cross, installed, c.frame_package), evidence
    blame = c.owner_package or c.frame_package or p.package or p.subject
    if blame == p.package and not c.owner_package:
        fix = Fix(
            f"Pin {blame} to the release your code was written against (the version of your last "
            f"working deploy), or port the code to {pkg}; re-lock and run `--smoke` again."
        )
    else:
        fix = Fix(
            f"Pin {blame} to the release {pkg} was built and tested against (the range its "
            "later releases declare, or the version of your last working deploy), re-lock and "
            "run `--smoke` again."
        )
    return msg, fix, evidence


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
        msg, fix, evidence = _crash_message(p, facts)
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

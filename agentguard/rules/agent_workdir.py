"""AG21x: the agent's working directory is the project, and what it loads from there.

Pure functions over :mod:`agentguard.facts.agents` facts (no I/O). Whether the agent's
``cwd`` names the project is read from the capability model (``Workdir.cwd``), where it is
worked out once against the image's working directory.
"""

from __future__ import annotations

from agentguard.facts.agents import AgentConfig, ProjectFacts
from agentguard.facts.capabilities import CwdReading
from agentguard.facts.values import Unknown, alternatives, describe
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.rules.base import Rule, register


@register
class AgentWorkdirIsProject(Rule):
    """The agent engine's working directory is the project itself.

    ## What it does
    Reads the working directory given to the agent engine: `cwd=` in
    `ClaudeAgentOptions`, `cwd` in TypeScript `query()` options, and the directory a
    `claude` command runs in. Reports `"."`, `os.getcwd()`, `process.cwd()`,
    `Path(__file__).parent` and its parents (the repository root), the image's working
    directory, and an unset `cwd` (the process's directory: usually the checkout; low
    confidence). A value that cannot be read statically is reported with low confidence
    as a directory that may be the project, citing none of the project's files (what it
    reads is not known). A folder made at run time (`tempfile.mkdtemp()`,
    `tempfile.gettempdir()`, a `tempfile.TemporaryDirectory()` entered with `with`,
    pytest's `tmp_path` in a test) is not the project and is not reported; AG211 then
    cites none of the checkout's settings files either.

    ## Why is this bad?
    Inside its working directory the engine's `Read`, `Grep` and `Glob` need no
    permission: design notes, plans, `.env` files and keys of the project become the
    model's context, and its project settings and `CLAUDE.md` are loaded as instructions.

    ## Example
    ```python
    ClaudeAgentOptions(cwd=Path(__file__).parent)
    ```

    ## Use instead
    Give the agent a folder of its own that holds only the task's inputs:
    ```python
    ClaudeAgentOptions(cwd="/srv/agent/work")
    ```
    """

    id = "AG210"
    name = "agent-workdir-is-project"
    title = "Agent working directory is the project"
    default_severity = Severity.HIGH
    family = "workdir"


@register
class ProjectSettingsLoaded(Rule):
    """Project settings and `CLAUDE.md` are loaded from the agent's working directory.

    ## What it does
    Reports a Claude agent configuration whose `setting_sources` (`settingSources`,
    `--setting-sources`) is unset or includes `"project"` or `"local"`: the engine then
    loads `.claude/settings.json`, `.claude/settings.local.json`, `CLAUDE.md`, hooks,
    skills and commands from its working directory. The finding names those files when
    the project has them.

    ## Why is this bad?
    Whoever can write to the working directory configures the agent: hooks run shell
    commands, permissions pre-approve tools, and `CLAUDE.md` is read as instructions.
    A planning document written for developers is retold as fact.

    ## Example
    ```python
    ClaudeAgentOptions(allowed_tools=["Read"])        # setting_sources unset
    ```

    ## Use instead
    ```python
    ClaudeAgentOptions(setting_sources=[], system_prompt=REVIEWED_PROMPT)
    ```
    """

    id = "AG211"
    name = "project-settings-loaded"
    title = "Project settings loaded from the working directory"
    default_severity = Severity.MEDIUM
    family = "workdir"


def _readings(reading: CwdReading | None) -> tuple[bool | None, ...]:
    """Per reading of the cwd, whether it names the project, as the model says (a reading
    the model lacks is unknown, never the project's default)."""
    return reading.project if reading is not None else (None,)


def cwd_verdict(cfg: AgentConfig, reading: CwdReading | None) -> tuple[bool, Confidence, str]:
    """Whether the configuration's working directory is the project, how sure, and why.

    ``reading``: the model's reading of its ``cwd`` (``Workdir.cwd`` of its entry)."""
    opt = cfg.option("cwd")
    if reading is not None and not reading.written:
        return (
            True,
            Confidence.LOW,
            "`cwd` is not set: the engine works in the process's current directory, which "
            "is usually the checkout (or the image's working directory)",
        )
    verdicts = _readings(reading)
    if not any(v is not False for v in verdicts):
        return False, Confidence.HIGH, ""
    sure = all(v is True for v in verdicts)
    text = f"`cwd` = {describe(opt.value)}" if opt is not None else "`cwd` could not be read"
    workdir = reading.image_workdir if reading is not None else None
    if workdir and opt is not None and any(isinstance(a, str) for a in alternatives(opt.value)):
        text += f" (the image's working directory is {workdir})"
    return True, Confidence.HIGH if sure else Confidence.LOW, text


def _unread(reading: CwdReading | None) -> bool:
    """A cwd no reading of which is the project: which folder it is is not known."""
    written = reading is None or reading.written
    return written and not any(v is True for v in _readings(reading))


def check_workdir(
    cfg: AgentConfig, facts: ProjectFacts, reading: CwdReading | None
) -> list[Finding]:
    """AG210 for one agent configuration (``reading``: its cwd, from the model)."""
    if cfg.engine == "claude CLI":
        is_project, confidence, why = (
            True,
            Confidence.MEDIUM,
            "a `claude` command works in the directory it is started from (the checkout, "
            "for a script in the repository)",
        )
    else:
        is_project, confidence, why = cwd_verdict(cfg, reading)
    if not is_project:
        return []
    opt = cfg.option("cwd")
    severity = AgentWorkdirIsProject.default_severity if opt else Severity.MEDIUM
    # a cwd that is not read is unknown, not the project: the project's files are cited only
    # where some reading of the cwd is the project
    unread = _unread(reading)
    markers = [] if unread else list(facts.project_markers)
    if unread:
        message = (
            f"{cfg.engine} agent may work in the project: {why}, so which folder it reads "
            "is not known. If that is the checkout, Read, Grep and Glob need no permission "
            "there."
        )
    else:
        message = f"{cfg.engine} agent works in the project: {why}."
        message += " Read, Grep and Glob need no permission there."
    if markers:
        message += f" The project holds {', '.join(markers[:6])}."
    return [
        AgentWorkdirIsProject.finding(
            message,
            locations=[Location(path=cfg.path, line=opt.line if opt else cfg.line, note=cfg.label)],
            fix=Fix(
                "Give the agent a dedicated working directory that holds only the task's "
                "inputs (not the checkout, not the image's project folder).",
                snippet='cwd="/srv/agent/work"' if cfg.engine != "claude CLI" else None,
            ),
            evidence={"engine": cfg.engine, "cwd": why, "project_markers": markers},
            severity=severity,
            confidence=confidence,
            ambiguous=cfg.ambiguous,
        )
    ]


def check_settings_sources(
    cfg: AgentConfig, facts: ProjectFacts, reading: CwdReading | None
) -> list[Finding]:
    """AG211 for one agent configuration (``reading``: its cwd, from the model)."""
    opt = cfg.option("setting_sources")
    name = {
        "claude CLI": "--setting-sources",
    }.get(
        cfg.engine, "settingSources" if cfg.engine.endswith("(TypeScript)") else "setting_sources"
    )
    if opt is None:
        why = f"`{name}` is not set: user, project and local settings are loaded"
        confidence = Confidence.HIGH if cfg.engine == "claude CLI" else Confidence.MEDIUM
        if cfg.engine != "claude CLI":
            why += " (the SDK default; early 0.1 releases loaded none)"
        line = cfg.line
    else:
        alts = alternatives(opt.value)
        loads: list[bool | None] = []
        for a in alts:
            if isinstance(a, Unknown):
                loads.append(None)
            elif isinstance(a, str):
                parts = {p.strip() for p in a.split(",")}
                loads.append(bool(parts & {"project", "local"}))
            elif isinstance(a, tuple):
                if any(isinstance(x, Unknown) for x in a):
                    loads.append(True if {"project", "local"} & set(a) else None)
                else:
                    loads.append(bool({"project", "local"} & set(a)))
            elif a is None:
                loads.append(True)
            else:
                loads.append(None)
        if all(v is False for v in loads):
            return []
        why = f"`{name}` = {describe(opt.value)}"
        confidence = Confidence.HIGH if all(v is True for v in loads) else Confidence.LOW
        line = opt.line
    # what it loads comes from its working directory: the project's files are cited only
    # when that directory is (or may be, by an unset cwd) the project
    cwd_is_project = cfg.engine == "claude CLI" or cwd_verdict(cfg, reading)[0]
    if _unread(reading):
        cwd_is_project = False
    markers = [
        m for m in facts.project_markers if cwd_is_project and ("CLAUDE" in m or ".claude" in m)
    ]
    message = (
        f"{cfg.engine} agent loads project settings and CLAUDE.md from its working "
        f"directory: {why}."
    )
    if markers:
        message += f" The project has {', '.join(markers[:6])}."
    return [
        ProjectSettingsLoaded.finding(
            message,
            locations=[Location(path=cfg.path, line=line, note=cfg.label)],
            fix=Fix(
                f'Pass `{name}` explicitly without "project" and "local" (an empty list '
                "loads none) and give the agent its instructions in code.",
                snippet=(
                    "setting_sources=[]"
                    if name == "setting_sources"
                    else "settingSources: []"
                    if name == "settingSources"
                    else "--setting-sources user"
                ),
            ),
            evidence={"engine": cfg.engine, "setting_sources": why, "project_files": markers},
            confidence=confidence,
            ambiguous=cfg.ambiguous,
        )
    ]

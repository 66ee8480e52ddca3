"""Tools handed over by agent frameworks other than the Claude SDK: what to change, per tool.

Only one change is mechanical -- LangChain's ``FileManagementToolkit`` without ``root_dir``
gets the empty working directory as its root -- and only that one is written as code and
claimed. For the others the right change depends on what the agent must do (a shell for
a coding agent, none for a chat bot), so the choices are listed and nothing is claimed.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentguard.findings import Finding
from agentguard.harden.escape import docstring

LANGCHAIN_FILE = "agent/langchain_tools_hardened.py"

_CHOICES: dict[str, tuple[str, ...]] = {
    "openai-agents": (
        "remove the tool if the task needs no commands or patches (a chat or triage agent)",
        "keep it, and run the agent only in the hardened container: commands then see an empty "
        "working directory, a read-only root and no capabilities",
        "for ShellTool/LocalShellTool, pass an executor that runs each command in a throwaway "
        "container without the project or credentials",
    ),
    "langchain": (
        "remove the tool if the task does not need it",
        "file tools: give FileManagementToolkit a root_dir with only the task's inputs",
        "requests tools: wrap them with an allow-list of hosts, or go through an egress proxy",
    ),
    "smolagents": (
        "ToolCallingAgent instead of CodeAgent when the task needs no model-written code",
        'a remote executor: CodeAgent(..., executor_type="e2b" or "modal") -- code leaves '
        "this machine for that service",
        'executor_type="docker" needs access to an engine: give it a separate rootless one, '
        "never this container's host socket",
    ),
    "autogen": (
        "no code execution (drop the executor) when the task needs none",
        "DockerCommandLineCodeExecutor with a separate rootless engine, never the host socket",
    ),
    "crewai": (
        "allow_code_execution=False when the task needs no model-written code",
        'code_execution_mode="safe" (Docker) with a separate rootless engine',
    ),
}


def is_root_dir_fix(finding: Finding) -> bool:
    return finding.evidence.get("framework") == "langchain" and str(
        finding.evidence.get("tool", "")
    ).startswith("FileManagementToolkit")


def choices_for(finding: Finding) -> tuple[str, ...]:
    return _CHOICES.get(str(finding.evidence.get("framework")), ())


def langchain_snippet(findings: list[Finding], workdir: str) -> dict[str, str]:
    spots = [f for f in findings if is_root_dir_fix(f)]
    if not spots:
        return {}
    where = ", ".join(f.locations[0].describe() for f in spots if f.locations)
    text = (
        f'"""agentguard harden: FileManagementToolkit confined to {workdir} (for {docstring(where)}).\n\n'
        "Keep your selected_tools; the toolkit then reads and writes only inside the\n"
        "agent's empty working directory.\n"
        '"""\n\n'
        "from langchain_community.agent_toolkits import FileManagementToolkit\n\n"
        f'toolkit = FileManagementToolkit(root_dir="{workdir}")\n'
    )
    return {LANGCHAIN_FILE: text}


def grant_finding(finding: Finding) -> bool:
    evidence: Mapping[str, object] = finding.evidence
    return "framework" in evidence and "tool" in evidence

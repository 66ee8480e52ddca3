"""AG120 / AG121 / AG212 told as stories, with whole findings written out by hand."""

from __future__ import annotations

from agentguard.engine.project import scan_container_files
from agentguard.findings import Confidence, Finding, Fix, Location, Severity
from agentguard.inspect.facts import ProjectFile

LOCK_FIX = Fix(
    "Install from a hashed lock of the whole tree: generate it with `agentguard lock` (or "
    "`uv pip compile --generate-hashes`) and run "
    "`pip install --no-deps --require-hashes -r requirements.lock`.",
    snippet="pip install --no-deps --require-hashes -r requirements.lock",
)


def run(files: dict[str, str]) -> list[Finding]:
    findings, sources, _ = scan_container_files(
        [ProjectFile(p, t.encode()) for p, t in files.items()]
    )
    assert all(s.status.value == "ok" for s in sources), sources
    return findings


def only(rule_id: str, findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.rule_id == rule_id]


def test_a_pinned_sdk_alone_still_resolves_its_dependencies_on_every_build() -> None:
    dockerfile = (
        "FROM python:3.12-slim\n"
        "USER 10001\n"
        "RUN pip install claude-agent-sdk==0.2.95 \\\n"
        "    && python -c 'import claude_agent_sdk'\n"
    )
    assert only("AG120", run({"Dockerfile": dockerfile})) == [
        Finding(
            rule_id="AG120",
            title="pip/uv install without a lock, constraints or hashes",
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            message="`pip install claude-agent-sdk==0.2.95` runs at build time without a lock, "
            "constraints or --require-hashes (packages named on the command line "
            "(claude-agent-sdk==0.2.95)): the dependency tree is resolved anew on every build. "
            "It installs the agent stack (claude-agent-sdk); pinning the SDK alone does not pin "
            "its dependencies.",
            locations=(Location(path="Dockerfile", line=3),),
            fix=LOCK_FIX,
            evidence={
                "command": "pip install claude-agent-sdk==0.2.95",
                "tool": "pip",
                "phase": "build",
                "packages": ["claude-agent-sdk==0.2.95"],
                "requirement_files": [],
                "agent_stack": ["claude-agent-sdk"],
            },
        )
    ]


def test_the_same_install_with_hashes_or_constraints_is_not_reported() -> None:
    dockerfile = (
        "FROM python:3.12-slim\n"
        "ENV PIP_CONSTRAINT=/tmp/constraints.txt\n"
        "RUN pip install claude-agent-sdk==0.2.95\n"
        "RUN pip install --require-hashes -r requirements.txt\n"
        "RUN uv pip install -r requirements.lock\n"
    )
    assert only("AG120", run({"Dockerfile": dockerfile})) == []


def test_an_unreadable_requirements_file_is_unknown_not_safe() -> None:
    dockerfile = "FROM python:3.12-slim\nRUN pip install -r /tmp/reqs/prod.txt\n"
    [finding] = only("AG120", run({"Dockerfile": dockerfile}))
    assert finding.confidence is Confidence.LOW
    assert finding.severity is Severity.MEDIUM
    assert "requirements file not found in the project (/tmp/reqs/prod.txt)" in finding.message
    assert finding.locations == (Location(path="Dockerfile", line=2),)


def test_two_candidate_requirements_files_that_disagree_are_reported_as_ambiguous() -> None:
    files = {
        "Dockerfile": "FROM python:3.12-slim\nRUN pip install -r requirements.txt\n",
        "api/requirements.txt": "mcp==1.27.0 --hash=sha256:" + "0" * 64 + "\n",
        "bot/requirements.txt": "claude-agent-sdk>=0.2\n",
    }
    [finding] = only("AG120", run(files))
    assert finding.ambiguous is True
    assert finding.confidence is Confidence.MEDIUM
    assert (
        "more than one file could be meant: requirements.txt "
        "(api/requirements.txt, bot/requirements.txt)" in finding.message
    )


def test_credentials_in_an_index_url_never_reach_the_finding() -> None:
    dockerfile = (
        "FROM python:3.12-slim\n"
        "RUN pip install --index-url https://bot:s3cr3t-t0ken@pypi.example.test/simple anthropic==0.40.0\n"
    )
    [finding] = only("AG120", run({"Dockerfile": dockerfile}))
    assert "s3cr3t" not in str(finding.to_json())
    assert finding.evidence["command"] == (
        "pip install --index-url https://bot:REDACTED@pypi.example.test/simple anthropic==0.40.0"
    )


def test_sdk_with_only_a_floor_on_a_0x_line_gets_no_cap_below_its_later_releases() -> None:
    # (a 0.x minor is a major: `<0.21` would shut out every later release, and inspect
    # cannot tell from this file which one was tested)
    [finding] = only("AG121", run({"requirements.txt": "httpx\nopenai-agents>=0.20.0\n"}))
    assert finding == Finding(
        rule_id="AG121",
        title="Agent SDK required without an upper bound",
        severity=Severity.MEDIUM,
        confidence=Confidence.HIGH,
        message="openai-agents is required in a requirements file as openai-agents>=0.20.0: "
        "a floor and no upper bound; every future major satisfies it.",
        locations=(Location(path="requirements.txt", line=2),),
        fix=Fix(
            "Pin the version you tested and install from a lock, or cap the major: "
            "`openai-agents>=0.20.0,<0.<the minor after the one you tested>`.",
            snippet=None,
        ),
        evidence={
            "package": "openai-agents",
            "specifier": ">=0.20.0",
            "bound": "floor",
            "declared_in": "requirements",
            "requirement": "openai-agents>=0.20.0",
        },
    )


def test_copying_the_context_into_the_workdir_without_dockerignore() -> None:
    dockerfile = "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nUSER 10001\n"
    assert only("AG212", run({"Dockerfile": dockerfile})) == [
        Finding(
            rule_id="AG212",
            title="Build context copied into the working directory without a .dockerignore",
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
            message="COPY copies the whole build context into /app (the working directory) and "
            "there is no .dockerignore: the agent reads what is copied there.",
            locations=(Location(path="Dockerfile", line=3),),
            fix=Fix(
                "Copy only what the agent needs (`COPY src/ pyproject.toml ./`), or add a "
                ".dockerignore that keeps docs, plans, .env files and keys out.",
                snippet="*\n!src/\n!pyproject.toml\n!requirements.lock\n",
            ),
            evidence={
                "instruction": "COPY",
                "destination": "/app",
                "workdir": "/app",
                "relation": "at",
                "dockerignore": None,
                "not_kept_out": {
                    "docs": ["docs/index.md"],
                    "plans": ["PLAN.md", "plans/next.md"],
                    ".env": [".env", ".env.production"],
                    "keys": ["id_rsa", "server.key", "cert.pem"],
                },
            },
        )
    ]


def test_a_dockerfile_specific_ignore_file_wins_over_the_context_one() -> None:
    files = {
        "agent.Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nUSER 10001\n",
        "agent.Dockerfile.dockerignore": "*\n!src/\n",
        ".dockerignore": "\n",
    }
    assert only("AG212", run(files)) == []

"""AG212 names the files that really go into the image: the tree minus the .dockerignore,
and a .env the .gitignore says users create; a subfolder copy counts too. Modelled on
gemini-fullstack-langgraph-quickstart (ADD backend/ while the README asks for backend/.env)
and on gemini-cli's caretaker images (a .dockerignore that keeps some files out)."""

from __future__ import annotations

from pathlib import Path

from agentguard.engine.project import inspect_project
from agentguard.findings import Confidence, Fix, Location, Severity
from agentguard.rules.buildfiles import BuildContextCopiedToWorkdir

QUICKSTART_DOCKERFILE = """\
FROM node:20-alpine AS frontend-builder
WORKDIR /app/frontend
COPY frontend/ ./
RUN npm run build

FROM docker.io/langchain/langgraph-api:3.11
COPY --from=frontend-builder /app/frontend/dist /deps/frontend/dist
ADD backend/ /deps/backend
WORKDIR /deps/backend
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


def _ag212(root: Path) -> list[object]:
    return [f for f in inspect_project(root).findings if f.rule_id == "AG212"]


FIX = Fix(
    "Copy only what the agent needs (`COPY src/ pyproject.toml ./`), or add a "
    ".dockerignore that keeps docs, plans, .env files and keys out.",
    snippet="*\n!src/\n!pyproject.toml\n!requirements.lock\n",
)


def test_subfolder_copy_takes_the_local_env_the_gitignore_expects(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "Dockerfile": QUICKSTART_DOCKERFILE,
            ".gitignore": "node_modules/\n.env\n.venv\n",
            "backend/.env.example": "GEMINI_API_KEY=\n",
            "backend/src/agent/app.py": "app = None\n",
            "frontend/src/main.tsx": "export {}\n",
        },
    )
    env = "backend/.env (not in the checkout; .gitignore lists .env, so a local one is copied)"
    assert _ag212(tmp_path) == [
        BuildContextCopiedToWorkdir.finding(
            "ADD copies backend/ into /deps/backend (the working directory) and there is no "
            f".dockerignore, so it takes .env ({env}): the agent reads what is copied there.",
            locations=[Location(path="Dockerfile", line=8)],
            fix=FIX,
            evidence={
                "instruction": "ADD",
                "destination": "/deps/backend",
                "workdir": "/deps/backend",
                "relation": "at",
                "dockerignore": None,
                "not_kept_out": {".env": [env]},
            },
            severity=Severity.HIGH,
            confidence=Confidence.HIGH,
        )
    ]


def test_the_real_files_minus_the_dockerignore_are_named(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "svc/Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nUSER 10001\n",
            "svc/.dockerignore": ".git\n*.pem\n",
            "svc/.env.production": "X=1\n",
            "svc/.env.example": "X=\n",
            "svc/certs/server.pem": "-----\n",
            "svc/deploy/id_ed25519": "-----\n",
            "svc/deploy/id_ed25519.pub": "ssh-ed25519 AAAA\n",
            "svc/docs/runbook.md": "# runbook\n",
            "svc/main.py": "print(1)\n",
        },
    )
    (found,) = _ag212(tmp_path)
    assert found.message == (
        "COPY copies the whole build context into /app (the working directory) and "
        "svc/.dockerignore lets in .env (svc/.env.production), docs (svc/docs/), keys "
        "(svc/certs/server.pem, svc/deploy/id_ed25519): the agent reads what is copied there."
    )  # `*.pem` keeps out only the context's top level, as Docker reads it
    assert found.severity is Severity.MEDIUM


def test_nothing_sensitive_in_the_tree_is_no_finding(tmp_path: Path) -> None:
    _tree(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY . .\nUSER 10001\n",
            "main.py": "print(1)\n",
            ".env.example": "X=\n",
        },
    )
    assert _ag212(tmp_path) == []


def test_a_file_source_is_not_a_folder(tmp_path: Path) -> None:
    # gemini-cli's pr-generator: `COPY requirements.txt .` takes one file, not a folder
    _tree(
        tmp_path,
        {
            "Dockerfile": "FROM python:3.12-slim\nWORKDIR /app\nCOPY requirements.txt .\n"
            "COPY workflow/ ./workflow/\nUSER 10001\n",
            ".gitignore": ".env\n",
            ".env.example": "GEMINI_API_KEY=\n",
            "requirements.txt": "google-genai==1.2.0\n",
            "workflow/run.py": "print(1)\n",
        },
    )
    assert _ag212(tmp_path) == []

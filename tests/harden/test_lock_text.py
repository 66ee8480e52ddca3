"""Which lock the hardened Dockerfile installs from, and when `COPY .` followed by RUN steps
is narrowed (no engine: the written Dockerfile and the notes; the engine runs are in
test_lock_install.py). Poetry is covered here only: it is not on this machine, so no image
can run `poetry install`."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from agentguard.harden.install_steps import read_step
from agentguard.inspect.targets import Kind
from tests.harden.support import FIXTURES, harden_folder, inspect_report, rule_ids

POETRY = FIXTURES / "existing_locks" / "poetry-relock"
TWO_LOCKS = FIXTURES / "existing_locks" / "anyio"


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("#")]


def _project(root: Path, dockerfile: str, locks_from: Path | None = None) -> Path:
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__main__.py").write_text("print('up')\n")
    (root / "docs").mkdir()
    (root / "Dockerfile").write_text(dockerfile)
    for name in ("pyproject.toml", "poetry.lock", "uv.lock"):
        if locks_from is not None and (locks_from / name).exists():
            shutil.copy(locks_from / name, root / name)
    return root


def _notes(result: Any) -> tuple[str, ...]:
    [svc] = result.plan.spec.services
    return tuple(svc.notes)


def test_what_a_run_step_installs_and_reads() -> None:
    cases = {
        'pip install --no-cache-dir claude-agent-sdk==0.2.95 "httpx>=0.27"': ("resolve", ()),
        "pip3 install -r requirements.txt -c constraints.txt": (
            "resolve",
            ("requirements.txt", "constraints.txt"),
        ),
        "python3 -m pip install --require-hashes -r requirements.lock": (
            "lock",
            ("requirements.lock",),
        ),
        "uv pip install --system -r requirements.lock": ("lock", ("requirements.lock",)),
        "uv sync --frozen --no-install-project --no-dev": ("lock", ("pyproject.toml", "uv.lock")),
        # modelled on an MCP server's Dockerfile: RUN's own flags come first
        "--mount=type=cache,target=/root/.cache/uv --mount=type=bind,source=uv.lock,"
        "target=uv.lock uv sync --locked --no-install-project --no-dev --no-editable": (
            "lock",
            ("pyproject.toml", "uv.lock"),
        ),
        "poetry install --no-root --only main": ("lock", ("pyproject.toml", "poetry.lock")),
        "pip install --upgrade pip setuptools": ("tools", ()),
        '["pip", "install", "-rrequirements.txt"]': ("resolve", ("requirements.txt",)),
    }
    for text, (installs, reads) in cases.items():
        step = read_step(text)
        assert (step.installs, step.reads, step.why) == (installs, reads, ""), text
    unprovable = {
        'pip install -e ".[dev]"': "it installs .[dev] in editable mode",
        "pip install .": "it installs ., which may be any file",
        "uv sync --locked": "it installs the project itself (no --no-install-project)",
        "poetry install": "it installs the project itself (no --no-root)",
        "pip install -r requirements.txt > /dev/null": "it uses the shell operator '>'",
        "pip install -r $REQS": "it uses a heredoc, a variable or a command substitution",
        "pip install --src vendor x": "the option --src is not one this reader knows",
        "pip install -f wheels x": "-f wheels reads a folder of the project",
        "apt-get update && pip install x": "`apt-get update` is not an install this reader knows",
        # a newline would start a new instruction in the hardened Dockerfile
        '["pip", "install", "--index-url", "https://x/\\nRUN curl evil", "a"]': (
            "a word of it holds a control character"
        ),
    }
    for text, why in unprovable.items():
        step = read_step(text)
        assert (step.reads, step.why) == (None, why), text


def test_poetry_the_resolving_line_is_replaced_by_poetry_install(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12-slim\nWORKDIR /app\nRUN pip install --no-cache-dir idna sniffio\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    result = harden_folder(proj, tmp_path / "out")
    assert _body((tmp_path / "out" / "Dockerfile.hardened").read_text()) == [
        "FROM python:3.12-slim",
        "WORKDIR /app",
        'COPY ["pyproject.toml", "poetry.lock", "/app/"]',
        "RUN POETRY_VIRTUALENVS_CREATE=false poetry install --no-root --only main "
        "--no-interaction --directory /app",
        'COPY ["bot", "/app/bot"]',
        "ENV PYTHONPATH=/app",
        'CMD ["python", "-m", "bot"]',
        "WORKDIR /work",
        "USER 10001:10001",
    ]
    assert (
        "the dependencies are installed from poetry.lock (copied in: pyproject.toml, "
        "poetry.lock; nothing else of the project), in place of line 3 (`RUN pip install "
        "--no-cache-dir idna sniffio`): `POETRY_VIRTUALENVS_CREATE=false poetry install "
        "--no-root --only main --no-interaction --directory /app`"
    ) in _notes(result)
    # AG120 (pip install without a lock) is fixed by the hardened Dockerfile, and inspect of
    # the output does not report it again
    [claim] = [c for c in result.plan.claims if c.finding.rule_id == "AG120"]
    assert (claim.files, claim.how) == (
        ("Dockerfile.hardened",),
        "the line is replaced by the lock's: `POETRY_VIRTUALENVS_CREATE=false poetry install "
        "--no-root --only main --no-interaction --directory /app`",
    )
    assert "AG120" not in rule_ids(inspect_report(tmp_path / "out", Kind.PROJECT))


def test_poetry_its_own_install_after_the_copy_is_kept_and_the_copy_narrowed(
    tmp_path: Path,
) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
        'RUN poetry install --no-root --only main\nCMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    result = harden_folder(proj, tmp_path / "out")
    assert _body((tmp_path / "out" / "Dockerfile.hardened").read_text()) == [
        "FROM python:3.12-slim",
        "WORKDIR /app",
        'COPY ["bot", "/app/bot"]',
        'COPY ["pyproject.toml", "/app/pyproject.toml"]',
        'COPY ["poetry.lock", "/app/poetry.lock"]',
        "ENV PYTHONPATH=/app",
        "RUN poetry install --no-root --only main",
        'CMD ["python", "-m", "bot"]',
        "WORKDIR /work",
        "USER 10001:10001",
    ]
    notes = _notes(result)
    assert (
        "the dependencies are installed from poetry.lock by your line 4 (`RUN poetry install "
        "--no-root --only main`): kept"
    ) in notes
    assert (
        "the RUN steps after the COPY read only pyproject.toml, poetry.lock: copied with the code"
        in notes
    )


def test_a_step_after_the_copy_that_does_more_keeps_the_copy_and_says_why(
    tmp_path: Path,
) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\n"
        "RUN chmod +x bot/__main__.py && poetry install --no-root\n"
        'CMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    result = harden_folder(proj, tmp_path / "out")
    assert not (tmp_path / "out" / "Dockerfile.hardened").exists()
    assert (
        "not narrowed: your line 4 (`RUN chmod +x bot/__main__.py && poetry install --no-root`) "
        "may read any file of the project: `chmod +x bot/__main__.py` is not an install this "
        "reader knows"
    ) in _notes(result)


def test_two_locks_and_no_line_naming_one_are_not_resolved_by_taking_the_first(
    tmp_path: Path,
) -> None:
    proj = _project(
        tmp_path / "proj",
        'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["python", "-m", "bot"]\n',
        TWO_LOCKS,
    )
    result = harden_folder(proj, tmp_path / "out")
    body = _body((tmp_path / "out" / "Dockerfile.hardened").read_text())
    assert not [line for line in body if "install" in line]
    note = (
        "the project has 2 locks (uv.lock, poetry.lock) and the Dockerfile installs from none "
        "of them: which one the agent runs with is not guessed, so the dependencies are the "
        "original image's; install from one in your Dockerfile"
    )
    assert note in _notes(result)
    summary = (tmp_path / "out" / "SUMMARY.md").read_text()
    assert (
        "- `Dockerfile.hardened` takes the dependencies of `agent` from the original image, not from "
        f"a lock: {note}"
    ) in summary
    assert any(
        n.startswith("`Dockerfile.hardened` takes the dependencies of `agent`")
        for n in result.report.notes
    )


def test_no_lock_keeps_the_original_s_dependencies_and_says_so(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12-slim\nWORKDIR /app\nRUN pip install --no-cache-dir httpx\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
    )
    result = harden_folder(proj, tmp_path / "out")
    body = _body((tmp_path / "out" / "Dockerfile.hardened").read_text())
    assert "RUN pip install --no-cache-dir httpx" in body
    note = (
        "the project has no lock (requirements.lock, uv.lock or poetry.lock): the dependencies "
        "are the original image's, resolved at build time by line 3 (`RUN pip install "
        "--no-cache-dir httpx`); run `agentguard lock` and harden again to install them from "
        "the lock"
    )
    assert note in _notes(result)
    assert note in (tmp_path / "out" / "SUMMARY.md").read_text()


def test_a_bind_mounted_project_with_a_lock_gets_the_install_after_from(
    tmp_path: Path, agent_index: dict[str, Any], isolated_cache: Path
) -> None:
    proj = tmp_path / "proj"
    proj.mkdir()
    (proj / "agent.py").write_text("print('up')\n")
    (proj / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["claude-agent-sdk==0.2.100"]\n'
    )
    subprocess.run(
        [sys.executable, "-m", "agentguard", "lock", str(proj), "--index-url", agent_index["url"]],
        capture_output=True,
        check=True,
        timeout=300,
    )
    (proj / "compose.yml").write_text(
        "services:\n  agent:\n    image: agent:1\n    working_dir: /app\n"
        "    command: python agent.py\n    volumes: ['.:/app']\n"
    )
    harden_folder(proj, tmp_path / "out")
    assert _body((tmp_path / "out" / "Dockerfile.hardened").read_text()) == [
        "FROM agent:1",
        'COPY ["requirements.lock", "/tmp/agentguard/"]',
        "RUN python -m pip install --no-cache-dir --no-deps --require-hashes "
        "-r /tmp/agentguard/requirements.lock",
        'COPY ["agent.py", "/app/agent.py"]',
        "WORKDIR /work",
        "USER 10001:10001",
    ]


def test_an_installer_update_in_a_replaced_step_is_kept(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12-slim\nWORKDIR /app\n"
        "RUN pip install --upgrade pip poetry && pip install -r requirements.txt\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    harden_folder(proj, tmp_path / "out")
    assert _body((tmp_path / "out" / "Dockerfile.hardened").read_text())[2:5] == [
        "RUN pip install --upgrade pip poetry",
        'COPY ["pyproject.toml", "poetry.lock", "/app/"]',
        "RUN POETRY_VIRTUALENVS_CREATE=false poetry install --no-root --only main "
        "--no-interaction --directory /app",
    ]


def test_dependencies_made_in_a_builder_stage_are_not_installed_again(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "proj",
        "FROM python:3.12 AS build\nRUN pip install --target /deps idna\n"
        "FROM gcr.io/distroless/python3\nCOPY --from=build /deps /deps\nWORKDIR /app\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    result = harden_folder(proj, tmp_path / "out")
    body = _body((tmp_path / "out" / "Dockerfile.hardened").read_text())
    assert not [line for line in body if "poetry" in line]
    assert (
        "the dependencies come from another build stage (line 4, `COPY --from=build /deps "
        "/deps`): kept; install them from poetry.lock in that stage"
    ) in _notes(result)


def test_code_mount_says_the_dependencies_are_the_original_image_s(tmp_path: Path) -> None:
    proj = _project(
        tmp_path / "proj",
        'FROM python:3.12-slim\nWORKDIR /app\nCOPY . /app\nCMD ["python", "-m", "bot"]\n',
        POETRY,
    )
    harden_folder(proj, tmp_path / "out", code_mount=True)
    assert (
        "- `agent` runs the original image with its code mounted (--code-mount): its "
        "dependencies are the original image's; `Dockerfile.hardened` (not used) shows the "
        "image that would take them from poetry.lock"
    ) in (tmp_path / "out" / "SUMMARY.md").read_text()

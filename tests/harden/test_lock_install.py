"""The hardened image installs the agent's dependencies from the project's lock, on the real
engine, without network: a wheelhouse baked into the base image (greeter 1.0, and 2.0
released after the lock was made), this machine's interpreter with pip and uv, and small
real wheels built by the test helpers.

- `requirements.lock` (made by `agentguard lock`): the Dockerfile's `pip install greeter`
  resolves 2.0; the hardened Dockerfile replaces that line with the lock's install line
  (`--no-deps --require-hashes`, the line's own `--no-index --find-links` kept) and the agent
  imports 1.0. Only the lock is copied for it.
- `uv.lock` (made by `uv lock`) installed by the Dockerfile's own `uv sync --locked
  --no-install-project` after `COPY . /app`: that COPY is narrowed to the package,
  `pyproject.toml` and `uv.lock`, which is all the step reads; docs and `.env` stay out.
- the same for a `pip install --require-hashes -r requirements.lock` after `COPY . /app`.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.inspect.targets import Kind
from agentguard.lock.backend import uv_binary
from tests.harden.agents import fixed_ids, verification
from tests.harden.rootfs import (
    copy_into,
    libraries,
    pip_dir,
    pip_files,
    python_binary,
    site_packages,
)
from tests.harden.support import harden_cli, inspect_report, json_report, rule_ids, sources_named
from tests.inspect.engine_support import Made, unique
from tests.wheelhouse import build_wheel, write_simple_index

pytestmark = pytest.mark.engine

BOT = """\
import os
import greeter
print("greeter=" + greeter.__version__)
print("app=" + " ".join(sorted(os.listdir("/app"))))
print("cwd=" + os.getcwd())
"""


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.fixture(scope="module")
def house(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """greeter 1.0 in the index the locks are made from ("then"); 2.0 in the wheelhouse too."""
    root = tmp_path_factory.mktemp("house")
    wheels = root / "wheels"
    one = build_wheel(wheels, "greeter", "1.0")
    then = write_simple_index(wheels, root / "then")
    build_wheel(wheels, "greeter", "2.0")
    return {"root": root, "wheels": wheels, "then": then, "one": one}


@pytest.fixture(scope="module")
def base(made: Made, house: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> str:
    """busybox, the interpreter with pip and what a real pip install loads, uv, and the
    wheelhouse at the same absolute path as here (the locks name it)."""
    context = tmp_path_factory.mktemp("lock-base")
    req = context / "probe.lock"
    sha = hashlib.sha256(house["one"].read_bytes()).hexdigest()
    req.write_text(f"greeter==1.0 --hash=sha256:{sha}\n")
    rootfs = context / "rootfs"
    copy_into(rootfs, pip_files(house["wheels"], req, context))
    shutil.copytree(pip_dir(), rootfs / str(site_packages()).lstrip("/") / "pip")
    uv = os.path.realpath(uv_binary())
    copy_into(rootfs, {*libraries(uv)})
    (rootfs / "usr" / "local" / "bin").mkdir(parents=True)
    shutil.copy2(uv, rootfs / "usr" / "local" / "bin" / "uv")
    (rootfs / "usr" / "bin").mkdir(parents=True, exist_ok=True)
    os.symlink(python_binary(), rootfs / "usr" / "bin" / "python")
    shutil.copytree(house["root"], context / "house")
    tag = f"{unique('harden-lock-base')}:1"
    made.build(
        tag,
        context,
        'FROM scratch\nCOPY busybox /bin/busybox\nRUN ["/bin/busybox", "--install", "-s", "/bin"]\n'
        f"COPY rootfs/ /\nCOPY house {house['root']}\n"
        "ENV PATH=/usr/local/bin:/usr/bin:/bin UV_CACHE_DIR=/tmp/uv-cache UV_OFFLINE=1\n",
    )
    return tag


def _project(root: Path, dockerfile: str) -> Path:
    (root / "bot").mkdir(parents=True)
    (root / "bot" / "__main__.py").write_text(BOT)
    (root / "docs").mkdir()
    (root / "docs" / "plan.md").write_text("internal\n")
    (root / ".env").write_text("AGENT_API_KEY=not-for-the-image\n")
    (root / "pyproject.toml").write_text(
        '[project]\nname = "bot"\nversion = "0.1.0"\nrequires-python = ">=3.10"\n'
        'dependencies = ["greeter>=1"]\n'
    )
    (root / "Dockerfile").write_text(dockerfile)
    return root


def _agentguard_lock(project: Path, index: str, cache: Path) -> None:
    env = {**os.environ, "AGENTGUARD_CACHE_DIR": str(cache), "UV_CACHE_DIR": str(cache / "uv")}
    proc = subprocess.run(
        [sys.executable, "-m", "agentguard", "lock", str(project), "--index-url", index, "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "greeter==1.0" in (project / "requirements.lock").read_text()


def _uv_lock(project: Path, index: str, cache: Path) -> None:
    with (project / "pyproject.toml").open("a") as fh:
        fh.write(f'\n[[tool.uv.index]]\nname = "local"\nurl = "{index}"\ndefault = true\n')
    subprocess.run(
        [uv_binary(), "lock", "--python", python_binary(), "-q"],
        cwd=project,
        check=True,
        timeout=300,
        env={**os.environ, "UV_CACHE_DIR": str(cache)},
    )


def _built_output(made: Made, tag: str, context: Path) -> list[str]:
    made.client.images.build(path=str(context), tag=tag, rm=True, forcerm=True)
    made.images.append(tag)
    out = made.client.containers.run(tag, remove=True)
    return str(out.decode()).splitlines()


def _harden(project: Path, out: Path) -> dict[str, Any]:
    result = harden_cli(project, "--out", out, "--verify", "--settle", "1", "--format", "json")
    report = json_report(result)
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    assert all(status == "ok" for status, _ in probes.values()), probes
    after = inspect_report(out, Kind.PROJECT)
    assert rule_ids(after) & fixed_ids(report) == set()
    return report


def _body(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("#")]


def test_a_resolving_install_line_is_replaced_by_the_lock_s(
    base: str, house: dict[str, Any], made: Made, tmp_path: Path
) -> None:
    find = f"--find-links {house['wheels']}"
    proj = _project(
        tmp_path / "proj",
        f"FROM {base}\nWORKDIR /app\n"
        f"RUN python -m pip install --no-cache-dir --no-index {find} greeter\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
    )
    _agentguard_lock(proj, house["then"], tmp_path / "cache")
    # the original resolves anew at build time: greeter 2.0, released after the lock
    original = _built_output(made, f"{unique('harden-lock-orig')}:1", proj)
    assert original[0] == "greeter=2.0"
    made.images.append("agent:hardened")

    report = _harden(proj, tmp_path / "out")
    assert verification(report, "agent-start")["output"] == [
        "greeter=1.0",  # the lock's version, not the resolved one
        "app=bot",  # the code only: no docs, no .env, not even the lock
        "cwd=/work",
    ]
    dockerfile = (tmp_path / "out" / "Dockerfile.hardened").read_text()
    assert _body(dockerfile) == [
        f"FROM {base}",
        "WORKDIR /app",
        'COPY ["requirements.lock", "/tmp/agentguard/"]',
        f"RUN python -m pip install --no-cache-dir --no-index {find} --no-deps --require-hashes "
        "-r /tmp/agentguard/requirements.lock",
        'COPY ["bot", "/app/bot"]',
        "ENV PYTHONPATH=/app",
        'CMD ["python", "-m", "bot"]',
        "WORKDIR /work",
        "USER 10001:10001",
    ]
    summary = (tmp_path / "out" / "SUMMARY.md").read_text()
    assert (
        "- `Dockerfile.hardened` installs the dependencies of `agent` from requirements.lock: "
        f"`python -m pip install --no-cache-dir --no-index {find} --no-deps --require-hashes "
        "-r /tmp/agentguard/requirements.lock`"
    ) in summary


def test_a_uv_project_s_resolving_line_is_replaced_by_uv_sync_from_its_lock(
    base: str, house: dict[str, Any], made: Made, tmp_path: Path
) -> None:
    proj = _project(
        tmp_path / "proj",
        f"FROM {base}\nWORKDIR /app\n"
        f"RUN python -m pip install --no-index --find-links {house['wheels']} greeter\n"
        'COPY . /app\nCMD ["python", "-m", "bot"]\n',
    )
    _uv_lock(proj, house["then"], tmp_path / "uv-cache")
    made.images.append("agent:hardened")
    report = _harden(proj, tmp_path / "out")
    assert verification(report, "agent-start")["output"] == [
        "greeter=1.0",
        "app=.venv bot pyproject.toml uv.lock",  # uv's environment beside the code
        "cwd=/work",
    ]
    body = _body((tmp_path / "out" / "Dockerfile.hardened").read_text())
    assert body[2:5] == [
        'COPY ["pyproject.toml", "uv.lock", "/app/"]',
        "RUN uv sync --locked --no-install-project --no-dev --project /app",
        "ENV VIRTUAL_ENV=/app/.venv PATH=/app/.venv/bin:$PATH",
    ]


@pytest.mark.parametrize("tool", ["uv", "pip"])
def test_a_copy_followed_by_the_lock_s_install_is_narrowed_to_what_it_reads(
    base: str, house: dict[str, Any], made: Made, tmp_path: Path, tool: str
) -> None:
    if tool == "uv":
        install = "RUN uv sync --locked --no-install-project --no-dev\n"
        install += "ENV PATH=/app/.venv/bin:$PATH\n"
    else:
        install = (
            f"RUN python -m pip install --no-index --find-links {house['wheels']} "
            "--require-hashes -r requirements.lock\n"
        )
    proj = _project(
        tmp_path / "proj",
        f'FROM {base}\nWORKDIR /app\nCOPY . /app\n{install}CMD ["python", "-m", "bot"]\n',
    )
    if tool == "uv":
        _uv_lock(proj, house["then"], tmp_path / "uv-cache")
        inputs = ["pyproject.toml", "uv.lock"]
    else:
        _agentguard_lock(proj, house["then"], tmp_path / "cache")
        inputs = ["requirements.lock"]
    made.images.append("agent:hardened")

    report = _harden(proj, tmp_path / "out")
    listed = " ".join(sorted(["bot", *inputs, *([".venv"] if tool == "uv" else [])]))
    assert verification(report, "agent-start")["output"] == [
        "greeter=1.0",
        f"app={listed}",  # what the install reads and the code; no docs, no .env
        "cwd=/work",
    ]
    body = _body((tmp_path / "out" / "Dockerfile.hardened").read_text())
    assert body[:3] == [f"FROM {base}", "WORKDIR /app", 'COPY ["bot", "/app/bot"]']
    assert body[3 : 3 + len(inputs)] == [f'COPY ["{f}", "/app/{f}"]' for f in inputs]
    assert "COPY . /app" not in body
    [svc] = report["facts"]["harden"]["services"]
    assert (
        f"the RUN steps after the COPY read only {', '.join(inputs)}: copied with the code"
        in svc["notes"]
    )

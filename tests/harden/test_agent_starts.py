"""The hardened configuration still starts the agent, on the real engine.

Three agents whose code came from the project: the compose project of the issue (the
checkout bind-mounted at the working directory, `sh agent.sh`, `AGENT_API_KEY:
${AGENT_API_KEY}`), the example project (`python -m kontext_bot`, its SDK installed in the
image), and a Node agent started by a relative script from a Dockerfile that copies the
whole project (`COPY . /app`). For each: `--verify` starts the agent and shows its output,
the written docker-run.sh starts it with the secret passed by name (read back inside), only
the code travelled, and `inspect` of the output reports none of the fixed findings. Also
a container started in its checkout. (The negative cases are in test_agent_breaks.py.)
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.inspect.targets import Kind
from tests.harden.agents import (
    KEY,
    build_shell_image,
    compose_project,
    fixed_ids,
    run_script,
    verification,
)
from tests.harden.rootfs import copy_into, node_files, python_binary, python_files, stdlib_dir
from tests.harden.support import (
    EXAMPLE,
    harden_cli,
    inspect_report,
    json_report,
    rule_ids,
    sources_named,
    written_text,
)
from tests.inspect.engine_support import Made, unique

pytestmark = pytest.mark.engine


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.fixture(scope="module")
def shell_image(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_shell_image(made, tmp_path_factory)


@pytest.mark.parametrize("code_mount", [False, True], ids=["image", "code-mount"])
def test_the_compose_project_of_the_issue_starts_hardened(
    shell_image: str, tmp_path: Path, code_mount: bool
) -> None:
    compose = compose_project(tmp_path / "proj", shell_image)
    out = tmp_path / "out"
    # a variable the project names gets a placeholder unless the caller opts it in
    flags = ["--code-mount", "--pass-env", "AGENT_API_KEY"] if code_mount else []
    result = harden_cli(
        compose, "--out", out, "--verify", "--format", "json", *flags, env={"AGENT_API_KEY": KEY}
    )
    report = json_report(result)
    assert result.exit_code == 0, result.stdout
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    assert all(status == "ok" for status, _ in probes.values()), probes
    # its first lines, the key masked: the value is never in the report
    assert verification(report, "agent-start")["output"] == [
        "agent up",
        "key=REDACTED" if code_mount else "key=agentguard-verify-placeholder",
        "cwd=/work",
        "code=agent.sh ",
    ]
    assert KEY not in result.stdout

    script = (out / "docker-run.sh").read_text()
    assert "--env AGENT_API_KEY \\\n" in script
    if code_mount:
        proj = (tmp_path / "proj").resolve()
        assert f"--mount type=bind,source={proj}/agent.sh,target=/app/agent.sh,readonly" in script
    else:
        assert f"docker build --quiet --tag {shell_image}-hardened" in script
    compose_text = (out / "docker-compose.hardened.yml").read_text()
    assert "    environment:\n      HOME: /tmp\n      AGENT_API_KEY:\n" in compose_text
    assert "secretKeyRef:\n          name: agent-secrets\n          key: AGENT_API_KEY" in (
        (out / "kubernetes.yaml").read_text()
    )
    assert KEY not in written_text(out)

    run = run_script(out / "docker-run.sh", AGENT_API_KEY=KEY)
    assert run.returncode == 0, run.stderr
    # the key arrived by name; only the code travelled (no docs, no .env)
    assert run.stdout.splitlines() == ["agent up", f"key={KEY}", "cwd=/work", "code=agent.sh "]

    after = inspect_report(out, Kind.PROJECT)
    assert after.complete
    assert rule_ids(after) & fixed_ids(report) == set()
    assert fixed_ids(report) == {"AG202", "AG406", "AG407"}


STUB_SDK = """\
import os


class ClaudeAgentOptions:
    def __init__(self, **options):
        self.options = options


def tool(name, description, schema):
    return lambda fn: fn


def create_sdk_mcp_server(**options):
    return options


async def query(prompt, options):
    yield "model=%s cwd=%s" % (options.options["model"], os.getcwd())
    yield "key=%s" % os.environ.get("ANTHROPIC_API_KEY", "")
    yield "plan-readable=%s" % os.path.exists(os.path.join(options.options["cwd"], "docs"))
"""


@pytest.fixture(scope="module")
def example_image(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    """The example's image, as its Dockerfile makes it (the project copied to /app and
    `python -m kontext_bot`), from this machine's interpreter; its SDK a stand-in installed
    in the image (the real one is not on this machine), as `pip install` would put it."""
    context = tmp_path_factory.mktemp("example-image")
    rootfs = context / "rootfs"
    copy_into(rootfs, python_files("import __future__, asyncio, logging, os, sys"))
    sdk = rootfs / str(stdlib_dir()).lstrip("/") / "claude_agent_sdk"
    sdk.mkdir(parents=True)
    (sdk / "__init__.py").write_text(STUB_SDK)
    python = python_binary()
    (rootfs / "usr" / "bin").mkdir(parents=True, exist_ok=True)
    os.symlink(python, rootfs / "usr" / "bin" / "python")
    shutil.copytree(EXAMPLE, context / "proj")
    made.build(
        "kontext-bot:0.3.0",
        context,
        'FROM scratch\nCOPY rootfs/ /\nCOPY proj /app\nWORKDIR /app\nCMD ["python", "-m", "kontext_bot"]\n',
    )
    made.images.append("kontext-bot:0.3.0-hardened")
    return "kontext-bot:0.3.0"


def test_the_example_project_starts_hardened(example_image: str, tmp_path: Path) -> None:
    example = tmp_path / "kontext-bot"
    shutil.copytree(EXAMPLE, example, ignore=shutil.ignore_patterns("pylock.toml", "*.lock"))
    out = tmp_path / "out"
    key = "sk-test-" + "k" * 12
    result = harden_cli(
        example,
        "--out",
        out,
        "--verify",
        "--pass-env",
        "ANTHROPIC_API_KEY",
        "--format",
        "json",
        env={"ANTHROPIC_API_KEY": key},
    )
    report = json_report(result)
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    assert all(status == "ok" for status, _ in probes.values()), probes
    assert verification(report, "agent-start")["output"] == [
        "model=claude-sonnet-4-5 cwd=/work",
        "key=REDACTED",
        "plan-readable=False",
    ]
    script = (out / "docker-run.sh").read_text()
    assert "--env PYTHONPATH=/app \\\n" in script
    assert "--env ANTHROPIC_API_KEY \\\n" in script
    dockerfile = (out / "Dockerfile.hardened").read_text()
    assert 'COPY ["kontext_bot", "/app/kontext_bot"]' in dockerfile
    assert "docs" not in dockerfile.split("# only the agent's code")[1].split("\n", 1)[1]

    run = run_script(out / "docker-run.sh", ANTHROPIC_API_KEY=key)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [
        "model=claude-sonnet-4-5 cwd=/work",
        f"key={key}",
        "plan-readable=False",
    ]
    after = inspect_report(out, Kind.PROJECT)
    assert rule_ids(after) & fixed_ids(report) == set()


NODE_INDEX = """\
const { greet } = require("greeter");
console.log(greet("agent"));
console.log("key=" + (process.env.AGENT_API_KEY || ""));
console.log("cwd=" + process.cwd());
console.log("code=" + require("fs").readdirSync("/app").sort().join(" "));
setTimeout(() => console.log("done"), 4000);
"""


@pytest.fixture(scope="module")
def node_base(made: Made, tmp_path_factory: pytest.TempPathFactory) -> str:
    context = tmp_path_factory.mktemp("node-base")
    copy_into(context / "rootfs", node_files())
    tag = f"{unique('harden-node')}:1"
    made.build(tag, context, "FROM scratch\nCOPY rootfs/ /\n")
    return tag


def test_a_node_agent_started_by_a_relative_script_starts_hardened(
    node_base: str, made: Made, tmp_path: Path
) -> None:
    proj = tmp_path / "node-agent"
    (proj / "src").mkdir(parents=True)
    (proj / "src" / "index.js").write_text(NODE_INDEX)
    greeter = proj / "node_modules" / "greeter"
    greeter.mkdir(parents=True)
    (greeter / "index.js").write_text('exports.greet = (n) => "hello " + n;\n')
    (greeter / "package.json").write_text('{"name": "greeter", "main": "index.js"}\n')
    (proj / "package.json").write_text('{"name": "node-agent", "dependencies": {"greeter": "1"}}\n')
    (proj / "docs").mkdir()
    (proj / "docs" / "plan.md").write_text("internal\n")
    (proj / ".env").write_text(f"AGENT_API_KEY={KEY}\n")
    (proj / "Dockerfile").write_text(
        f'FROM {node_base}\nWORKDIR /app\nCOPY . /app\nCMD ["node", "src/index.js"]\n'
    )
    (proj / "compose.yaml").write_text(
        "services:\n  agent:\n    build: .\n    environment:\n      AGENT_API_KEY: ${AGENT_API_KEY}\n"
    )
    made.images.append("agent:hardened")
    out = tmp_path / "out"
    result = harden_cli(
        proj,
        "--out",
        out,
        "--verify",
        "--settle",
        "1",
        "--format",
        "json",
        "--pass-env",
        "AGENT_API_KEY",
        env={"AGENT_API_KEY": KEY},
    )
    report = json_report(result)
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == (
        "ok",
        "held: the agent is still running after 1s",
    )
    assert all(status == "ok" for status, _ in probes.values()), probes
    code = "code=node_modules package.json src"  # no docs, no .env, no Dockerfile
    assert verification(report, "agent-start")["output"] == [
        "hello agent",
        "key=REDACTED",
        "cwd=/work",
        code,
    ]
    dockerfile = (out / "Dockerfile.hardened").read_text()
    assert "COPY . /app" not in dockerfile

    run = run_script(out / "docker-run.sh", AGENT_API_KEY=KEY)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == ["hello agent", f"key={KEY}", "cwd=/work", code, "done"]
    after = inspect_report(out, Kind.PROJECT)
    assert rule_ids(after) & fixed_ids(report) == set()


def test_a_container_started_in_its_checkout_starts_hardened(
    shell_image: str, made: Made, tmp_path: Path
) -> None:
    compose_project(tmp_path / "proj", shell_image)
    name = unique("harden-checkout")
    made.container(
        shell_image,
        name=name,
        command=["sh", "agent.sh"],
        working_dir="/app",
        environment={"AGENT_API_KEY": KEY},
        volumes={str(tmp_path / "proj"): {"bind": "/app", "mode": "rw"}},
    )
    out = tmp_path / "out"
    result = harden_cli(
        name,
        "--kind",
        "container",
        "--out",
        out,
        "--verify",
        "--format",
        "json",
        "--pass-env",
        "AGENT_API_KEY",
        env={"AGENT_API_KEY": KEY},
    )
    report = json_report(result)
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    assert verification(report, "agent-start")["output"] == [
        "agent up",
        "key=REDACTED",
        "cwd=/work",
        "code=agent.sh ",
    ]
    assert KEY not in written_text(out)
    run = run_script(out / "docker-run.sh", AGENT_API_KEY=KEY)
    assert run.stdout.splitlines() == ["agent up", f"key={KEY}", "cwd=/work", "code=agent.sh "]

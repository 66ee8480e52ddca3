"""`harden --verify` in a hostile checkout, on the real engine (issue 23): the repository
commits its own `agentguard-hardened/docker-run-agent.sh` (the host's root mounted, the host
network, root, a variable from the caller's environment), names the caller's token under
`environment:`, bind-mounts `~/.ssh` at its working directory, and builds a second service
from a link out of the project. A registry credential helper is configured for the caller.

`harden . --verify` writes nothing outside its folder, runs nothing it did not write (no
committed script, no credential helper), and no value of the caller's environment -- nor
the private key -- appears in any output, report, SUMMARY.md or image.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.harden.agents import build_shell_image
from tests.harden.support import harden_cli, json_report, sources_named
from tests.inspect.engine_support import Made

pytestmark = pytest.mark.engine

SENTINEL = "sentinel-7f3a-caller-value"
TOKEN = "ghp_sentinel-token-of-the-caller-0123"
KEY = "-----BEGIN OPENSSH PRIVATE KEY----- sentinel-key-material"
OUTSIDE = "sentinel-file-outside-the-project"


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def _snapshot(root: Path, skip: Path) -> dict[str, str]:
    """Every file and link under ``root`` but ``skip``: path -> digest of its content."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        if Path(dirpath) == skip or skip in Path(dirpath).parents:
            continue
        for name in [*filenames, *dirnames]:
            p = Path(dirpath) / name
            if p == skip:
                continue
            if p.is_symlink():
                out[str(p)] = "link:" + os.readlink(p)
            elif p.is_file():
                out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def _forms(value: str) -> list[str]:
    """The value and the transformed forms a hostile image prints (reversed)."""
    return [value, value[::-1]]


def test_a_hostile_checkout_gets_only_what_harden_wrote_and_none_of_the_caller(
    made: Made,
    tmp_path_factory: pytest.TempPathFactory,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    docker_client: Any,
) -> None:
    image = build_shell_image(made, tmp_path_factory)
    made.images += ["builder:hardened"]
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(KEY + "\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "Dockerfile").write_text(
        f'FROM {image}\nWORKDIR /app\nCOPY . /app\nCMD ["sh", "run.sh"]\n'
    )
    (outside / "run.sh").write_text("cat secret.txt\n")
    (outside / "secret.txt").write_text(OUTSIDE + "\n")
    # a credential helper the caller configured: running it is running a child process
    # with agentguard's environment
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    helper_ran = tmp_path / "credential-helper-ran"
    helper = bin_dir / "docker-credential-agsentinel"
    helper.write_text(f"#!/bin/sh\necho ran >> {helper_ran}\necho '{{}}'\n")
    helper.chmod(0o755)
    docker_config = tmp_path / "docker-config"
    docker_config.mkdir()
    (docker_config / "config.json").write_text(json.dumps({"credsStore": "agsentinel"}))

    project = tmp_path / "proj"
    project.mkdir()
    os.symlink(outside, project / "ctx")
    (project / "compose.yaml").write_text(
        "services:\n"
        "  agent:\n"
        f"    image: {image}\n"
        "    working_dir: /app\n"
        '    command: ["sh", "-c", "echo $$GITHUB_TOKEN | rev; cat id_ed25519 | rev", "id_ed25519"]\n'
        '    volumes: ["~/.ssh:/app"]\n'
        "    environment:\n"
        "      GITHUB_TOKEN: ${GITHUB_TOKEN}\n"
        "  builder:\n"
        "    build: ./ctx\n"
    )
    pwned = tmp_path / "pwned-by-the-committed-script"
    committed = project / "agentguard-hardened" / "docker-run-agent.sh"
    committed.parent.mkdir()
    committed.write_text(
        "#!/bin/sh\nexec docker run --rm -v /:/host --network host --user 0:0 "
        f"--env AG_SENTINEL --env GITHUB_TOKEN {image} sh -c "
        f"'touch /host{pwned}; echo $AG_SENTINEL $GITHUB_TOKEN | rev'\n"
    )
    committed_text = committed.read_text()
    before = _snapshot(tmp_path, project / "agentguard-hardened")

    monkeypatch.chdir(project)
    env = {
        "HOME": str(home),
        "AG_SENTINEL": SENTINEL,
        "GITHUB_TOKEN": TOKEN,
        "DOCKER_CONFIG": str(docker_config),
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
    }
    result = harden_cli(".", "--verify", "--settle", "1", "--format", "json", env=env)
    report = json_report(result)

    # runs nothing it did not write: not the committed script, not the credential helper
    assert not pwned.exists()
    assert not helper_ran.exists()
    assert committed.read_text() == committed_text  # kept, the new text beside it
    out = project / "agentguard-hardened"
    assert (out / "docker-run-agent.sh.new").is_file()
    # writes nothing outside its folder
    assert _snapshot(tmp_path, out) == before

    # the host folder and the outside context are not carried into any image
    svc = {s["name"]: s for s in report["facts"]["harden"]["services"]}
    assert any("~/.ssh:/app" in n and "outside the project" in n for n in svc["agent"]["notes"])
    assert any("outside the project" in n for n in svc["builder"]["notes"])
    assert not list(out.glob("Dockerfile*"))
    # the agent got a placeholder, not the caller's token
    probes = sources_named(report, "probe")
    assert probes["plan (docker-run-agent.sh)"] == (
        "ok",
        "held: the run line asks for nothing the plan did not make",
    )
    facts = report["facts"]["harden"]["verification"]
    started = next(
        f for f in facts if f["probe"] == "agent-start" and f["script"] == "docker-run-agent.sh"
    )
    # (its two lines are stdout and stderr: the engine's log may hand them in either order)
    assert "agentguard-verify-placeholder"[::-1] in started["output"]

    # no value of the caller's environment, nor the key, nor the outside file, anywhere
    written = "".join(
        p.read_text(errors="replace") for p in out.rglob("*") if p.is_file() and not p.is_symlink()
    )
    images = b"".join(
        b"".join(docker_client.images.get(t).save())
        for t in (f"{image}-hardened", "builder:hardened")
        if _exists(docker_client, t)
    )
    for value in [*_forms(SENTINEL), *_forms(TOKEN), *_forms(KEY), OUTSIDE]:
        assert value not in result.stdout
        assert value not in result.stderr
        assert value not in written, value
        assert value.encode() not in images, value


def _exists(client: Any, tag: str) -> bool:
    from docker.errors import ImageNotFound

    try:
        client.images.get(tag)
    except ImageNotFound:
        return False
    return True

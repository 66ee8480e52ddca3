"""What TARGET is, on the real engine: never guessed; ambiguity is exit 2 asking for --kind."""

from __future__ import annotations

import io
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.inspect.targets import Kind, classify_path, engine_plausible
from tests.inspect.engine_support import Made, inspect_cli, report_of, unique

pytestmark = pytest.mark.engine


@pytest.fixture()
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


def _tiny(made: Made, tag: str) -> Any:
    return made.import_tar(tag, {"bin/busybox": b"not a real binary"}, ["USER 10001"])


def test_a_file_and_an_image_with_the_same_name_is_exit_2_asking_for_kind(
    made: Made, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = unique("amb")
    image = _tiny(made, name)
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text("a local file that happens to share the name\n")

    result = inspect_cli(name, "--format", "json")

    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr == (
        f"agentguard: error: {name!r} is ambiguous: it names the local file {name} "
        f"(--kind file); the image {image.id} (--kind image). Pass --kind to say which one.\n"
    )
    chosen = report_of(inspect_cli(name, "--kind", "image", "--format", "json", "--no-lock"))
    assert chosen["facts"]["target"] == {"text": name, "kind": "image", "how": "--kind"}


def test_a_container_and_an_image_with_the_same_name_is_exit_2(made: Made) -> None:
    name = unique("dual")
    image = _tiny(made, name)
    container = made.container(name, command="sh", name=name)

    result = inspect_cli(name, "--format", "json")

    assert result.exit_code == 2
    assert result.stderr == (
        f"agentguard: error: {name!r} is ambiguous: it names the image {image.id} (--kind image); "
        f"the container {container.name} (--kind container). Pass --kind to say which one.\n"
    )


def test_engine_unreachable_is_exit_3_with_the_failed_engine_source(tmp_path: Path) -> None:
    missing = f"unix://{tmp_path}/no-engine.sock"
    result = inspect_cli("agent:1", "--format", "json", env={"DOCKER_HOST": missing})
    assert result.exit_code == 3
    report = report_of(result)
    assert report["complete"] is False
    assert report["findings"] == []
    [source] = report["sources"]
    assert {k: source[k] for k in ("kind", "name", "status", "error_code", "retryable")} == {
        "kind": "engine",
        "name": missing,
        "status": "failed",
        "error_code": "engine-unreachable",
        "retryable": True,
    }
    assert source["reason"].startswith("cannot reach the Docker engine: ")
    assert source["remedy"] == "start the Docker engine or point DOCKER_HOST at it, then retry"
    assert report["facts"]["target"] == {
        "text": "agent:1",
        "kind": None,
        "how": "engine not reachable",
    }


def test_a_local_folder_is_scanned_without_asking_the_engine(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "Dockerfile").write_text("FROM scratch\nUSER 10001\n")
    monkeypatch.chdir(tmp_path)
    missing = f"unix://{tmp_path}/no-engine.sock"
    report = report_of(inspect_cli("proj", "--format", "json", env={"DOCKER_HOST": missing}))
    assert report["facts"]["target"] == {"text": "proj", "kind": "project", "how": "a local folder"}
    assert [s["kind"] for s in report["sources"] if s["kind"] == "engine"] == []


def test_a_random_file_named_tar_is_a_failed_read_not_a_pass(tmp_path: Path) -> None:
    (tmp_path / "agent.tar").write_bytes(bytes(range(256)) * 64)
    result = inspect_cli(str(tmp_path / "agent.tar"), "--format", "json")
    assert result.exit_code == 3
    report = report_of(result)
    assert report["facts"]["target"]["kind"] == "archive"
    assert [(s["kind"], s["status"], s.get("error_code")) for s in report["sources"]] == [
        ("lockfile", "skipped", None),
        ("image-archive", "failed", "corrupt-tar"),
        ("image-layout", "failed", "layout-unknown"),
    ]


def test_a_name_nothing_has_is_a_failed_not_found_source(tmp_path: Path) -> None:
    name = unique("nothing")
    result = inspect_cli(name, "--format", "json")
    assert result.exit_code == 3
    failed = [s for s in report_of(result)["sources"] if s["status"] == "failed"]
    assert [(s["kind"], s["name"], s["error_code"], s["retryable"]) for s in failed] == [
        ("target", name, "not-found", False)
    ]


def test_a_missing_path_and_a_bad_kind_are_usage_errors(tmp_path: Path) -> None:
    result = inspect_cli(str(tmp_path / "nope.tar"))
    assert (result.exit_code, result.stderr) == (
        2,
        f"agentguard: error: {tmp_path / 'nope.tar'}: no such file or folder\n",
    )
    result = inspect_cli("agent:1", "--kind", "vm")
    assert result.exit_code == 2
    assert result.stderr.startswith("agentguard: error: unknown --kind 'vm' (expected one of: ")


def _tar(path: Path, names: list[str]) -> Path:
    with tarfile.open(path, "w") as tf:
        for n in names:
            info = tarfile.TarInfo(n)
            info.size = 2
            tf.addfile(info, io.BytesIO(b"{}"))
    return path


def test_classify_local_paths(tmp_path: Path) -> None:
    oci = tmp_path / "layout"
    oci.mkdir()
    (oci / "oci-layout").write_text('{"imageLayoutVersion": "1.0.0"}')
    (tmp_path / "compose.yaml").write_text("services: {}\n")
    (tmp_path / "docker-compose.prod.yml").write_text("services: {}\n")
    (tmp_path / "agent.py").write_text("print('hi')\n")
    assert classify_path(oci) is Kind.OCI
    assert classify_path(tmp_path) is Kind.PROJECT
    assert classify_path(tmp_path / "compose.yaml") is Kind.COMPOSE
    assert classify_path(tmp_path / "docker-compose.prod.yml") is Kind.COMPOSE
    assert classify_path(tmp_path / "agent.py") is Kind.FILE
    saved = _tar(
        tmp_path / "saved.tar", ["abc/layer.tar", "manifest.json", "index.json", "oci-layout"]
    )
    assert classify_path(saved) is Kind.ARCHIVE
    assert classify_path(_tar(tmp_path / "oci.tar", ["oci-layout", "index.json"])) is Kind.OCI


def test_engine_plausible_names() -> None:
    assert engine_plausible("agent:1.4") == (True, False)
    assert engine_plausible("registry.example.invalid:5000/team/agent:1") == (True, False)
    assert engine_plausible("agent") == (True, True)
    assert engine_plausible("My_Container") == (False, True)
    assert engine_plausible("has space") == (False, False)

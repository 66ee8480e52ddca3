"""devcontainer.json: the tolerant JSONC reader and the facts read from it."""

from __future__ import annotations

import pytest

from agentguard.inspect.project.devcontainer_facts import (
    DevEnv,
    DevMount,
    DevSetting,
    read_devcontainer,
)
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import DocumentError


def test_comments_trailing_commas_and_lines() -> None:
    doc = load_jsonc(
        '// leading comment\n{\n  "a": "http://x//not-a-comment", /* block\n comment */\n'
        '  "b": [1, 2,],\n  "c": {"d": null,},\n}\n'
    )
    assert doc.value == {"a": "http://x//not-a-comment", "b": [1, 2], "c": {"d": None}}
    assert (doc.line("a"), doc.line("b", 1), doc.line("c", "d"), doc.line("c", "zz")) == (
        3,
        5,
        6,
        6,
    )


@pytest.mark.parametrize(
    ("text", "line", "code"),
    [
        ('{\n  "a": 1,\n  "a": 2\n}', 3, "duplicate-key"),
        ('{\n  "a": 1\n  "b": 2\n}', 3, "syntax"),
        ("{\n  /* never closed\n}", 2, "syntax"),
        ("[" * 500, 1, "too-deep"),
        ('{"a": 1} trailing', 1, "syntax"),
    ],
)
def test_errors_carry_a_line_and_a_stable_code(text: str, line: int, code: str) -> None:
    with pytest.raises(DocumentError) as info:
        load_jsonc(text)
    assert (info.value.line, info.value.code) == (line, code)


def test_devcontainer_facts() -> None:
    dc = read_devcontainer(
        ".devcontainer/devcontainer.json",
        """{
  "build": {"dockerfile": "Dockerfile", "context": ".."},
  "workspaceMount": "source=${localWorkspaceFolder},target=/src,type=bind,readonly",
  "workspaceFolder": "/src",
  "mounts": [{"source": "cache", "target": "/cache", "type": "volume"}],
  "containerEnv": {"A": "1"},
  "remoteEnv": {"B": "${localEnv:B}"},
  "runArgs": ["--cap-add", "SYS_ADMIN", "--user=root", "-v", "/etc:/host-etc:ro", "--ipc=host"],
  "remoteUser": "vscode",
  "postCreateCommand": {"deps": ["pip", "install", "-r", "requirements.txt"], "npm": "npm ci"},
}""",
    )
    assert dc.dockerfile == "Dockerfile"
    assert dc.build_context == ".."
    assert dc.workspace_folder == DevSetting("/src", 4)
    assert dc.workspace_mount == DevMount(
        "bind", "${localWorkspaceFolder}", "/src", True, 3, "workspaceMount"
    )
    assert dc.mounts == (
        DevMount("volume", "cache", "/cache", False, 5, "mounts"),
        DevMount("bind", "/etc", "/host-etc", True, 8, "runArgs"),
    )
    assert dc.env == (
        DevEnv("A", "1", 6, "containerEnv"),
        DevEnv("B", "${localEnv:B}", 7, "remoteEnv"),
    )
    assert dc.cap_add == (DevSetting("SYS_ADMIN", 8),)
    assert dc.container_user == DevSetting("root", 8)
    assert dc.remote_user == DevSetting("vscode", 9)
    assert dc.ipc == DevSetting("host", 8)
    assert dc.commands == (
        ("postCreateCommand", "pip install -r requirements.txt", 10),
        ("postCreateCommand", "npm ci", 10),
    )


def test_a_devcontainer_without_workspace_mount_mounts_the_checkout_by_default() -> None:
    dc = read_devcontainer(".devcontainer.json", '{"image": "python:3.12"}')
    assert dc.workspace_mount == DevMount(
        "bind",
        "${localWorkspaceFolder}",
        "/workspaces/${localWorkspaceFolderBasename}",
        False,
        1,
        "default workspace mount",
    )


def test_a_compose_based_devcontainer_leaves_the_mounts_to_the_compose_file() -> None:
    dc = read_devcontainer(".devcontainer.json", '{"dockerComposeFile": "c.yaml", "service": "s"}')
    assert (dc.workspace_mount, dc.workspace_folder, dc.compose_files) == (
        None,
        DevSetting(None, None),
        ("c.yaml",),
    )

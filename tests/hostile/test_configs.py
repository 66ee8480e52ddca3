"""Hostile configuration in a project folder: alias bombs, runaway nesting, bad encodings,
Python that is not Python or is enormous. Each is a named failed source (exit 3) or a usage
error (exit 2, for `lock`'s own inputs), within bounded time and memory; and no code from
the target ever runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.hostile.local import write
from tests.hostile.promises import check_failed_source, run_agentguard
from tests.hostile.sdists import build_marking_sdist
from tests.wheelhouse import build_wheel

pytestmark = pytest.mark.usefixtures("isolated_cache")

NESTED = 100_000


def inspect_json(target: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    run = run_agentguard(
        "inspect", str(target), "--format", "json", "--no-lock", *extra, cwd=target.parent
    )
    run.check_no_crash()
    assert run.seconds < 60 and run.max_rss_mib < 600, (run.seconds, run.max_rss_mib)
    return run.code, json.loads(run.stdout)


def failures(report: dict[str, Any]) -> list[tuple[str, str, str]]:
    out = []
    for s in report["sources"]:
        if s["status"] == "failed":
            check_failed_source(s)
            out.append((s["name"], s["error_code"], s["reason"]))
    return out


def alias_bomb() -> str:
    lines = ['x-a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    prev = "a"
    for n in "bcdefghi":  # 9**9 = 387 million values once expanded
        lines.append(f"x-{n}: &{n} [" + ",".join([f"*{prev}"] * 9) + "]")
        prev = n
    lines += ["services:", "  agent:", "    image: bot", "    command: *i", "    environment: *i"]
    return "\n".join(lines) + "\n"


def test_yaml_alias_bomb_is_refused_by_its_cap(tmp_path: Path) -> None:
    project = write(tmp_path / "bot", {"compose.yaml": alias_bomb()})
    code, report = inspect_json(project)
    assert code == 3
    assert failures(report) == [
        (
            "compose.yaml",
            "compose-too-large",
            "more than 200000 values after expanding aliases (an alias bomb?) (line 1)",
        )
    ]
    run = run_agentguard("check", str(project), "--images-from-compose", "--format", "json")
    run.check_no_crash()
    assert run.code == 3 and run.seconds < 60


def test_runaway_nesting_in_every_format(tmp_path: Path) -> None:
    n = NESTED
    project = write(
        tmp_path / "bot",
        {
            ".mcp.json": "[" * n + "]" * n,
            ".claude/settings.json": '{"a":' * n + "1" + "}" * n,
            "compose.yaml": "[" * n + "]" * n,
            ".devcontainer/devcontainer.json": '{"a":' * n + "1" + "}" * n,
            "pyproject.toml": '[project]\nname = "bot"\nversion = "0.1"\ndependencies = []\n'
            "x = " + "[" * n + "]" * n + "\n",
        },
    )
    code, report = inspect_json(project)
    assert code == 3
    assert sorted(failures(report)) == sorted(
        [
            (
                ".claude/settings.json",
                "settings-too-deep",
                "nested deeper than 100 levels (line 1)",
            ),
            (
                ".devcontainer/devcontainer.json",
                "devcontainer-too-deep",
                "nested deeper than 100 levels (line 1)",
            ),
            (".mcp.json", "mcp-too-deep", "nested deeper than 100 levels (line 1)"),
            ("compose.yaml", "compose-too-deep", "YAML nested too deeply"),
            ("pyproject.toml", "too-deep", "nested too deeply to read"),
            # inspect reads its configuration from the target: that read failed too
            (
                str(project / "pyproject.toml"),
                "config-unreadable",
                f"the configuration could not be read: {project / 'pyproject.toml'}: nested too "
                "deeply to read",
            ),
        ]
    )
    # `lock` and `check` read pyproject.toml as their own input: a usage error, exit 2.
    for args in (("lock", str(project)), ("check", str(project))):
        run = run_agentguard(*args)
        run.check_no_crash()
        assert run.code == 2, (args, run.stderr)
        assert "nested too deeply to read" in run.stderr
        assert sorted(p.name for p in project.iterdir()) == sorted(
            [".mcp.json", ".claude", "compose.yaml", ".devcontainer", "pyproject.toml"]
        )


def test_invalid_encodings(tmp_path: Path) -> None:
    project = write(
        tmp_path / "bot",
        {
            ".mcp.json": '{"mcpServers": {"x": {"command": "npx"}}}'.encode("utf-16"),
            ".claude/settings.json": b'{"permissions": {"allow": ["Bash(\xe9)"]}}',
            "compose.yaml": b"services:\n  agent:\n    image: x\xff\n",
            "Dockerfile": b"FROM scratch\nUSER r\xf6ot\n",
            "requirements.txt": b"\xff\xfeclaude-agent-sdk\n",
        },
    )
    code, report = inspect_json(project)
    assert code == 3
    assert sorted(failures(report)) == [
        (".claude/settings.json", "settings-decode", "not UTF-8 text (byte 33)"),
        (".mcp.json", "mcp-decode", "not UTF-8 text (byte 0)"),
        ("Dockerfile", "not-utf8", "not UTF-8 text: invalid start byte at byte 19"),
        ("compose.yaml", "not-utf8", "not UTF-8 text: invalid start byte at byte 31"),
        ("requirements.txt", "not-utf8", "not UTF-8 text: invalid start byte at byte 0"),
    ]
    write(project, {"pyproject.toml": b'[project]\nname = "b\xffot"\nversion = "0.1"\n'})
    run = run_agentguard("lock", str(project))
    run.check_no_crash()
    assert run.code == 2
    assert "pyproject.toml: not UTF-8 (invalid start byte at byte 19)" in run.stderr


AGENT = (
    "from claude_agent_sdk import ClaudeAgentOptions\n"
    "opts = ClaudeAgentOptions(permission_mode='bypassPermissions')\n"
)


def test_python_that_is_not_python_or_is_enormous_and_huge_json(tmp_path: Path) -> None:
    project = write(
        tmp_path / "bot",
        {
            "broken.py": "from claude_agent_sdk import query\ndef f(:\n",
            "deep.py": "from claude_agent_sdk import query\nx = " + "-" * 300_000 + "1\n",
            "huge_agent.py": AGENT + "x = 1\n" * 800_000,  # 4.8 MB, over the 4 MiB cap
            "generated_pb2.py": "x = 1\n" * 800_000,  # as big, and names no agent SDK
            ".mcp.json": '{"mcpServers": {}}' + " " * 4_400_000,  # configuration: always read
        },
    )
    code, report = inspect_json(project)
    assert code == 3  # the huge agent file was not analysed: never a clean bill
    assert sorted(failures(report)) == [
        (
            ".mcp.json",
            "cap-file-bytes",
            "4400018 bytes, over the 4194304 byte cap, and it may configure an agent: not analysed",
        ),
        ("broken.py", "parse-error", "Python syntax error at line 2: invalid syntax"),
        ("deep.py", "too-large", "too large to analyse"),
        (
            "huge_agent.py",
            "cap-file-bytes",
            f"{len(AGENT) + 4_800_000} bytes, over the 4194304 byte cap, and it may configure "
            "an agent: not analysed",
        ),
    ]
    [skipped] = [s for s in report["sources"] if s["status"] == "skipped"]
    assert skipped == {
        "kind": "file",
        "name": "generated_pb2.py",
        "status": "skipped",
        "reason": "4800000 bytes, over the 4194304 byte cap: not read",
    }
    # The same file named alone: read within the cap, never whole.
    code, report = inspect_json(project / "huge_agent.py")
    assert code == 3
    assert [(name, c) for name, c, _ in failures(report)] == [("huge_agent.py", "cap-file-bytes")]


def test_no_code_from_the_target_runs(tmp_path: Path, agent_index: dict[str, Any]) -> None:
    """Files that would run if imported or built leave a mark; no command leaves one."""
    mark = tmp_path / "MARK"
    payload = f"open({str(mark)!r}, 'a').write(__file__ + '\\n')\n"
    project = write(
        tmp_path / "bot",
        {
            "pyproject.toml": '[project]\nname = "bot"\nversion = "0.1.0"\n'
            'requires-python = ">=3.10"\ndependencies = ["claude-agent-sdk==0.2.100"]\n',
            "setup.py": payload,
            "conftest.py": payload,
            "sitecustomize.py": payload,
            "bot/__init__.py": payload,
            "bot/agent.py": "from claude_agent_sdk import query\nfrom . import helpers\n" + payload,
            "bot/helpers.py": payload + "OPTIONS = dict(permission_mode='bypassPermissions')\n",
            "agent.ts": "import { query } from '@anthropic-ai/claude-agent-sdk';\n"
            f"require('fs').writeFileSync({str(mark)!r}, 'ts');\n",
            "scripts/run.sh": f"touch {mark}\nclaude -p hi\n",
        },
    )
    for args in (
        ("inspect", str(project), "--no-lock"),
        ("check", str(project)),
        ("lock", str(project), "--index-url", agent_index["url"]),
        ("lock", str(project), "--check"),
    ):
        run = run_agentguard(*args, "--format", "json", cwd=tmp_path)
        run.check_no_crash()
        assert run.code in (0, 1, 3), (args, run.stderr)
        assert not mark.exists(), (args, mark.read_text())


def test_sdist_only_dependency_is_reported_and_only_binary_refuses_it(tmp_path: Path) -> None:
    from tests.hostile.index_server import serving

    mark = tmp_path / "MARK"
    files = tmp_path / "files"
    build_marking_sdist(files, "evil-sdist", "1.0.0", mark)
    build_wheel(files, "mcp", "1.0.0")
    project = write(
        tmp_path / "bot",
        {
            "pyproject.toml": '[project]\nname = "bot"\nversion = "0.1.0"\n'
            'requires-python = ">=3.10"\ndependencies = ["evil-sdist==1.0.0", "mcp==1.0.0"]\n'
        },
    )
    env = {"UV_CACHE_DIR": str(tmp_path / "uv"), "AGENTGUARD_CACHE_DIR": str(tmp_path / "ag")}
    with serving(files) as index:
        refused = run_agentguard(
            "lock",
            str(project),
            "--index-url",
            index.url,
            "--only-binary",
            "--format",
            "json",
            env=env,
        )
        refused.check_no_crash()
        assert refused.code == 3
        assert not mark.exists()  # with --only-binary, no package code ran
        [resolver] = [s for s in json.loads(refused.stdout)["sources"] if s["kind"] == "resolver"]
        check_failed_source(resolver)
        assert (resolver["error_code"], resolver["retryable"]) == ("sdist-only", False)
        assert "evil-sdist==1.0.0 has no usable wheels" in resolver["reason"]
        assert resolver["remedy"] == (
            "A requirement is published only as an sdist, and building it would run its code: "
            "pick a version that ships wheels, or review the sdist and re-run without "
            "--only-binary."
        )
        assert sorted(p.name for p in project.iterdir()) == ["pyproject.toml"]

        # Without --only-binary the resolver builds the sdist to learn its metadata (its
        # backend ran: the mark proves it), and agentguard says so and offers --only-binary.
        built = run_agentguard(
            "lock", str(project), "--index-url", index.url, "--format", "json", env=env
        )
        built.check_no_crash()
        report = json.loads(built.stdout)
        assert mark.read_text().splitlines()[-1] == "prepare_metadata_for_build_wheel"
        [finding] = [f for f in report["findings"] if f["rule_id"] == "AG105"]
        assert {k: v for k, v in finding.items() if k != "fingerprint"} == {
            "rule_id": "AG105",
            "title": "Declared ranges of a package unknown (no wheel metadata)",
            "severity": "medium",
            "confidence": "medium",
            "message": "evil-sdist is published only as an sdist: the resolver built it "
            "(running its build code) to learn its requirements; agentguard did not, so its "
            "edges were not checked.",
            "locations": [{"dependency_path": ["project", "evil-sdist==1.0.0"]}],
            "evidence": {"package": "evil-sdist"},
            "fix": {
                "description": "Prefer a version that ships a wheel, or re-run with "
                "`--only-binary` (refuses sdists: no package code runs).",
                "safe": False,
            },
            "ambiguous": False,
            "suppressed": None,
        }
        assert [
            s for s in report["sources"] if s["kind"] == "metadata" and s["status"] != "ok"
        ] == [
            {
                "kind": "metadata",
                "name": "evil-sdist==1.0.0",
                "status": "skipped",
                "reason": "no wheel: learning its requirements would mean building the sdist",
            }
        ]

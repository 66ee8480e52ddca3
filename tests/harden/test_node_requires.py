"""A Node agent whose entry script loads sibling files by relative paths (``require`` and
``import``, transitively): those files travel into the hardened image and nothing else of
the project; on the real engine, ``--verify`` shows the agent starts. Also the offline
resolution: extensions, a folder's index, a link, a path out of the project."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentguard.harden.code import named_entries
from agentguard.harden.node_requires import Required, required_files, specifiers
from agentguard.inspect.targets import Kind
from tests.harden.agents import KEY, fixed_ids, run_script, verification
from tests.harden.rootfs import copy_into, node_files
from tests.harden.support import harden_cli, inspect_report, json_report, rule_ids, sources_named
from tests.inspect.engine_support import Made, unique

AGENT_JS = """\
const { greet } = require("./lib/x.js");
import("./lib/late.mjs").then((m) => {
  console.log(greet("agent") + " " + m.late);
  console.log("key=" + (process.env.AGENT_API_KEY || ""));
  console.log("code=" + require("fs").readdirSync("/app").sort().join(" "));
  console.log("lib=" + require("fs").readdirSync("/app/lib").sort().join(" "));
});
"""
X_JS = 'const { word } = require("./words");\nexports.greet = (n) => word + " " + n;\n'
WORDS_JS = 'module.exports = require("../config/words.json");\n'
LATE_MJS = 'export const late = "and later";\n'


def _project(root: Path) -> Path:
    (root / "lib").mkdir(parents=True)
    (root / "config").mkdir()
    (root / "docs").mkdir()
    (root / "agent.js").write_text(AGENT_JS)
    (root / "lib" / "x.js").write_text(X_JS)
    (root / "lib" / "words.js").write_text(WORDS_JS)
    (root / "lib" / "late.mjs").write_text(LATE_MJS)
    (root / "lib" / "unused.js").write_text("throw new Error('not loaded');\n")
    (root / "config" / "words.json").write_text('{"word": "hello"}\n')
    (root / "config" / "secrets.json").write_text('{"token": "not for the image"}\n')
    (root / "docs" / "plan.md").write_text("internal\n")
    (root / ".env").write_text(f"AGENT_API_KEY={KEY}\n")
    return root


def test_the_files_a_script_loads_are_followed_transitively(tmp_path: Path) -> None:
    proj = _project(tmp_path / "p")
    assert required_files(proj, "agent.js") == Required(
        files=("lib/x.js", "lib/late.mjs", "lib/words.js", "config/words.json"), notes=()
    )
    assert named_entries(proj, ["node", "agent.js"], "/app") == (
        ["agent.js", "lib/x.js", "lib/late.mjs", "lib/words.js", "config/words.json"],
        False,
        [],
    )


def test_a_load_out_of_the_project_or_through_a_link_is_not_carried(tmp_path: Path) -> None:
    proj = tmp_path / "p"
    (proj / "lib").mkdir(parents=True)
    (tmp_path / "outside.js").write_text("exports.x = 1;\n")
    os.symlink(tmp_path / "outside.js", proj / "lib" / "linked.js")
    (proj / "lib" / "index.js").write_text("exports.y = 2;\n")
    (proj / "main.js").write_text(
        'require("../outside.js");\nrequire("./lib/linked");\nrequire("./lib");\n'
        'require("lodash");\nconst name = "./computed";\nrequire(name);\n'
    )
    assert required_files(proj, "main.js") == Required(
        files=("lib/index.js",),
        notes=(
            "main.js loads '../outside.js', which is not a file inside the project (or is a "
            "link): not carried",
            "main.js loads './lib/linked', which is not a file inside the project (or is a "
            "link): not carried",
        ),
    )
    assert specifiers('import a from "./a";\nexport { b } from \'../b.js\';\nimport "./c";\n') == [
        "./a",
        "../b.js",
        "./c",
    ]


@pytest.fixture(scope="module")
def made(docker_client: Any) -> Iterator[Made]:
    m = Made(docker_client)
    yield m
    m.cleanup()


@pytest.mark.engine
@pytest.mark.parametrize("code_mount", [False, True], ids=["image", "code-mount"])
def test_a_node_agent_requiring_sibling_files_starts_hardened(
    made: Made, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory, code_mount: bool
) -> None:
    context = tmp_path_factory.mktemp("node-requires-base")
    copy_into(context / "rootfs", node_files())
    base = f"{unique('harden-node-req')}:1"
    made.build(base, context, "FROM scratch\nCOPY rootfs/ /\n")
    made.images.append(f"{base}-hardened")
    proj = _project(tmp_path / "proj")
    (proj / "compose.yaml").write_text(
        f"services:\n  agent:\n    image: {base}\n    working_dir: /app\n"
        "    command: [node, agent.js]\n    volumes: ['.:/app']\n"
        "    environment:\n      AGENT_API_KEY: ${AGENT_API_KEY}\n"
    )
    out = tmp_path / "out"
    flags = ["--code-mount"] if code_mount else []
    result = harden_cli(
        proj / "compose.yaml",
        "--out",
        out,
        "--verify",
        "--format",
        "json",
        *flags,
        "--pass-env",
        "AGENT_API_KEY",
        env={"AGENT_API_KEY": KEY},
    )
    report = json_report(result)
    probes = sources_named(report, "probe")
    assert probes["agent-start (docker-run.sh)"] == ("ok", "held: the agent ran and exited 0")
    assert all(status == "ok" for status, _ in probes.values()), probes
    lines = [
        "hello agent and later",
        "key=REDACTED",
        "code=agent.js config lib",
        "lib=late.mjs words.js x.js",  # not unused.js; config holds words.json only
    ]
    assert verification(report, "agent-start")["output"] == lines

    run = run_script(out / "docker-run.sh", AGENT_API_KEY=KEY)
    assert run.returncode == 0, run.stderr
    assert run.stdout.splitlines() == [lines[0], f"key={KEY}", *lines[2:]]
    after = inspect_report(out, Kind.PROJECT)
    assert rule_ids(after) & fixed_ids(report) == set()

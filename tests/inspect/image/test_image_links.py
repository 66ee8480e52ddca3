"""Paths in an image resolve as the kernel resolves them: links in the middle of a path too.

Real saved-image tarballs built here (tarballs.py), read by `agentguard inspect FILE`. The
issue's case: ``CMD python3 /app/bot.py`` with ``/app -> /opt/real`` hid the agent (0
findings, "not in the image"); managed settings behind ``/etc/claude-code -> /opt/cc`` and
user settings behind ``~/.claude -> /data/cc`` the same way.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

from agentguard.inspect.image import read_image_archive
from agentguard.inspect.image.paths import resolve_path
from tests.inspect.engine_support import inspect_cli, report_of
from tests.inspect.image.tarballs import E, d, docker_save, f, layer, sym

PASSWD = "root:x:0:0:root:/root:/bin/sh\n"
BOT = (
    "from claude_agent_sdk import ClaudeAgentOptions, query\n\n"
    'OPTIONS = ClaudeAgentOptions(permission_mode="bypassPermissions", '
    'allowed_tools=["Bash"])\n'
)
BENIGN = (
    "from claude_agent_sdk import ClaudeAgentOptions\n\n"
    'OPTIONS = ClaudeAgentOptions(tools=["Read"], setting_sources=[])\n'
)
BYPASS = '{"permissions": {"defaultMode": "bypassPermissions"}}\n'
CMD = ("python3", "/app/bot.py")


def _inspect(tmp_path: Path, layers: list[bytes], *, gz: bool = False, **kw: Any) -> Any:
    saved = docker_save(layers, workdir="/work", cmd=kw.pop("cmd", CMD), **kw)
    path = tmp_path / ("image.tar.gz" if gz else "image.tar")
    path.write_bytes(gzip.compress(saved.tar, mtime=0) if gz else saved.tar)
    result = inspect_cli(path, "--format", "json")
    return result.exit_code, report_of(result)


def _found(report: dict[str, Any]) -> set[tuple[str, str | None]]:
    return {(x["rule_id"], loc.get("path")) for x in report["findings"] for loc in x["locations"]}


def _control(tmp_path: Path, real: str) -> set[tuple[str, str | None]]:
    """What the same bot.py gives with no link at all (the path as the link leads)."""
    sub = tmp_path / "control"
    sub.mkdir(exist_ok=True)
    _, report = _inspect(sub, [layer([f("etc/passwd", PASSWD), f("app/bot.py", BOT)])])
    found = {(rule, real if path == "/app/bot.py" else path) for rule, path in _found(report)}
    assert ("AG305", real) in found and ("AG301", real) in found
    return found


def _agent_sources(report: dict[str, Any]) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (s["status"], s["name"], s.get("error_code"), s.get("reason"))
        for s in report["sources"]
        if s["kind"] == "image-agent"
    ]


def _no_false_absence(report: dict[str, Any]) -> None:
    text = str(report["sources"])
    assert "is not in the image" not in text and "not in the image's PATH" not in text


def test_the_issue_case_a_folder_link_in_the_middle_of_the_script_path(tmp_path: Path) -> None:
    base = layer([f("etc/passwd", PASSWD), d("opt/real"), f("opt/real/bot.py", BOT)])
    top = layer([sym("app", "/opt/real")])
    code, report = _inspect(tmp_path, [base, top])
    assert code == 1
    assert _found(report) == _control(tmp_path, "/opt/real/bot.py")
    assert _agent_sources(report)[0] == (
        "ok",
        "python3 /app/bot.py",
        None,
        "followed to script /opt/real/bot.py",
    )
    _no_false_absence(report)
    # read a second time for the link's target, and the report says so
    assert [s["reason"] for s in report["sources"] if s["kind"] == "image-links"] == [
        "read again for 2 paths the agent reaches through links"
    ]


def test_the_same_through_the_one_pass_stream(tmp_path: Path) -> None:
    """A gzip-compressed save is read as a one-way stream: read again, not given up."""
    base = layer([f("etc/passwd", PASSWD), f("opt/real/bot.py", BOT)])
    code, report = _inspect(tmp_path, [base, layer([sym("app", "../opt/real")])], gz=True)
    assert code == 1
    assert _found(report) == _control(tmp_path, "/opt/real/bot.py")


def test_managed_settings_behind_a_folder_link(tmp_path: Path) -> None:
    base = layer(
        [
            f("etc/passwd", PASSWD),
            f("opt/cc/managed-settings.json", BYPASS),
            f("opt/cc/managed-settings.d/10-more.json", '{"permissions": {"allow": ["Bash"]}}'),
            sym("etc/claude-code", "/opt/cc"),
            f("app/bot.py", BENIGN),
        ]
    )
    code, report = _inspect(tmp_path, [base])
    assert code == 1
    assert ("AG305", "/etc/claude-code/managed-settings.json") in _found(report)
    files = {x["path"]: x["why"] for x in report["facts"]["image"]["agent"]["files"]}
    assert files["/etc/claude-code/managed-settings.json"] == (
        "managed settings (/etc/claude-code/managed-settings.json -> "
        "/opt/cc/managed-settings.json through links)"
    )
    assert "/etc/claude-code/managed-settings.d/10-more.json" in files


def test_user_settings_behind_a_relative_link_of_the_home(tmp_path: Path) -> None:
    base = layer(
        [
            f("etc/passwd", PASSWD),
            f("data/cc/settings.json", BYPASS),
            d("root"),
            sym("root/.claude", "../data/cc"),
            f("app/bot.py", BENIGN),
        ]
    )
    code, report = _inspect(tmp_path, [base])
    assert code == 1
    assert ("AG305", "/root/.claude/settings.json") in _found(report)


def test_a_link_loop_is_a_failed_source_never_not_in_the_image(tmp_path: Path) -> None:
    base = layer([f("etc/passwd", PASSWD), sym("app", "/srv"), sym("srv", "app")])
    code, report = _inspect(tmp_path, [base])
    assert code == 3
    failed = [s for s in _agent_sources(report) if s[0] == "failed"]
    assert failed == [
        (
            "failed",
            "/app/bot.py",
            "link-loop",
            "more than 40 symbolic links on the way to /app/bot.py (a loop, or a chain "
            "longer than the kernel follows): the kernel refuses it (ELOOP)",
        )
    ]
    _no_false_absence(report)


def test_a_link_into_proc_is_a_failed_source(tmp_path: Path) -> None:
    base = layer([f("etc/passwd", PASSWD), sym("app", "/proc/self/cwd")])
    code, report = _inspect(tmp_path, [base])
    assert code == 3
    assert [s[:3] for s in _agent_sources(report) if s[0] == "failed"] == [
        ("failed", "/app/bot.py", "link-into-runtime-fs")
    ]
    _no_false_absence(report)


def test_a_whiteout_in_a_later_layer_removes_the_link(tmp_path: Path) -> None:
    """The link is deleted and a folder made in its place: the folder's bot.py runs."""
    base = layer([f("etc/passwd", PASSWD), f("opt/real/bot.py", BOT), sym("app", "/opt/real")])
    top = layer([f(".wh.app"), d("app"), f("app/bot.py", BENIGN)])
    _code, report = _inspect(tmp_path, [base, top])
    found = _found(report)
    assert "/opt/real/bot.py" not in {path for _, path in found}
    assert not {rule for rule, _ in found} & {"AG305", "AG301"}
    assert _agent_sources(report)[0][3] == "followed to script /app/bot.py"


def test_a_link_over_a_lower_folder_hides_what_the_folder_held(tmp_path: Path) -> None:
    base = layer([f("etc/passwd", PASSWD), f("app/bot.py", BENIGN), f("opt/real/bot.py", BOT)])
    top = layer([E("app", kind="symlink", link="/opt/real")])
    code, report = _inspect(tmp_path, [base, top])
    assert code == 1
    assert _found(report) == _control(tmp_path, "/opt/real/bot.py")


def test_a_chain_of_links_and_dotdot_past_the_root(tmp_path: Path) -> None:
    chain = [sym(f"l{i}", f"/l{i + 1}") for i in range(38)] + [sym("l38", "../../../opt/real")]
    base = layer([f("etc/passwd", PASSWD), f("opt/real/bot.py", BOT), sym("app", "l0"), *chain])
    code, report = _inspect(tmp_path, [base])
    assert code == 1  # 40 links: the kernel's limit, followed
    assert ("AG305", "/opt/real/bot.py") in _found(report)
    longer = layer(
        [
            f("etc/passwd", PASSWD),
            f("opt/real/bot.py", BOT),
            sym("app", "/k"),
            sym("k", "l0"),
            *chain,
        ]
    )
    code, report = _inspect(tmp_path, [longer])
    assert code == 3  # 41 links: ELOOP
    assert [s[2] for s in _agent_sources(report) if s[0] == "failed"] == ["link-loop"]


def test_the_links_of_a_layer_not_read_make_a_missing_script_unknown(tmp_path: Path) -> None:
    base = layer([f("etc/passwd", PASSWD), f("opt/real/bot.py", BOT)])
    top = layer([sym("app", "/opt/real")])
    saved = docker_save([base, top], workdir="/work", cmd=CMD)
    cut = saved.tar.replace(b"/opt/real", b"/opt/reaX")  # the layer's digest no longer holds
    path = tmp_path / "image.tar"
    path.write_bytes(cut)
    read = read_image_archive(path, target="img")
    assert read.facts is not None and not read.facts.symlinks_complete
    report = report_of(inspect_cli(path, "--format", "json"))
    reasons = [s[3] or "" for s in _agent_sources(report)]
    assert any("the image's links are not all known" in r for r in reasons), reasons
    _no_false_absence(report)


def test_resolve_path_as_the_kernel() -> None:
    links = {"/a": "b/c", "/b": "/x", "/x/c": "../y", "/loop": "/loop", "/p": "/proc/1/root"}
    assert resolve_path(links, "/a/f").path == "/y/f"
    assert resolve_path(links, "/a/../f").path == "/f"  # .. of the folder reached (/y)
    assert resolve_path(links, "/../../x/./c/f").path == "/y/f"
    assert resolve_path(links, "/loop/f").code == "link-loop"
    assert resolve_path(links, "/p/etc").code == "link-into-runtime-fs"
    assert resolve_path(links, "/proc/cpuinfo").ok  # no link led there

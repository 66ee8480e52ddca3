"""AG110-AG113 over installed distributions (and a pylock.toml): whole findings."""

from __future__ import annotations

from pathlib import Path

from agentguard.config import load_config
from agentguard.inspect.lock_input import LockInput, read_lock
from agentguard.rules.inspected import check_image
from agentguard.rules.installed import evaluate_marker, marker_environment, python_version_of
from tests.rules.facts_loader import FIXTURES, expect, layer_digest, load_image, only

WATCHED = load_config(None).deps.watched
VENV = "/opt/venv/lib/python3.12/site-packages"
L0, L1, L2 = layer_digest(0), layer_digest(1), layer_digest(2)


def _lock(rule: str, case: str) -> LockInput:
    lock, source = read_lock(FIXTURES / rule / case / "image" / "pylock.toml")
    assert source.status.value == "ok", source
    assert lock is not None
    return lock


def _meta(name: str, version: str, location: str = VENV) -> str:
    return f"{location}/{name.replace('-', '_')}-{version}.dist-info/METADATA"


def _cand(name: str, version: str, layer: str, location: str = VENV) -> dict[str, str]:
    return {
        "version": version,
        "location": location,
        "metadata_path": _meta(name, version, location),
        "layer": layer,
    }


def test_ag110_missing_other_version_and_extra_packages() -> None:
    lock = _lock("AG110", "fail")
    lock_at = {"path": lock.path}
    findings = only("AG110", check_image(load_image("AG110", "fail"), lock=lock, watched=WATCHED))
    install_fix = "Install the lock as written (it pins {0}): `pip install -r` the lock."
    extra_fix = (
        "Remove {0} from the image, or add it to the project's requirements and re-run "
        "`agentguard lock`."
    )
    assert findings == [
        expect(
            "AG110",
            "high",
            f"mcp is locked at 1.27.0 in {lock.path} but image agent:1 has 2.3.0 in {VENV}.",
            locations=[{"path": _meta("mcp", "2.3.0"), "layer": L1}, lock_at],
            evidence={
                "package": "mcp",
                "drift": "other-version",
                "locked": ["1.27.0"],
                "markers": [None],
                "installed": [_cand("mcp", "2.3.0", L1)],
            },
            fix="Rebuild the image installing the lock with `--require-hashes` so mcp is 1.27.0; "
            "if the new version is wanted, re-run `agentguard lock` and review it.",
            snippet="mcp==1.27.0",
        ),
        expect(
            "AG110",
            "medium",
            f"httpx 0.27.0 is in the lock {lock.path} but not installed in image agent:1.",
            locations=[lock_at],
            evidence={
                "package": "httpx",
                "drift": "missing",
                "locked": ["0.27.0"],
                "markers": [None],
                "installed": [],
            },
            fix=install_fix.format("httpx"),
        ),
        # the marker needs the Python implementation, which the image does not tell
        expect(
            "AG110",
            "medium",
            f'uvloop 0.21.0 ; platform_python_implementation == "CPython" is in the lock '
            f"{lock.path} but not installed in image agent:1 (its marker could not be decided "
            "for this image).",
            locations=[lock_at],
            evidence={
                "package": "uvloop",
                "drift": "missing",
                "locked": ["0.21.0"],
                "markers": ['platform_python_implementation == "CPython"'],
                "installed": [],
            },
            fix=install_fix.format("uvloop"),
            confidence="low",
        ),
        expect(
            "AG110",
            "medium",
            f"rich is installed in image agent:1 (13.9.4 in {VENV}) but the lock does not list it.",
            locations=[{"path": _meta("rich", "13.9.4"), "layer": L2}],
            evidence={
                "package": "rich",
                "drift": "extra",
                "locked": [],
                "installed": [_cand("rich", "13.9.4", L2)],
                "installer_tooling": False,
            },
            fix=extra_fix.format("rich"),
        ),
        expect(
            "AG110",
            "info",
            f"pip is installed in image agent:1 (24.0 in {VENV}) but the lock does not list it "
            "(installer tooling, usually left out of locks).",
            locations=[{"path": _meta("pip", "24.0"), "layer": L1}],
            evidence={
                "package": "pip",
                "drift": "extra",
                "locked": [],
                "installed": [_cand("pip", "24.0", L1)],
                "installer_tooling": True,
            },
            fix=extra_fix.format("pip"),
        ),
    ]


def test_ag110_pass_matching_install_platform_marker_and_system_packages_ignored() -> None:
    lock = _lock("AG110", "pass")
    image = load_image("AG110", "pass")
    assert only("AG110", check_image(image, lock=lock, watched=WATCHED)) == []


def test_ag110_not_run_without_a_lock() -> None:
    assert only("AG110", check_image(load_image("AG110", "fail"), lock=None, watched=WATCHED)) == []


def _fix111(owner: str, child: str, spec: str) -> str:
    return (
        f"Resolve {owner} and {child} together (`agentguard lock`) and install the lock, so "
        f"{child} satisfies `{spec}`."
    )


def test_ag111_offline_pip_check() -> None:
    image = load_image("AG111", "fail")
    sdk = _meta("claude-agent-sdk", "0.2.100")
    assert only("AG111", check_image(image, lock=None, watched=WATCHED)) == [
        expect(
            "AG111",
            "high",
            "claude-agent-sdk 0.2.100 requires anyio>=4.0.0 but anyio is not installed "
            "(image agent:1).",
            locations=[{"path": sdk, "layer": L1}],
            evidence={
                "package": "claude-agent-sdk",
                "version": "0.2.100",
                "requires": "anyio>=4.0.0",
                "child": "anyio",
                "installed": [],
                "marker_decided": True,
            },
            fix=_fix111("claude-agent-sdk", "anyio", ">=4.0.0"),
        ),
        expect(
            "AG111",
            "high",
            f"claude-agent-sdk 0.2.100 requires mcp<2.0.0,>=1.23.0 but installed: 2.3.0 in {VENV} "
            "(image agent:1).",
            locations=[{"path": sdk, "layer": L1}, {"path": _meta("mcp", "2.3.0"), "layer": L2}],
            evidence={
                "package": "claude-agent-sdk",
                "version": "0.2.100",
                "requires": "mcp<2.0.0,>=1.23.0",
                "child": "mcp",
                "installed": [_cand("mcp", "2.3.0", L2)],
                "marker_decided": True,
            },
            fix=_fix111("claude-agent-sdk", "mcp", "<2.0.0,>=1.23.0"),
        ),
        expect(
            "AG111",
            "high",
            "mcp 2.3.0 requires anyio>=4.5 but anyio is not installed (image agent:1).",
            locations=[{"path": _meta("mcp", "2.3.0"), "layer": L2}],
            evidence={
                "package": "mcp",
                "version": "2.3.0",
                "requires": "anyio>=4.5",
                "child": "anyio",
                "installed": [],
                "marker_decided": True,
            },
            fix=_fix111("mcp", "anyio", ">=4.5"),
        ),
    ]


def test_ag111_pass_win32_and_extra_requirements_are_not_checked_on_linux() -> None:
    assert only("AG111", check_image(load_image("AG111", "pass"), lock=None, watched=WATCHED)) == []


def test_ag112_two_installs_are_one_ambiguous_finding_with_both_candidates() -> None:
    image = load_image("AG112", "fail")
    local = "/usr/local/lib/python3.12/site-packages"
    assert only("AG112", check_image(image, lock=None, watched=WATCHED)) == [
        expect(
            "AG112",
            "medium",
            f"mcp is installed 2 times in image agent:1: 2.3.0 in {VENV}; 1.27.0 in {local}. "
            "Which one is imported depends on sys.path.",
            locations=[
                {"path": _meta("mcp", "2.3.0"), "layer": L2},
                {"path": _meta("mcp", "1.27.0", local), "layer": L1},
            ],
            evidence={
                "package": "mcp",
                "candidates": [_cand("mcp", "2.3.0", L2), _cand("mcp", "1.27.0", L1, local)],
            },
            fix="Install mcp into one environment only and remove the other copy in the layer "
            "that installed it.",
            ambiguous=True,
        )
    ]


def test_ag112_pass() -> None:
    assert only("AG112", check_image(load_image("AG112", "pass"), lock=None, watched=WATCHED)) == []


def test_ag113_agent_stack_inventory() -> None:
    image = load_image("AG113", "fail")
    sdk = _cand("claude-agent-sdk", "0.2.100", L1)
    mcp = _cand("mcp", "2.3.0", L1)
    assert only("AG113", check_image(image, lock=None, watched=WATCHED)) == [
        expect(
            "AG113",
            "info",
            f"Image agent:1 carries claude-agent-sdk 0.2.100 (major 0.2) in {VENV}.",
            locations=[{"path": sdk["metadata_path"], "layer": L1}],
            evidence={
                "package": "claude-agent-sdk",
                "versions": ["0.2.100"],
                "majors": ["0.2"],
                "candidates": [sdk],
            },
            fix="Nothing to change; pin claude-agent-sdk in the lock and inspect with --lock.",
        ),
        expect(
            "AG113",
            "info",
            f"Image agent:1 carries mcp 2.3.0 (major 2) in {VENV}.",
            locations=[{"path": mcp["metadata_path"], "layer": L1}],
            evidence={
                "package": "mcp",
                "versions": ["2.3.0"],
                "majors": ["2"],
                "candidates": [mcp],
            },
            fix="Nothing to change; pin mcp in the lock and inspect with --lock.",
        ),
    ]


def test_ag113_pass_no_agent_stack() -> None:
    assert only("AG113", check_image(load_image("AG113", "pass"), lock=None, watched=WATCHED)) == []


def test_markers_decided_only_from_what_the_image_tells() -> None:
    image = load_image("AG113", "pass")
    env = marker_environment(image, python_version_of(VENV))
    assert python_version_of(VENV) == "3.12"
    assert python_version_of("/usr/lib/python3/dist-packages") is None
    assert evaluate_marker("sys_platform == 'win32'", env) is False
    assert evaluate_marker("python_version >= '3.10' and platform_machine == 'x86_64'", env) is True
    assert evaluate_marker("python_full_version >= '3.12.1'", env) is None
    assert evaluate_marker("extra == 'trio'", env) is False
    assert evaluate_marker("not a marker", env) is None


def test_lock_that_is_not_a_pylock_is_a_failed_source(tmp_path: Path) -> None:
    bad = tmp_path / "pylock.toml"
    bad.write_text('lock-version = "1.0"\n[[packages]]\nname = "mcp"\nversion = "1.0"\n')
    lock, source = read_lock(bad)
    assert lock is None
    assert (source.status.value, source.error_code, source.retryable) == (
        "failed",
        "lockfile-invalid",
        False,
    )
    missing, source = read_lock(tmp_path / "nope.toml")
    assert missing is None and source.error_code == "lockfile-missing"


def test_ag110_holds_each_fork_to_the_pin_its_marker_selects() -> None:
    # A universal lock pins jiter once per fork, under python_full_version markers; the
    # image tells only the minor (3.12, from the site-packages path), which decides them.
    from agentguard.inspect.facts import ImageFacts
    from agentguard.lock.pins import LockedPackage as LockedPin
    from tests.rules.facts_loader import image_from_json

    lock = LockInput(
        "pylock.toml",
        "sha256:" + "0" * 64,
        (
            LockedPin("jiter", "0.18.0", 'python_full_version < "3.11"'),
            LockedPin("jiter", "0.19.0", 'python_full_version >= "3.11"'),
        ),
        discovered=False,
    )

    def image(version: str) -> ImageFacts:
        return image_from_json(
            {
                "target": "agent:1",
                "config": {"history": [{"created_by": "RUN pip install -r requirements.lock"}]},
                "installed": [{"name": "jiter", "version": version, "location": VENV, "layer": 0}],
            }
        )

    assert only("AG110", check_image(image("0.19.0"), lock=lock, watched=WATCHED)) == []
    assert only("AG110", check_image(image("0.18.0"), lock=lock, watched=WATCHED)) == [
        expect(
            "AG110",
            "high",
            'jiter is locked at 0.19.0 ; python_full_version >= "3.11" in pylock.toml but image '
            f"agent:1 has 0.18.0 in {VENV}.",
            locations=[{"path": _meta("jiter", "0.18.0"), "layer": L0}, {"path": "pylock.toml"}],
            evidence={
                "package": "jiter",
                "drift": "other-version",
                "locked": ["0.19.0"],
                "markers": ['python_full_version >= "3.11"'],
                "installed": [_cand("jiter", "0.18.0", L0)],
            },
            fix="Rebuild the image installing the lock with `--require-hashes` so jiter is "
            "0.19.0; if the new version is wanted, re-run `agentguard lock` and review it.",
            snippet='jiter==0.19.0 ; python_full_version >= "3.11"',
        )
    ]

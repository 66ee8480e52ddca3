"""The probe's output reader and the AG501 verdicts, offline: what each observation means,
and that a probe which saw nothing is "unknown", never "held"."""

from __future__ import annotations

from pathlib import Path

from agentguard.harden.probe import is_static_elf
from agentguard.harden.probe_facts import (
    HELPER_PATH,
    Expected,
    Inside,
    MountInfo,
    Observation,
    Outside,
    parse_mountinfo_line,
    parse_probe_output,
)
from agentguard.inspect.facts import MountFact
from agentguard.rules.runtime import check_observation

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "AG501"
# what the probe printed in a hardened container (trimmed /proc/self/mountinfo), and in one
# run as root with capabilities, a writable root and the checkout mounted at /work
SAMPLE = (FIXTURES / "pass" / "probe-output.txt").read_text()
BROKEN = (FIXTURES / "fail" / "probe-output.txt").read_text()
EXPECTED = Expected(
    workdir="/work",
    network="none",
    tmpfs=("/work", "/tmp"),
    allowed=(),
    volumes=(),
    helper=HELPER_PATH,
)
OUTSIDE = Outside(
    user="10001:10001",
    read_only_rootfs=True,
    network_mode="none",
    networks=("none",),
    mounts=(MountFact("bind", "/usr/bin/busybox", HELPER_PATH, False),),
    cap_add=(),
    cap_drop=("ALL",),
    privileged=False,
    security_opt=("no-new-privileges:true",),
    workdir="/work",
)


def test_the_probe_output_reads_into_facts() -> None:
    inside = parse_probe_output(SAMPLE.splitlines())
    assert inside == Inside(
        uids=(10001, 10001, 10001, 10001),
        gids=(10001, 10001, 10001, 10001),
        cap_eff="0000000000000000",
        cap_prm="0000000000000000",
        no_new_privs="1",
        cwd="/work",
        entries=(),
        rootfs="denied",
        mounts=inside.mounts,
        interfaces=("lo",),
        complete=True,
        egress=(),  # no address was asked for
    )
    assert inside.mounts is not None
    assert [m.mountpoint for m in inside.mounts] == [
        "/", "/proc", "/tmp", "/work", HELPER_PATH, "/etc/resolv.conf",
    ]  # fmt: skip
    assert inside.mounts[0] == MountInfo("/", "/data/vfs/dir/fae6", "ext4", ("ro", "relatime"))


def test_an_escaped_mount_point_and_a_garbled_line() -> None:
    m = parse_mountinfo_line("90 69 254:0 /srv/my\\040docs /data ro - ext4 /dev/vda rw")
    assert m == MountInfo("/data", "/srv/my docs", "ext4", ("ro",))
    assert parse_mountinfo_line("not a mountinfo line") is None


def test_a_probe_cut_short_lists_nothing_as_seen() -> None:
    inside = parse_probe_output(SAMPLE.split("AGP mount")[0].splitlines())
    assert (inside.complete, inside.entries, inside.mounts, inside.interfaces) == (
        False,
        None,
        None,
        None,
    )


def _obs(inside: Inside | None, outside: Outside | None, why: str | None = None) -> Observation:
    return Observation("c0ffee" * 10, "agent:1", "docker-run.sh", inside, outside, why)


def test_a_hardened_container_holds_on_every_probe() -> None:
    verdicts = check_observation(_obs(parse_probe_output(SAMPLE.splitlines()), OUTSIDE), EXPECTED)
    assert [(v.probe, v.status) for v in verdicts] == [
        ("user", "held"),
        ("working-directory", "held"),
        ("root-filesystem", "held"),
        ("capabilities", "held"),
        ("no-new-privileges", "held"),
        ("mounts", "held"),
        ("docker-socket", "held"),
        ("network", "held"),
    ]
    assert all(v.finding is None for v in verdicts)


def test_nothing_seen_is_unknown_never_held() -> None:
    verdicts = check_observation(_obs(None, None, "no probe inside: no busybox on PATH"), EXPECTED)
    assert {(v.status, v.detail) for v in verdicts} == {
        ("unknown", "not verified: no probe inside: no busybox on PATH")
    }


def test_from_outside_only_what_the_engine_record_shows_is_verified() -> None:
    verdicts = check_observation(_obs(None, OUTSIDE, "no probe inside: x"), EXPECTED)
    assert {v.probe: v.status for v in verdicts} == {
        "user": "unknown",
        "working-directory": "unknown",
        "root-filesystem": "held",
        "capabilities": "unknown",
        "no-new-privileges": "unknown",
        "mounts": "held",
        "docker-socket": "held",
        "network": "held",
    }


def test_the_fail_fixture_breaks_five_probes_each_with_a_whole_finding() -> None:
    verdicts = check_observation(_obs(parse_probe_output(BROKEN.splitlines()), OUTSIDE), EXPECTED)
    violated = {v.probe: v.detail for v in verdicts if v.status == "violated"}
    assert violated == {
        "user": "the process runs with uids (0, 0, 0, 0) and gids (0, 0, 0, 0) (0 is root)",
        "working-directory": "/work holds 2 entries (CLAUDE.md, docs); /work is a ext4 mount of "
        "/home/dev/checkout, not an empty tmpfs",
        "root-filesystem": "a file could be written to / inside the container",
        "capabilities": "CapEff 00000000a80425fb, CapPrm 0000000000000000: capabilities are effective",
        "no-new-privileges": "NoNewPrivs is 0: setuid programs can raise privileges",
        "mounts": "ext4 mount of /home/dev/checkout at /work (at the working directory)",
    }
    (caps,) = [v.finding for v in verdicts if v.probe == "capabilities" and v.finding]
    assert caps.to_json() | {"fingerprint": None} == {
        "rule_id": "AG501",
        "title": "Hardened configuration does not hold at run time",
        "severity": "high",
        "confidence": "high",
        "message": "The hardened configuration does not hold at run time: probe capabilities: "
        "CapEff 00000000a80425fb, CapPrm 0000000000000000: capabilities are effective.",
        "locations": [
            {"path": "docker-run.sh", "note": "probe capabilities, container c0ffeec0ffee"}
        ],
        "evidence": {
            "probe": "capabilities",
            "image": "agent:1",
            "container": "c0ffeec0ffee",
            "cap_eff": "00000000a80425fb",
        },
        "fix": {
            "description": "Run with `--cap-drop ALL`, no `--cap-add` and no `--privileged`. "
            "Regenerate docker-run.sh with `agentguard harden`.",
            "safe": False,
        },
        "ambiguous": False,
        "suppressed": None,
        "fingerprint": None,
    }


def test_the_helper_must_be_static(tmp_path: Path) -> None:
    import shutil

    busybox = shutil.which("busybox")
    assert busybox is not None
    assert is_static_elf(Path(busybox)) is True
    assert is_static_elf(Path("/bin/ls")) is False
    (tmp_path / "script").write_text("#!/bin/sh\n")
    assert is_static_elf(tmp_path / "script") is False

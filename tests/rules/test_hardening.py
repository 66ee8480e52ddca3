"""AG401-AG407 over image and container facts: fail fixtures give exactly these findings."""

from __future__ import annotations

import json

from agentguard.findings import Location
from agentguard.rules.hardening import (
    check_capabilities,
    check_namespaces,
    check_no_new_privileges,
    check_privileged,
    check_read_only_rootfs,
    normalise_capability,
    user_is_root,
)
from agentguard.rules.inspected import check_container, check_image
from tests.rules.facts_loader import expect, layer_digest, load_container, load_image, only, plain

SK = "sk-ant-api03-" + "Q" * 40
HF = "hf_" + "h" * 34
SECRET_VALUES = [SK, "hunter2hunter2", HF, "sk-proj-" + "p" * 30, "xoxb-" + "1" * 24]
USER_FIX = (
    "Create an unprivileged user and run as it: `USER 10001:10001` in the Dockerfile, or "
    '`--user 10001:10001` / `user: "10001:10001"` where the container is started.'
)
RISKY = "container agent-risky"
RISKY_AT = [{"note": "container agent-risky (6167656e742d)"}]


def test_ag401_image_without_user_and_container_with_uid_0() -> None:
    image = load_image("AG401", "fail")
    assert only("AG401", check_image(image, lock=None, watched=())) == [
        expect(
            "AG401",
            "medium",
            "image agent:1 runs as root (user (not set: root), from the image's USER).",
            locations=[{"note": "image agent:1 config User"}],
            evidence={"subject": "image agent:1", "user": "", "set_where": "the image's USER"},
            fix=USER_FIX,
            snippet="USER 10001:10001",
        )
    ]
    container = load_container("AG401", "fail", image=image)
    assert only("AG401", check_container(container)) == [
        expect(
            "AG401",
            "medium",
            "container agent-root runs as root (user 0:0, from the container's --user).",
            locations=[{"note": "container agent-root (6167656e742d)"}],
            evidence={
                "subject": "container agent-root",
                "user": "0:0",
                "set_where": "the container's --user",
            },
            fix=USER_FIX,
            snippet="USER 10001:10001",
        )
    ]


def test_ag401_container_without_user_falls_back_to_the_image() -> None:
    root_image = load_image("AG401", "fail")
    container = load_container("AG401", "pass", image=root_image)  # sets no --user
    [finding] = only("AG401", check_container(container))
    assert finding["message"] == (
        "container agent-user runs as root (user (not set: root), from the image's USER "
        "(the container sets none))."
    )


def test_ag401_unknown_image_user_is_low_confidence_not_safe() -> None:
    container = load_container("AG401", "pass", image=None)
    [finding] = only("AG401", check_container(container))
    assert finding["confidence"] == "low"
    assert finding["message"] == (
        "The user container agent-user runs as could not be determined; it may be root."
    )


def test_ag401_pass() -> None:
    image = load_image("AG401", "pass")
    assert only("AG401", check_image(image, lock=None, watched=())) == []
    assert only("AG401", check_container(load_container("AG401", "pass", image=image))) == []


def _secret(
    subject: str, var: str, where: str, how: str, prefix: str, at: dict[str, str]
) -> dict[str, object]:
    why = (
        "its name says it is a secret"
        if how == "name"
        else f"its value has a known key format: {how.replace('-', ' ')}"
    )
    return expect(
        "AG402",
        "critical",
        f"{subject} sets {var} to a literal value in {where} ({why}); value redacted, "
        f"sha256 prefix {prefix}.",
        locations=[at],
        evidence={
            "subject": subject,
            "variable": var,
            "set_where": where,
            "detected_by": how,
            "value": "redacted",
            "value_sha256_prefix": prefix,
        },
        fix=f"Remove the literal {var} from {where}, pass it at run time from a secret store "
        f"(`--env {var}` passes the caller's value through), and rotate it: anyone who can "
        "read the image or the config has it.",
        snippet=f"--env {var}",
    )


def test_ag402_config_env_and_build_history_redacted() -> None:
    image = load_image("AG402", "fail")
    findings = only("AG402", check_image(image, lock=None, watched=()))
    img, env = "image agent:1", {"note": "image agent:1 config Env"}
    assert findings == [
        _secret(
            img,
            "HF_TOKEN",
            "build history step 3 (ARG HF_TOKEN=REDACTED)",
            "huggingface-token",
            "99bd9c82",
            {"note": "history step 3"},
        ),
        _secret(
            img,
            "ANTHROPIC_API_KEY",
            "the image config (ENV)",
            "anthropic-or-openai-key",
            "50bda318",
            env,
        ),
        _secret(img, "DB_PASSWORD", "the image config (ENV)", "name", "76880d60", env),
        _secret(
            img,
            "HF_TOKEN",
            "build history step 4 (RUN |1 HF_TOKEN=REDACTED /bin/sh -c pip install -r requirements.txt)",
            "huggingface-token",
            "99bd9c82",
            {"layer": layer_digest(1), "note": "history step 4"},
        ),
        _secret(
            img,
            "OPENAI_API_KEY",
            "build history step 5 (/bin/sh -c export OPENAI_API_KEY=REDACTED && python setup.py)",
            "anthropic-or-openai-key",
            "7d5fc497",
            {"layer": layer_digest(2), "note": "history step 5"},
        ),
    ]
    text = json.dumps(findings)
    assert not [v for v in SECRET_VALUES if v in text]


def test_ag402_container_env_reports_only_what_the_image_did_not_set() -> None:
    image = load_image("AG402", "fail")
    container = load_container("AG402", "fail", image=image)
    findings = only("AG402", check_container(container))
    assert findings == [
        _secret(
            "container agent-env",
            "SLACK_BOT_TOKEN",
            "the container's environment (--env)",
            "slack-token",
            "1834f022",
            {"note": "container agent-env (6167656e742d)"},
        )
    ]
    assert not [v for v in SECRET_VALUES if v in json.dumps(findings)]


def test_ag402_pass_through_empty_and_public_values_are_not_secrets() -> None:
    assert only("AG402", check_image(load_image("AG402", "pass"), lock=None, watched=())) == []


def test_ag403_to_ag407_risky_container() -> None:
    container = load_container("AG403", "fail")
    findings = check_container(container)
    assert only("AG403", findings) == [
        expect(
            "AG403",
            "critical",
            "container agent-risky runs privileged: every capability and every host device.",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "privileged": True},
            fix="Remove `--privileged` (`privileged: true`); add one reviewed capability instead.",
        )
    ]
    assert only("AG404", findings) == [
        expect(
            "AG404",
            "high",
            "container agent-risky is given the capability NET_ADMIN, a known way to reach the "
            "host or its network.",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "capability": "NET_ADMIN", "known_escape": True},
            fix="Remove `--cap-add NET_ADMIN` (`cap_add: [NET_ADMIN]`) and run with "
            "`--cap-drop ALL`.",
            snippet="--cap-drop ALL",
        ),
        expect(
            "AG404",
            "medium",
            "container agent-risky is given the capability CHOWN.",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "capability": "CHOWN", "known_escape": False},
            fix="Remove `--cap-add CHOWN` (`cap_add: [CHOWN]`) and run with `--cap-drop ALL`.",
            snippet="--cap-drop ALL",
        ),
    ]
    assert only("AG405", findings) == [
        expect(
            "AG405",
            "high",
            f"container agent-risky shares the host's {ns} namespace ({ns} mode host).",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "namespace": ns, "mode": "host"},
            fix=f"Remove `--{ns} host` (`{ns}_mode: host`); use the container's own {ns} namespace.",
        )
        for ns in ("ipc", "network", "pid")
    ]
    assert only("AG406", findings) == [
        expect(
            "AG406",
            "low",
            "The root filesystem of container agent-risky is writable.",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "read_only_rootfs": False},
            fix="Run with `--read-only` (`read_only: true`) and give the agent explicit scratch "
            "space: `--tmpfs /tmp` and a volume for its working directory.",
            snippet="--read-only --tmpfs /tmp",
        )
    ]
    assert only("AG407", findings) == [
        expect(
            "AG407",
            "low",
            "container agent-risky does not set no-new-privileges.",
            locations=RISKY_AT,
            evidence={"subject": RISKY, "security_opt": ["label=disable"]},
            fix='Run with `--security-opt no-new-privileges` (`security_opt: ["no-new-privileges:true"]`).',
            snippet="--security-opt no-new-privileges",
        )
    ]


def test_ag403_to_ag407_hardened_container_has_none() -> None:
    for rule in ("AG403", "AG404", "AG405", "AG406", "AG407"):
        assert only(rule, check_container(load_container(rule, "pass"))) == [], rule


def test_unknown_runtime_values_are_low_confidence_findings() -> None:
    here = Location(path="compose.yaml", line=3)
    unknown = [
        *check_privileged(None, subject="service agent", location=here),
        *check_capabilities(None, subject="service agent", location=here),
        *check_namespaces(
            network_mode=None,
            pid_mode="host",
            ipc_mode=None,
            subject="service agent",
            location=here,
        ),
        *check_read_only_rootfs(None, subject="service agent", location=here),
        *check_no_new_privileges(None, subject="service agent", location=here),
    ]
    assert [(f.rule_id, f.confidence.value) for f in unknown] == [
        ("AG403", "low"),
        ("AG404", "low"),
        ("AG405", "low"),
        ("AG405", "high"),
        ("AG405", "low"),
        ("AG406", "low"),
        ("AG407", "low"),
    ]
    assert all(f.locations == (here,) for f in unknown)
    assert (
        plain(check_no_new_privileges(["no-new-privileges=true"], subject="s", location=here)) == []
    )


def test_user_and_capability_normalisation() -> None:
    assert [
        user_is_root(u) for u in ("", "0", "root", "0:1000", "root:root", "10001", "agent")
    ] == [
        True,
        True,
        True,
        True,
        True,
        False,
        False,
    ]
    assert user_is_root(None) is None
    assert [normalise_capability(c) for c in ("CAP_NET_ADMIN", "sys_admin", " ALL ")] == [
        "NET_ADMIN",
        "SYS_ADMIN",
        "ALL",
    ]

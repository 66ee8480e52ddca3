"""AG20x/AG40x from compose, devcontainer and Dockerfile facts (pure functions, no I/O).

The rule classes live in :mod:`agentguard.rules.mounts` and
:mod:`agentguard.rules.hardening` (shared with the image/container inspector); this
module turns the project-file facts into their inputs, with file:line locations.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from agentguard.facts.compose import ComposeFile, ComposeService
from agentguard.facts.devcontainer import SOCKET_FEATURES, DevcontainerFacts, DevMount, DevSetting
from agentguard.facts.dockerfile import DockerfileFacts
from agentguard.facts.host_paths import host_path
from agentguard.facts.image import MountFact
from agentguard.findings import Confidence, Finding, Fix, Location
from agentguard.rules.hardening import (
    RunsAsRoot,
    check_capabilities,
    check_namespaces,
    check_no_new_privileges,
    check_privileged,
    check_read_only_rootfs,
    check_user,
)
from agentguard.rules.interpolation import Expanded, dockerfile_env, expand, expand_compose
from agentguard.rules.mounts import check_mounts
from agentguard.rules.secret_values import check_env_secrets


def _mode(value: str | None) -> str | None:
    """A namespace mode for the hardening checks: "" when unset, None when interpolated."""
    if value is None:
        return ""
    return None if "$" in value else value


# -- compose ------------------------------------------------------------------------


def check_compose_service(
    path: str, svc: ComposeService, workdir: str | None, workdir_from: str
) -> list[Finding]:
    """AG202-AG204 and AG401-AG407 for one compose service.

    ``workdir`` is the service's effective working directory (its ``working_dir``, else
    the WORKDIR of the Dockerfile it builds, else None: unknown); ``workdir_from`` says
    which, for the evidence.
    """
    subject = f"compose service {svc.name}"

    def at(key: str) -> Location:
        return Location(path=path, line=svc.line_of(key))

    findings: list[Finding] = []
    mounts: list[MountFact] = []
    where: dict[int, Location] = {}
    for v in svc.volumes:
        if v.target is None:
            continue
        m = MountFact(
            type=v.type,
            source=host_path(v.source),
            destination=v.target,
            read_write=None if v.read_only is None else not v.read_only,
        )
        mounts.append(m)
        where[id(m)] = Location(path=path, line=v.line)
    contexts = [svc.build_context] if svc.build_context else []
    for f in check_mounts(
        mounts, workdir, subject=subject, locate=lambda m: where[id(m)], contexts=contexts
    ):
        if f.rule_id == "AG202":  # say where the working directory came from
            f = dataclasses.replace(f, evidence={**f.evidence, "workdir_from": workdir_from})
        findings.append(f)
    if svc.user is not None:
        user = expand_compose(svc.user)  # a variable: unknown; its `:-default`: as shown
        findings += check_user(
            user.value,
            subject=subject,
            location=at("user"),
            set_where="the compose file"
            + (f", {', '.join(user.used)}" if user.used and user.value is not None else ""),
            unknown_why=_unknown_why(
                f"user: {svc.user}", user.unknown, "the environment compose runs in"
            ),
        )
    for env in svc.environment:
        if env.value is not None:
            findings += check_env_secrets(
                [(env.name, env.value)],
                subject=subject,
                location=Location(path=path, line=env.line),
                set_where="the compose environment",
            )
    if svc.privileged is not False:
        findings += check_privileged(svc.privileged, subject=subject, location=at("privileged"))
    if svc.cap_add:
        findings += check_capabilities(svc.cap_add, subject=subject, location=at("cap_add"))
    for key, ns, value in (
        ("network_mode", "network_mode", svc.network_mode),
        ("pid", "pid_mode", svc.pid),
        ("ipc", "ipc_mode", svc.ipc),
    ):
        modes = {"network_mode": "", "pid_mode": "", "ipc_mode": ""}
        modes[ns] = _mode(value)  # type: ignore[assignment]
        findings += check_namespaces(**modes, subject=subject, location=at(key))
    # line_of falls back to the service's own line when the key is not written
    findings += check_read_only_rootfs(svc.read_only, subject=subject, location=at("read_only"))
    findings += check_no_new_privileges(
        svc.security_opt, subject=subject, location=at("security_opt")
    )
    return findings


def check_compose_file(
    cf: ComposeFile, workdirs: Mapping[str, tuple[str | None, str]]
) -> list[Finding]:
    """Every service of ``cf``; ``workdirs`` maps a service name to (workdir, where from)."""
    findings: list[Finding] = []
    for svc in cf.services:
        workdir, where = workdirs.get(svc.name, (svc.working_dir, "working_dir"))
        findings += check_compose_service(cf.path, svc, workdir, where)
    return findings


# -- devcontainer -------------------------------------------------------------------


def _dev_mount(m: DevMount) -> MountFact | None:
    if m.target is None:
        return None
    return MountFact(
        type=m.type,
        source=host_path(m.source),
        destination=m.target,
        read_write=None if m.read_only is None else not m.read_only,
    )


def check_devcontainer(dc: DevcontainerFacts) -> list[Finding]:
    """AG202-AG204 and AG401-AG405 for one devcontainer.json (its features and the
    scripts its lifecycle commands run included)."""
    from agentguard.rules.devcontainer_features import (
        check_privileged_features,
        check_socket_chmod,
    )

    subject = f"devcontainer {dc.path}"
    findings: list[Finding] = []
    mounts: list[MountFact] = []
    where: dict[int, Location] = {}
    for dm in (dc.workspace_mount, *dc.mounts):
        if dm is None:
            continue
        m = _dev_mount(dm)
        if m is None:
            continue
        mounts.append(m)
        note = dm.origin if dm.origin != "mounts" else None
        where[id(m)] = Location(path=dc.path, line=dm.line, note=note)
    for feat in dc.features:
        name = feat.value or ""
        if any(s in name for s in SOCKET_FEATURES):
            m = MountFact("bind", "/var/run/docker.sock", "/var/run/docker-host.sock", True)
            mounts.append(m)
            where[id(m)] = Location(
                path=dc.path, line=feat.line, note=f"feature {name} mounts the host's Docker socket"
            )
    mounted = check_mounts(
        mounts, dc.workspace_folder.value, subject=subject, locate=lambda m: where[id(m)]
    )
    findings += [f for f in mounted if f.rule_id != "AG203"]
    findings += check_socket_chmod(dc, [f for f in mounted if f.rule_id == "AG203"])
    findings += check_privileged_features(dc)
    for setting, label in ((dc.remote_user, "remoteUser"), (dc.container_user, "containerUser")):
        if setting.value is not None:
            findings += check_user(
                None if "$" in setting.value else setting.value,
                subject=subject,
                location=Location(path=dc.path, line=setting.line),
                set_where=label,
            )
    for env in dc.env:
        if env.value is not None:
            findings += check_env_secrets(
                [(env.name, env.value)],
                subject=subject,
                location=Location(path=dc.path, line=env.line),
                set_where=f"devcontainer {env.origin}",
            )
    if dc.privileged.value is not None:
        value = dc.privileged.value.lower()
        privileged = True if value == "true" else False if value == "false" else None
        if privileged is not False:
            findings += check_privileged(
                privileged,
                subject=subject,
                location=Location(path=dc.path, line=dc.privileged.line),
            )
    for cap in dc.cap_add:
        findings += check_capabilities(
            [cap.value or ""], subject=subject, location=Location(path=dc.path, line=cap.line)
        )
    findings += _dev_namespaces(dc, subject)
    return findings


def _dev_namespaces(dc: DevcontainerFacts, subject: str) -> list[Finding]:
    findings: list[Finding] = []
    settings: Sequence[tuple[str, DevSetting]] = (
        ("network_mode", dc.network),
        ("pid_mode", dc.pid),
        ("ipc_mode", dc.ipc),
    )
    for ns, setting in settings:
        if setting.value is None:
            continue
        modes = {"network_mode": "", "pid_mode": "", "ipc_mode": ""}
        modes[ns] = _mode(setting.value)  # type: ignore[assignment]
        findings += check_namespaces(
            **modes,
            subject=subject,
            location=Location(path=dc.path, line=setting.line),
        )
    return findings


# -- Dockerfile ---------------------------------------------------------------------


def check_dockerfile_hardening(df: DockerfileFacts) -> list[Finding]:
    """AG401 for the final stage's user; AG402 for literal secrets in ENV/ARG."""
    findings: list[Finding] = []
    for setting in (*df.global_args, *(e for s in df.stages for e in s.env)):
        if setting.value is None:
            continue
        where = (
            "an ARG default in the Dockerfile"
            if setting.instruction == "ARG"
            else "ENV in the Dockerfile"
        )
        findings += check_env_secrets(
            [(setting.name, setting.value)],
            subject=df.path,
            location=Location(path=df.path, line=setting.line),
            set_where=where,
        )
    final = df.final
    if final is None:
        return findings
    written, line = df.effective_user(final)
    subject = f"the final stage of {df.path}"
    if written is not None:
        user = _dockerfile_user(df, written, line)
        findings += check_user(
            user.value,
            subject=subject,
            location=Location(path=df.path, line=line),
            set_where="USER" + (f" with {', '.join(user.used)}" if user.used else ""),
            unknown_why=_unknown_why(f"USER {written}", user.unknown, "a `--build-arg`"),
        )
        if user.value is None:
            return findings
        return findings + _passwordless_sudo(df, user.value, subject)
    base = _root_base(df)
    if base == "scratch":
        return findings + check_user(
            "",
            subject=subject,
            location=Location(path=df.path, line=final.line),
            set_where="no USER (scratch)",
        )
    findings.append(
        RunsAsRoot.finding(
            f"{subject} sets no USER: it runs as the user of the base image {base}, which is "
            "root unless that image sets another.",
            locations=[Location(path=df.path, line=final.line)],
            fix=Fix(
                "Create an unprivileged user and switch to it at the end of the final stage: "
                "`RUN useradd -u 10001 agent` then `USER 10001:10001`.",
                snippet="USER 10001:10001",
            ),
            evidence={"subject": subject, "user": None, "set_where": f"base image {base}"},
            confidence=Confidence.MEDIUM,
        )
    )
    return findings


def _dockerfile_user(df: DockerfileFacts, written: str, line: int | None) -> Expanded:
    """The USER's value with the ENV/ARG in force at its line (in the stage that sets it)."""
    if "$" not in written:
        return Expanded(written)
    stage = next((s for s in df.stages if s.user_line == line), df.final)
    if stage is None or line is None:
        return Expanded(None, ("?",))
    env = dockerfile_env(df, stage, line)
    return expand(written, env.get)


def _unknown_why(written: str, names: Sequence[str], decider: str) -> str:
    if not names:
        return ""
    listed = ", ".join(names)
    return f"`{written}`: the file gives no value for {listed}; {decider} decides"


_NOPASSWD_ALL = re.compile(r"NOPASSWD\s*:\s*ALL\b")
# root's password emptied: any user becomes root with `su` (OpenHands' sandbox template does
# this, and `passwd -d` of the agent's user too, "to allow passwordless su")
_ROOT_NO_PASSWORD = re.compile(r"\bpasswd\s+(?:-\S+\s+)*(?:-d|--delete)\s+root\b")


def _passwordless_sudo(df: DockerfileFacts, user: str, subject: str) -> list[Finding]:
    """AG401 for a non-root USER that the image lets become root without a password
    (``ALL=(ALL) NOPASSWD: ALL`` written to sudoers in a RUN of the final stage's chain)."""
    from agentguard.rules.hardening import user_is_root

    if user_is_root(user) is not False:
        return []
    chain: list[int] = []
    stage = df.final
    while stage is not None and stage.index not in chain:
        chain.append(stage.index)
        parent = df.stage_named(stage.base)
        stage = parent if parent is not None and parent.index < stage.index else None
    for index in reversed(chain):
        for run in df.stages[index].runs:
            sudo = _NOPASSWD_ALL.search(run.script)
            if sudo or _ROOT_NO_PASSWORD.search(run.script):
                how = (
                    "gives passwordless sudo (`NOPASSWD: ALL`)"
                    if sudo
                    else "empties root's password (`passwd -d root`)"
                )
                return [
                    RunsAsRoot.finding(
                        f"{subject} runs as {user}, but a RUN {how}: any process of that "
                        f"user, the agent's shell included, becomes root with "
                        f"`{'sudo' if sudo else 'su'}`.",
                        locations=[Location(path=df.path, line=run.line)],
                        fix=Fix(
                            "Do not grant sudo to the agent's user; install what it needs at "
                            "build time, as root, before `USER`."
                            if sudo
                            else "Keep root's password locked (drop `passwd -d root`); "
                            "install what the agent needs at build time, before `USER`.",
                        ),
                        evidence={
                            "subject": subject,
                            "user": user,
                            "set_where": "sudoers" if sudo else "empty root password",
                        },
                    )
                ]
    return []


def _root_base(df: DockerfileFacts) -> str:
    """The external image the final stage builds on (following stage names)."""
    stage = df.final
    seen: set[int] = set()
    while stage is not None and stage.index not in seen:
        seen.add(stage.index)
        parent = df.stage_named(stage.base)
        if parent is None or parent.index >= stage.index:
            return stage.base
        stage = parent
    return stage.base if stage else "unknown"

"""The rules for an inspected image or container: composes the AG1xx/AG2xx/AG4xx families.

One entry point per kind of target so the inspector runs the same set everywhere (an
image by reference, a saved tarball, an OCI layout, a container and its image). Pure.
"""

from __future__ import annotations

from collections.abc import Collection

from agentguard.facts.image import ContainerFacts, ImageFacts, MountFact
from agentguard.facts.lock import LockInput
from agentguard.findings import Finding, Location
from agentguard.rules.hardening import (
    check_capabilities,
    check_namespaces,
    check_no_new_privileges,
    check_privileged,
    check_read_only_rootfs,
    check_user,
)
from agentguard.rules.installed import check_duplicates, check_inventory, check_requirements
from agentguard.rules.installed_drift import check_drift
from agentguard.rules.mounts import (
    check_image_docker_socket,
    check_mounts,
    effective_workdir,
    workdir_relation,
)
from agentguard.rules.secret_values import check_env_secrets, check_history_secrets
from agentguard.rules.workdir import check_image_workdir


def image_location(image: ImageFacts, note: str) -> Location:
    return Location(note=f"image {image.target} {note}")


def check_installed(
    image: ImageFacts, *, lock: LockInput | None, watched: Collection[str]
) -> list[Finding]:
    """AG110 (with a lock), AG111, AG112 and AG113 for one image."""
    findings = check_duplicates(image) + check_requirements(image)
    findings += check_inventory(image, watched)
    if lock is not None:
        findings += check_drift(image, lock)
    return findings


def check_image_hardening(image: ImageFacts) -> list[Finding]:
    """AG401 and AG402 for an image on its own (no runtime config)."""
    subject = f"image {image.target}"
    findings = check_user(
        image.config.user,
        subject=subject,
        location=image_location(image, "config User"),
        set_where="the image's USER",
    )
    findings += check_env_secrets(
        image.config.env,
        subject=subject,
        location=image_location(image, "config Env"),
        set_where="the image config (ENV)",
    )
    findings += check_history_secrets(image)
    return findings


def check_image(
    image: ImageFacts,
    *,
    lock: LockInput | None,
    watched: Collection[str],
    workdir: str | None = None,
    runtime: bool = False,
    workdir_hidden: bool = False,
) -> list[Finding]:
    """Every image rule. ``workdir`` is a container's, when it overrides the image's.

    With ``runtime`` (the image of a container), AG401 is left to the container check,
    which knows the effective user. With ``workdir_hidden`` (a mount covers the
    container's working directory) the image's files there are not visible, so AG201 is
    not run: AG202 reports the mount instead.
    """
    findings = [] if workdir_hidden else check_image_workdir(image, workdir)
    findings += check_image_docker_socket(image)
    findings += check_installed(image, lock=lock, watched=watched)
    if runtime:
        subject = f"image {image.target}"
        findings += check_env_secrets(
            image.config.env,
            subject=subject,
            location=image_location(image, "config Env"),
            set_where="the image config (ENV)",
        )
        findings += check_history_secrets(image)
    else:
        findings += check_image_hardening(image)
    return findings


def container_workdir(container: ContainerFacts) -> str | None:
    """The container's WorkingDir, else its image's, else "/"; None when unknown."""
    image_wd = container.image.config.workdir if container.image is not None else None
    if container.workdir:
        return effective_workdir(container.workdir)
    if container.workdir is None:
        return None
    return effective_workdir(image_wd)


def workdir_hidden_by_mount(container: ContainerFacts) -> bool:
    """True when a mount sits at or above the container's working directory."""
    workdir = container_workdir(container)
    if workdir is None:
        return False
    return any(
        m.destination and workdir_relation(m.destination, workdir) in ("at", "above")
        for m in container.mounts
    )


def check_container(container: ContainerFacts) -> list[Finding]:
    """AG202-AG204 and AG401-AG407 for a container's runtime config.

    Environment variables the container inherits unchanged from its image are reported
    once, by the image check.
    """
    subject = f"container {container.name}"
    here = Location(note=f"container {container.name} ({container.id[:12]})")

    def locate(m: MountFact) -> Location:
        return Location(
            path=m.destination, note=f"container {container.name} mount of {m.source or '?'}"
        )

    findings = check_mounts(
        container.mounts, container_workdir(container), subject=subject, locate=locate
    )
    image_user = container.image.config.user if container.image is not None else None
    user: str | None
    if container.user:
        user, where = container.user, "the container's --user"
    else:
        user = image_user if container.user == "" else None
        where = "the image's USER (the container sets none)"
    findings += check_user(user, subject=subject, location=here, set_where=where)
    inherited = set(container.image.config.env) if container.image is not None else set()
    findings += check_env_secrets(
        [kv for kv in container.env if kv not in inherited],
        subject=subject,
        location=here,
        set_where="the container's environment (--env)",
    )
    findings += check_privileged(container.privileged, subject=subject, location=here)
    findings += check_capabilities(container.cap_add, subject=subject, location=here)
    findings += check_namespaces(
        network_mode=container.network_mode,
        pid_mode=container.pid_mode,
        ipc_mode=container.ipc_mode,
        subject=subject,
        location=here,
    )
    findings += check_read_only_rootfs(container.read_only_rootfs, subject=subject, location=here)
    findings += check_no_new_privileges(container.security_opt, subject=subject, location=here)
    return findings

"""``SUMMARY.md``: what changed and why, finding by finding, for the person applying it.

Built only from findings (already redacted), the plan and the verification verdicts: no
secret value can reach it. Every value from the project goes through the Markdown escaper
(:mod:`agentguard.escape`): :func:`~agentguard.escape.md_code` for a name or path shown as
code, :func:`~agentguard.escape.md_text` for prose that holds data; a newline, a backtick,
HTML or a link in a tool's or service's name stays text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from agentguard.escape import md_code as code
from agentguard.escape import md_text as text
from agentguard.findings import ConfigTrace, Finding
from agentguard.harden import compose_override, deps_changes, kubernetes
from agentguard.harden.engines import render_engine_section
from agentguard.harden.model import HardenOptions
from agentguard.harden.plan import Plan

FILE_NAME = "SUMMARY.md"


def _where(f: Finding) -> str:
    return "; ".join(loc.describe() for loc in f.locations) or "(no location)"


def _head(f: Finding) -> str:
    return (
        f"**{f.rule_id}** {text(f.title)} ({f.severity.value}) -- {text(f.message)} "
        f"_at {text(_where(f))}_"
    )


def image_deps_lines(plan: Plan) -> list[str]:
    """Per hardened image: where its dependencies come from (the lock, or the original)."""
    out: list[str] = []
    for svc in plan.spec.services:
        run = plan.code.get(svc.name)
        deps = svc.code.deps if svc.code is not None else None
        if run is None or deps is None:
            continue
        if run.mounts:
            out.append(
                f"{code(svc.name)} runs the original image with its code mounted (--code-mount): "
                f"its dependencies are the original image's; {code(run.dockerfile)} (not used) "
                "shows the image that would take them "
                + (f"from {text(deps.lock)}" if deps.lock else "from the original too (no lock)")
            )
        elif deps.lock is None:
            out.append(
                f"{code(run.dockerfile)} takes the dependencies of {code(svc.name)} from the "
                "original image, not from a lock: "
                + (text(deps.notes[0]) if deps.notes else "no lock was found")
            )
        elif deps.lines:
            out.append(
                f"{code(run.dockerfile)} installs the dependencies of {code(svc.name)} from "
                f"{text(deps.lock)}: {code(deps.command)}"
            )
        else:
            out.append(
                f"{code(run.dockerfile)} keeps your Dockerfile's line that installs the "
                f"dependencies of {code(svc.name)} from {text(deps.lock)}"
            )
    return out


def _configuration_lines(trace: ConfigTrace | None) -> list[str]:
    """Which configuration the findings below went through, and what it changed."""
    if trace is None:
        return []
    return [f"_{text(trace.describe())}_", ""]


def _secrets_line(plan: Plan) -> str:
    spec = plan.spec
    if spec.env_file is None:
        return (
            "- secrets passed at run time by name (docker `--env NAME`, compose `NAME:` with no "
            "value, Kubernetes `secretKeyRef`, devcontainer `${localEnv:NAME}`), never written "
            "here"
        )
    names = sorted({e.name for s in spec.services for e in s.env if e.value is None})
    holds = f", which must hold {', '.join(code(n) for n in names)}" if names else ""
    return (
        f"- secrets from {code(spec.env_file)} (docker `--env-file`, compose `env_file`){holds}; "
        "harden never reads it, and no value is written here. Kubernetes takes them from a "
        "Secret (`secretKeyRef`), the devcontainer from `${localEnv:NAME}`"
    )


def render_summary(
    plan: Plan,
    opts: HardenOptions,
    *,
    target: str,
    kind: str | None,
    verification: Sequence[Mapping[str, object]] | None = None,
    configuration: ConfigTrace | None = None,
) -> str:
    spec = plan.spec
    out: list[str] = [
        f"# Hardened configuration for {text(target)}",
        "",
        *_configuration_lines(configuration),
        f"Written by `agentguard harden` for the {text(kind or 'unknown')} {code(target)}. "
        "Use these files "
        "instead of the originals: every change below says which finding it fixes.",
        "",
        "## How to run it",
        "",
    ]
    for name, script in sorted(plan.scripts.items()):
        run = plan.code.get(name)
        if run is not None and run.build is not None:
            out.append(
                f"- {code('sh ' + script)} builds {code(run.tag)} from {code(run.dockerfile)} "
                f"(the agent's code only, from {code(run.context)}) and runs {code(name)} with "
                "`docker run`."
            )
        elif run is not None:
            out.append(
                f"- {code('sh ' + script)} runs {code(name)} with `docker run`, the agent's code "
                "mounted read-only (`--code-mount`)."
            )
        else:
            out.append(f"- {code('sh ' + script)} runs {code(name)} with `docker run`.")
    for name, notes in sorted(plan.devcontainers.items()):
        out.append(
            f"- {code(name)}: the hardened devcontainer; open its folder instead of the checkout."
        )
        out += [f"  - {text(n)}" for n in notes]
    out += [
        f"- {code(f'docker compose -f {compose_override.FILE_NAME} up')} runs every service (use it "
        "instead of your compose file, not merged on top: compose merges cap_add, volumes and "
        "environment across files).",
        f"- {code(kubernetes.FILE_NAME)}: merge the Pod's securityContext, container and volumes into "
        "your workload.",
        "",
        "What every service gets:",
        "",
        f"- user {code(spec.user)} (never root), root filesystem read-only, `--cap-drop ALL`, "
        "`no-new-privileges`",
        f"- working directory {code(spec.workdir)}: an empty tmpfs (writable by the user, nothing "
        "in it to read); `/tmp` is a tmpfs too, and HOME points at it",
        "- no bind mount of the project and no Docker socket"
        + (
            "; read-only data: "
            + ", ".join(f"{code(m.host)} at {code(m.container)}" for m in spec.allow_mounts)
            if spec.allow_mounts
            else ""
        ),
        _secrets_line(plan),
        f"- memory {code(spec.memory)}, at most {code(str(spec.pids))} processes",
        f"- network {code(spec.network)}"
        + (
            " (no egress at all)"
            if spec.network == "none"
            else ": it must exist; egress filtering belongs to a proxy or firewall on it"
        ),
        "",
    ]
    out += ["## Services", ""]
    for svc in spec.services:
        out.append(
            f"- {code(svc.name)} from {text(svc.origin)}"
            + (f", image {code(svc.image)}" if svc.image else "")
        )
        out += [f"  - {text(n)}" for n in svc.notes]
    out += ["", f"## Fixed ({len(plan.claims)})", ""]
    for c in plan.claims:
        out.append(f"- {_head(c.finding)}")
        out.append(f"  - fixed by {', '.join(code(x) for x in c.files)}: {text(c.how)}")
    out += ["", f"## Not fixed by this configuration ({len(plan.opens)})", ""]
    for o in plan.opens:
        out.append(f"- {_head(o.finding)}")
        out.append(f"  - why: {text(o.why)}")
        out.append(f"  - do: {text(o.todo)}")
        out += [f"  - choice: {text(ch)}" for ch in o.choices]
    if plan.sdk.configs:
        out += ["", "## Agent engine changes", ""]
        for cfg in plan.sdk.configs:
            out.append(
                f"- {code(f'{cfg.path}:{cfg.line}')} ({text(cfg.engine)}): replace its options "
                f"with {code(cfg.snippet_file)}"
            )
            out += [f"  - {text(ch)}" for ch in cfg.choices]
    out += render_engine_section(plan.engines)
    out += ["", "## Dependencies", ""]
    out += [f"- {line}" for line in image_deps_lines(plan)]  # (escaped there)
    if deps_changes.CONSTRAINTS_FILE in plan.files:
        out.append(
            f"- {code(deps_changes.CONSTRAINTS_FILE)}: {len(plan.deps.capped)} constraint lines, each "
            "capping a dependency at its locked major"
        )
    else:
        out.append("- no constraint lines (no lock, or no edge spans majors)")
    out.append(
        f"- {code(deps_changes.INSTALL_FILE)}: the Dockerfile lines that install the lock with "
        "`--require-hashes`"
    )
    if verification is not None:
        out += ["", "## Verification on the engine", ""]
        for v in verification:
            out.append(
                f"- {code(str(v.get('script')))}: {text(str(v.get('probe')))}: "
                f"{text(str(v.get('status')))} -- {text(str(v.get('detail')))}"
            )
            lines = v.get("output")
            if isinstance(lines, list) and lines:
                out.append("  - its first lines of output:")
                out += [f"    - {code(str(line))}" for line in lines]
        if not verification:
            out.append("- nothing could be probed (see the report's sources)")
    return "\n".join(out) + "\n"

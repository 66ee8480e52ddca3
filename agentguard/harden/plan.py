"""From the gathered facts to the hardened configuration: which files, and which finding each
one fixes (a :class:`Claim`) or does not (an :class:`Open`, with why and what to do).

Pure: no I/O. Every finding of the inspect report ends up in exactly one of the two lists.
A claim is only made where a written file replaces the thing the finding is about and
`agentguard inspect` on that file cannot report it again (the round-trip tests check this).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

from agentguard import redact
from agentguard.findings import Finding, Source
from agentguard.harden import (
    code,
    code_image,
    compose_override,
    deps_changes,
    devcontainer,
    engines,
    frameworks,
    kubernetes,
)
from agentguard.harden.docker_run import render_script, run_argv
from agentguard.harden.gather import Gathered
from agentguard.harden.model import (
    Claim,
    HardenedSpec,
    HardenOptions,
    Open,
    ServiceSpec,
    hardened_spec,
)
from agentguard.harden.sdk_changes import SdkChanges, config_for, hardened_settings, plan_configs

SETTINGS_FILE = ".claude/settings.json"
IMAGE_VAR = "AGENT_IMAGE"
_RUNTIME_SUBJECTS = ("container ", "compose service ", "devcontainer ")
_RUNTIME_WHERE = ("compose", "devcontainer", "container")


@dataclass
class Plan:
    spec: HardenedSpec
    files: dict[str, str] = field(default_factory=dict)
    scripts: dict[str, str] = field(default_factory=dict)  # service name -> script file
    # service name -> its script's `docker run` argv, as data (what --verify may run)
    argv: dict[str, tuple[str, ...]] = field(default_factory=dict)
    code: dict[str, code_image.CodeRun] = field(default_factory=dict)  # service -> its code
    devcontainers: dict[str, list[str]] = field(default_factory=dict)  # written file -> notes
    claims: list[Claim] = field(default_factory=list)
    opens: list[Open] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    sources: list[Source] = field(default_factory=list)
    sdk: SdkChanges = field(default_factory=SdkChanges)
    deps: deps_changes.DepsChanges = field(default_factory=deps_changes.DepsChanges)
    engines: engines.EngineChanges = field(default_factory=engines.EngineChanges)
    # (Dockerfile as the findings name it, line) -> (hardened Dockerfile, the lock install)
    installs: dict[tuple[str, int], tuple[str, str]] = field(default_factory=dict)

    @property
    def run_files(self) -> tuple[str, ...]:
        return (
            *sorted(self.scripts.values()),
            *sorted(r.dockerfile for r in self.code.values()),
            *sorted(self.devcontainers),
            compose_override.FILE_NAME,
            kubernetes.FILE_NAME,
        )


def _header(g: Gathered, what: str) -> list[str]:
    return [
        f"agentguard harden: {what}, made from {g.report.provenance.target} "
        f"({g.kind or 'unknown'}).",
        "Read SUMMARY.md beside this file: what changed and why, finding by finding.",
    ]


def _code_files(
    g: Gathered, opts: HardenOptions, svc: ServiceSpec, single: bool, plan: Plan
) -> None:
    if svc.code is None:
        return
    name = code_image.dockerfile_name(svc, single)
    header = [
        *_header(g, f"the hardened image of {svc.name}"),
        f"Build it from the project folder: docker build -f {name} -t "
        f"{code.hardened_tag(svc)} PROJECT",
    ]
    python_path = any(e.name == "PYTHONPATH" and e.value == svc.code.target for e in svc.env)
    plan.files[name] = code_image.render_dockerfile(
        svc, header=header, python_path=python_path, user=opts.user, workdir=opts.workdir
    )
    plan.code[svc.name] = code_image.code_run(svc, opts, name)


def _run_scripts(g: Gathered, spec: HardenedSpec, plan: Plan, opts: HardenOptions) -> None:
    single = len(spec.services) == 1
    for svc in spec.services:
        _code_files(g, opts, svc, single, plan)
        run = plan.code.get(svc.name)
        name = "docker-run.sh" if single else f"docker-run-{svc.name}.sh"
        image = svc.image or f"${{{IMAGE_VAR}:?build the image of {svc.name} and set {IMAGE_VAR}}}"
        if run is not None and run.build is not None:
            image = run.tag
        header = _header(g, f"docker run for {svc.name}")
        if spec.network != "none":
            header.append(
                f"Network {spec.network!r} must exist; egress filtering belongs to a proxy or "
                "firewall on it, not to this container."
            )
        argv = run_argv(spec, svc, image, run.mounts if run else ())
        plan.files[name] = render_script(argv, header=header, build=run.build if run else None)
        plan.scripts[svc.name] = name
        plan.argv[svc.name] = tuple(argv)


def _write_run_config(g: Gathered, spec: HardenedSpec, plan: Plan, opts: HardenOptions) -> None:
    _run_scripts(g, spec, plan, opts)
    header = [
        *_header(g, "the hardened compose file"),
        "Use it instead of the original, not merged on top of it: compose merges cap_add,",
        "volumes and environment across files, so an override could not remove them.",
        f"Run: docker compose -f {compose_override.FILE_NAME} up",
    ]
    text = compose_override.render_compose(
        spec, header=header, top_level=g.top_level, code=plan.code
    )
    problems = compose_override.schema_problems(text)
    if problems:  # a bug in the writer: say so, never hand out an invalid file silently
        plan.sources.append(
            Source.failed(
                "output",
                compose_override.FILE_NAME,
                "the written compose file does not match the Compose Specification: "
                + "; ".join(problems),
                error_code="harden-output-invalid",
                retryable=False,
            )
        )
    plan.files[compose_override.FILE_NAME] = text
    plan.files[kubernetes.FILE_NAME] = kubernetes.render_kubernetes(
        spec,
        header=_header(g, "a Kubernetes Pod with the same meaning"),
        images={n: r.tag for n, r in plan.code.items()},
    )


def _devcontainers(g: Gathered, spec: HardenedSpec, plan: Plan, opts: HardenOptions) -> None:
    if g.root is None:
        return
    for rel, doc in g.devcontainers:
        name = devcontainer.file_name(rel, len(g.devcontainers) == 1)
        hardened, notes = devcontainer.hardened_devcontainer(
            doc, rel=rel, root=g.root, new_rel=name, spec=spec, opts=opts
        )
        header = [
            *_header(g, f"the hardened devcontainer (from {rel})"),
            "Open the folder that holds this .devcontainer instead of the checkout.",
        ]
        plan.files[name] = devcontainer.render_devcontainer(hardened, header=header)
        plan.devcontainers[name] = notes


def _agent_changes(g: Gathered, opts: HardenOptions, plan: Plan) -> None:
    configs = [c for c in g.agent.get("agent_configs") or [] if isinstance(c, dict)]
    mcp_files = [
        m
        for m in g.agent.get("mcp_servers") or []
        if isinstance(m, dict) and m.get("declared_in") in (".mcp.json", "mcp.json", ".claude.json")
    ]
    plan.sdk = plan_configs(configs, workdir=opts.workdir, strict_mcp=bool(mcp_files))
    plan.files.update(plan.sdk.files)
    if g.settings:
        text, _kept = hardened_settings(g.settings)
        plan.files[SETTINGS_FILE] = text
        for s in g.settings:
            plan.sdk.settings[s.path] = SETTINGS_FILE
    plan.files.update(frameworks.langchain_snippet(list(g.report.findings), opts.workdir))
    policies = g.agent.get("engine_policies")
    plan.engines = engines.plan_engines(
        list(g.report.findings),
        g.engine_texts,
        [p for p in policies or [] if isinstance(p, dict)] if isinstance(policies, list) else [],
        _header(g, "the hardened agent engine configuration"),
    )
    plan.files.update(plan.engines.files)


def decide(f: Finding, plan: Plan, opts: HardenOptions) -> Claim | Open:
    """Claim or Open for one finding of the inspect report."""
    engine = engines.decide_engine(f, plan.engines)
    if engine is not None:
        return engine
    run = plan.run_files
    rid = f.rule_id
    subject = str(f.evidence.get("subject", ""))
    if rid == "AG201":
        return Claim(
            f,
            run,
            f"the agent works in an empty tmpfs at {opts.workdir}; the files stay in the image "
            "until it is rebuilt without them",
        )
    if rid in ("AG203", "AG204") and any(
        (loc.note or "") == "OpenHands config.toml" for loc in f.locations
    ):
        return Open(
            f,
            "OpenHands starts its sandbox itself with these volumes; no file written here starts it",
            "Remove the entry from `[sandbox] volumes` in the config.toml.",
        )
    if rid in ("AG202", "AG204") or (rid == "AG203" and "destination" in f.evidence):
        return Claim(
            f,
            run,
            "no host folder and no socket is mounted; data the agent needs is mounted "
            f"read-only with --allow-mount, outside {opts.workdir}",
        )
    if rid == "AG203":
        return Open(f, "the socket path is part of the image", "Remove it in the Dockerfile.")
    if rid == "AG401":
        return Claim(f, run, f"runs as {opts.user} whatever the image's USER says")
    if rid == "AG402":
        where = str(f.evidence.get("set_where", ""))
        name = f.evidence.get("variable")
        if any(w in where for w in _RUNTIME_WHERE) and "Dockerfile" not in where:
            return Claim(
                f, run, f"{name} is passed through by name at run time; no value is written"
            )
        return Open(
            f,
            "the value is baked into the image (config or build history); a run configuration "
            "cannot take it out",
            f"Rebuild without it and rotate the key; the hardened config passes {name} at run "
            "time by name.",
        )
    if rid in ("AG403", "AG404", "AG405", "AG406", "AG407") and subject.startswith(
        _RUNTIME_SUBJECTS
    ):
        return Claim(f, run, _HOW_RUNTIME[rid].format(opts=opts))
    if rid in ("AG210", "AG211", "AG301", "AG302", "AG303", "AG304", "AG305"):
        return _decide_agent(f, plan)
    if rid == "AG101":
        key = deps_changes.cap_key(str(f.evidence.get("child")), f.evidence.get("locked_marker"))
        alt = plan.deps.alternatives.get(key)
        line = plan.deps.capped.get(key, f.fix.snippet)
        if f.evidence.get("upstream_bound"):
            how = f"capped as later releases of {f.evidence.get('parent')} declare: {line}"
            if alt:
                how += f" (or the locked major, {alt}, once tested against it: a choice)"
        elif f.evidence.get("first_fix_basis") == "upload-times" and not deps_changes.keeps_locked(
            f
        ):
            how = f"capped at the newest major {f.evidence.get('parent')} was built against: {line}"
            if alt:
                how += f" (or the locked major, {alt}, once tested against it: a choice)"
        else:
            how = f"capped at the locked major: {line}"
            if alt:
                how += f" (or {alt} if your code was written against that major: a choice)"
        return Claim(f, (deps_changes.CONSTRAINTS_FILE,), how)
    if rid == "AG121":
        pkg = str(f.evidence.get("package", ""))
        line = plan.deps.capped.get(pkg)
        if line:
            return Claim(f, (deps_changes.CONSTRAINTS_FILE,), f"capped: {line}")
        return Open(f, "no lock names its version", "Run `agentguard lock`, then harden again.")
    loc = f.locations[0] if f.locations else None
    replaced = plan.installs.get((loc.path or "", loc.line or 0)) if loc is not None else None
    if rid == "AG120" and replaced is not None:
        return Claim(f, (replaced[0],), f"the line is replaced by the lock's: `{replaced[1]}`")
    if rid == "AG120":
        return Open(
            f,
            "the install line is in your Dockerfile or start command",
            f"Replace it with the lines in {deps_changes.INSTALL_FILE}.",
        )
    return Open(f, *_OPEN.get(rid, _OPEN_DEFAULT))


_HOW_RUNTIME = {
    "AG403": "not privileged",
    "AG404": "--cap-drop ALL and no capability added",
    "AG405": "own PID and IPC namespaces; network {opts.network}",
    "AG406": "--read-only, with tmpfs only for {opts.workdir} and /tmp",
    "AG407": "--security-opt no-new-privileges:true",
}
_OPEN_DEFAULT = ("harden does not change this", "See the finding's fix.")
_OPEN: dict[str, tuple[str, str]] = {
    "AG110": ("the installed packages are part of the image", "Rebuild the image from the lock."),
    "AG111": ("the installed packages are part of the image", "Rebuild the image from the lock."),
    "AG112": ("the installed packages are part of the image", "Rebuild the image from the lock."),
    "AG113": ("an inventory, not a hazard", "Nothing to change."),
    "AG212": (
        "the build context is part of the build",
        "Add a .dockerignore that keeps docs, .env and keys out, or COPY only what the agent runs.",
    ),
    "AG310": (
        "which version to pin is the version you reviewed",
        "Pin each server: `agentguard lock --write-launch` pins npm and PyPI launches to the "
        "versions it locks; an image by `image@sha256:<digest>`.",
    ),
    "AG320": (
        "whether a fallback is wanted depends on the agent",
        "Log which model answered and why the primary failed, or remove the fallback.",
    ),
}


def _decide_agent(f: Finding, plan: Plan) -> Claim | Open:
    if frameworks.grant_finding(f):
        if frameworks.is_root_dir_fix(f):
            return Claim(f, (frameworks.LANGCHAIN_FILE,), "root_dir is the empty working directory")
        return Open(
            f,
            "what to do with this tool depends on what the agent must do",
            "Pick one of the choices.",
            frameworks.choices_for(f),
        )
    loc = f.locations[0].path if f.locations else None
    if loc in plan.sdk.settings and f.rule_id in ("AG304", "AG305"):
        return Claim(
            f,
            (plan.sdk.settings[loc],),
            "every built-in tool not allowed is denied; bypass mode off and disabled",
        )
    change = config_for(plan.sdk.configs, f)
    if change is None:
        return Open(
            f, "no agent configuration to rewrite was found for it", "See the finding's fix."
        )
    if f.rule_id in change.fixes:
        return Claim(f, (change.snippet_file,), _HOW_AGENT[f.rule_id])
    if f.rule_id == "AG210":
        return Open(
            f,
            "a command line works in the directory it is started from",
            f"Start it from the empty working directory (the snippet does `cd`): {change.snippet_file}.",
        )
    return Open(
        f,
        f"the author declared {', '.join(change.kept)}; whether the agent needs them depends on "
        "its task",
        f"Pick one of the choices in {change.snippet_file}.",
        change.choices[1:],
    )


_HOW_AGENT = {
    "AG210": "cwd is the empty working directory",
    "AG211": "setting_sources=[]: no project settings or CLAUDE.md are loaded",
    "AG301": "shell tools removed: not in tools, listed in disallowed_tools",
    "AG302": "file tools removed: not in tools, listed in disallowed_tools",
    "AG303": "web tools removed: not in tools, listed in disallowed_tools",
    "AG304": "tools lists what exists; every other built-in is disallowed",
    "AG305": "default permission mode; no bypass",
}


def _replaced_installs(g: Gathered, plan: Plan) -> dict[tuple[str, int], tuple[str, str]]:
    out: dict[tuple[str, int], tuple[str, str]] = {}
    for svc in plan.spec.services:
        run = plan.code.get(svc.name)
        deps = svc.code.deps if svc.code is not None else None
        if run is None or deps is None or deps.dockerfile is None or g.root is None:
            continue
        rel = os.path.relpath(deps.dockerfile, os.path.realpath(g.root))
        for first, last in deps.replaces:
            out.update({(rel, no): (run.dockerfile, deps.command) for no in range(first, last + 1)})
    return out


def make_plan(g: Gathered, opts: HardenOptions) -> Plan:
    services: Sequence[ServiceSpec] = g.services or (
        ServiceSpec(
            name="agent",
            image=None,
            origin="no image, container, compose file or Dockerfile was found",
            notes=(f"set {IMAGE_VAR} to the agent's image",),
        ),
    )
    # a value given to a secret-named flag or variable is never copied into the files
    spec = hardened_spec(opts, tuple(redact.scrub(s) for s in services))
    plan = Plan(spec=spec)
    _write_run_config(g, spec, plan, opts)
    _devcontainers(g, spec, plan, opts)
    _agent_changes(g, opts, plan)
    plan.deps = deps_changes.plan_deps(g.graph, g.config.deps, list(g.report.findings))
    plan.installs = _replaced_installs(g, plan)
    plan.files.update(plan.deps.files)
    for f in [*g.report.findings, *plan.deps.spans]:
        decision = decide(f, plan, opts)
        (plan.claims if isinstance(decision, Claim) else plan.opens).append(decision)  # type: ignore[arg-type]
    return plan

"""The capability map's per-agent parts: model and fallbacks, reach, secrets and hazards.
Facts in, records out; no I/O, no gatherer (the tools and MCP servers are
:mod:`.capability_tools`')."""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentguard.engine.capability_k8s import k8s_network, k8s_secrets
from agentguard.engine.capability_runs import Placement, of_place
from agentguard.facts.agents import AgentConfig, FallbackSite, ProjectFacts
from agentguard.facts.capabilities import (
    BYPASS,
    HOST_FOLDER,
    LIVE,
    PROJECT,
    REMOVED,
    UNKNOWN,
    AgentCapability,
    Evidence,
    Fallback,
    Hazard,
    ModelChoice,
    Reach,
    Runner,
    SecretRef,
    ToolAccess,
)
from agentguard.facts.host_paths import DOCKER_SOCKET
from agentguard.facts.values import alternatives, describe
from agentguard.facts.workflows import ActionStep
from agentguard.findings import Confidence
from agentguard.redact import is_secret_name


def _fallback(site: FallbackSite) -> Fallback:
    return Fallback(
        site.kind,
        site.models,
        site.witnessed,
        (Evidence(site.path, site.line, site.detail),),
        Confidence.HIGH if site.certain else Confidence.LOW,
        detail=site.detail,
    )


def no_model(ev: Evidence) -> ModelChoice:
    return ModelChoice((), UNKNOWN, (ev,))


def fallback_model(sites: Sequence[FallbackSite], ev: Evidence) -> ModelChoice:
    return ModelChoice((), UNKNOWN, (ev,), tuple(_fallback(s) for s in sites))


def model_of(cfg: AgentConfig, facts: ProjectFacts) -> ModelChoice:
    """The model asked for, and the fallbacks of the configuration and of its file."""
    opt = cfg.option("model")
    fallbacks: list[Fallback] = []
    fb = cfg.option("fallback_model")
    if fb is not None:
        models = tuple(a for a in alternatives(fb.value) if isinstance(a, str))
        fallbacks.append(
            Fallback(
                "fallback_model",
                models,
                False,
                (Evidence(cfg.path, fb.line, f"fallback_model = {describe(fb.value)}"),),
                Confidence.HIGH,
                detail="the engine switches models and does not tell the caller",
            )
        )
    sites = [s for s in facts.fallbacks if s.path == cfg.path]
    fallbacks += [_fallback(s) for s in sites]
    if opt is None:
        return ModelChoice(
            (), "default", (Evidence(cfg.path, cfg.line, "`model` not set"),), tuple(fallbacks)
        )
    literal = tuple(a for a in alternatives(opt.value) if isinstance(a, str))
    ev: tuple[Evidence, ...] = (Evidence(cfg.path, opt.line, f"model = {describe(opt.value)}"),)
    if len(literal) == len(alternatives(opt.value)):
        return ModelChoice(literal, "set", ev, tuple(fallbacks))
    # the primary path's calls name the model (the try body of a fallback site)
    primary = tuple(dict.fromkeys(b.model for s in sites for b in s.primary if b.model))
    if primary:
        ev += tuple(
            Evidence(cfg.path, b.line, f"{b.callee}(model={b.model!r})")
            for s in sites
            for b in s.primary
            if b.model
        )
        return ModelChoice(primary, "set", ev, tuple(fallbacks))
    return ModelChoice((), UNKNOWN, ev, tuple(fallbacks))


def reach(places: Sequence[Placement], tools: Sequence[ToolAccess],
          runners: Sequence[Runner]) -> Reach:  # fmt: skip
    web = next((t.state for t in tools if t.category == "web"), UNKNOWN)
    modes = [m for p in places if (m := of_place("network", p, _network)) is not None]
    if len(modes) == len(places) and modes and len({m for m, _ in modes}) == 1:
        return Reach(modes[0][0], tuple(e for _, e in modes), Confidence.HIGH, web)
    return Reach(None, tuple(e for _, e in modes), Confidence.LOW, web)


def _network(p: Placement) -> tuple[str, Evidence] | None:
    if p.k8s is not None:
        return k8s_network(p.k8s)
    if p.service is None or p.compose_path is None:
        return None
    mode = p.service.network_mode
    where = p.service.line_of("network_mode")
    note = f"network_mode: {mode or 'not set (the default network)'}"
    return mode or "default", Evidence(p.compose_path, where, note)


def _secrets(p: Placement) -> tuple[SecretRef, ...]:
    if p.k8s is not None:
        return k8s_secrets(p.k8s)
    if p.service is None or p.compose_path is None:
        return ()
    via = f"compose service {p.service.name} environment"
    return tuple(
        SecretRef(env.name, via, (Evidence(p.compose_path, env.line, env.name),))
        for env in p.service.environment
        if is_secret_name(env.name)
    )


def secrets_of(places: Sequence[Placement]) -> tuple[SecretRef, ...]:
    out: dict[str, SecretRef] = {}
    for p in places:
        for ref in of_place("secrets", p, _secrets):
            out.setdefault(ref.name, ref)
    return tuple(out.values())


_SECRET_REF = re.compile(r"secrets\.([A-Za-z_][A-Za-z0-9_]*)")


def step_secrets(step: ActionStep) -> tuple[SecretRef, ...]:
    out: dict[str, SecretRef] = {}
    for name, value, line in step.inputs:
        for m in _SECRET_REF.finditer(str(value)):
            out.setdefault(
                m.group(1),
                SecretRef(
                    m.group(1),
                    f"input {name}",
                    (Evidence(step.path, line, f"{name}: secrets.{m.group(1)}"),),
                ),
            )
    return tuple(out.values())


def hazards(agent: AgentCapability) -> tuple[Hazard, ...]:
    """The capabilities drawn as hazards, each with the rule that judges it."""
    out: list[Hazard] = []
    rule = {"shell": "AG301", "file": "AG302", "web": "AG303"}
    for t in agent.tools:
        if t.approval == BYPASS and t.state != REMOVED:
            out.append(
                Hazard("AG305", f"{t.category} tools run without asking (bypass)", t.evidence[-1])
            )
        elif t.state == LIVE and t.category == "shell":
            out.append(Hazard(rule[t.category], "can run shell commands", t.evidence[0]))
    wd = agent.workdir
    if wd.holds_kind == HOST_FOLDER and wd.evidence:
        out.append(Hazard("AG202", f"works in host folder {wd.host_source}", wd.evidence[-1]))
    elif wd.holds_kind == PROJECT and wd.evidence:
        out.append(Hazard("AG210", "works in the project folder", wd.evidence[0]))
    for m in agent.mcp:
        if m.pinned is False:
            out.append(Hazard("AG310", f"MCP server {m.name} launched unpinned", m.evidence[0]))
    for f in agent.model.fallbacks:
        if f.witnessed is False:
            out.append(Hazard("AG320", "falls back to another model silently", f.evidence[0]))
    for p in agent.paths:
        if p.sensitive:
            out.append(
                Hazard(
                    "AG203" if p.sensitive.startswith(DOCKER_SOCKET) else "AG204",
                    f"mounts {p.sensitive}",
                    p.evidence[0],
                )
            )
    for r in agent.runners:
        if r.open_triggers:
            out.append(
                Hazard(
                    "AG331", f"anyone can start it ({', '.join(r.open_triggers)})", r.evidence[0]
                )
            )
    return tuple(out)

"""AG501, continued: the agent itself in the hardened configuration, and its egress.

Pure verdicts over what ``--verify`` observed (:mod:`agentguard.facts.probe`): the
agent started with its own command (still running after the settle time, exited 0, or the
user's ``--verify-command`` passed), or it did not, with the cause from its last lines;
with ``--network none``, a connection from inside to an address of the engine's host
failed for IPv4 and IPv6; and before anything runs, the run line itself asks for nothing
the plan did not make (probe ``plan``).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from agentguard.facts.probe import AgentRun, Expected, Observation
from agentguard.findings import Finding, Fix, JSONValue, Location
from agentguard.rules.runtime import HardenedConfigDoesNotHold, Verdict

_START_FIX = (
    "Make the hardened configuration start the agent: the code it runs must be outside the "
    "empty working directory (the hardened Dockerfile or `--code-mount` carries it), its "
    "command must name it (absolute paths, `PYTHONPATH` for `python -m`), and nothing it "
    "needs may write to the read-only root (use /tmp or the working directory)."
)
_EGRESS_FIX = (
    "Run with `--network none`; an agent that needs the network gets a named network whose "
    "egress proxy or firewall allows only what it needs (`--network NAME`)."
)


_PLAN_FIX = (
    "Run the configuration `agentguard harden` writes, unchanged: data the agent needs goes "
    "in with `--allow-mount HOST:PATH` (read-only, outside the working directory), a network "
    "with `--network NAME`, limits with `--memory`/`--pids`; regenerate the script instead "
    "of adding flags to it."
)


def check_plan(script: str, image: str, asks: Sequence[str]) -> Verdict:
    """The run (and build) line to verify, against the plan: held when it asks for nothing
    else; violated (AG501, nothing is run) when it does."""
    if not asks:
        return Verdict("plan", "held", "the run line asks for nothing the plan did not make")
    detail = "the run line asks for what the plan did not make, so nothing was run: " + "; ".join(
        asks
    )
    finding = HardenedConfigDoesNotHold.finding(
        f"The hardened configuration does not hold at run time: probe plan: {detail}.",
        locations=[Location(path=script, note="probe plan")],
        fix=Fix(_PLAN_FIX),
        evidence={"probe": "plan", "image": image, "asks": list(asks)},
    )
    return Verdict("plan", "violated", detail, finding)


def _cause(run: AgentRun) -> str:
    if run.error:
        return run.error
    tail = [line for line in run.tail if line.strip()]
    return tail[-1] if tail else "it printed nothing"


def _start_finding(run: AgentRun, detail: str) -> Finding:
    evidence: dict[str, JSONValue] = {
        "probe": "agent-start",
        "image": run.image,
        "state": run.state,
        "exit_code": run.exit_code,
        "output": list(run.tail[-10:]),
    }
    if run.command is not None:
        evidence["verify_command"] = run.command
        evidence["verify_command_exit"] = run.command_exit
    return HardenedConfigDoesNotHold.finding(
        f"The hardened configuration does not hold at run time: probe agent-start: {detail}.",
        locations=[Location(path=run.script, note="probe agent-start")],
        fix=Fix(_START_FIX + f" Then run `agentguard harden --verify` on {run.script} again."),
        evidence=evidence,
    )


def check_agent_run(run: AgentRun) -> Verdict:
    """Did the agent start? held, violated (AG501 with the cause) or unknown."""
    if run.state in ("not-built", "not-created", "not-started"):
        what = {
            "not-built": "the hardened image does not build",
            "not-created": "the engine cannot create the container",
            "not-started": "the container does not start",
        }[run.state]
        detail = f"the agent cannot start: {what}: {_cause(run)}"
        return Verdict("agent-start", "violated", detail, _start_finding(run, detail))
    if run.state == "exited" and run.exit_code == 0:
        return Verdict("agent-start", "held", "the agent ran and exited 0")
    if run.state == "exited":
        detail = f"the agent cannot start: it exited {run.exit_code}: {_cause(run)}"
        return Verdict("agent-start", "violated", detail, _start_finding(run, detail))
    if run.state != "running":
        return Verdict("agent-start", "unknown", f"not verified: state {run.state}")
    settled = f"the agent is still running after {run.settle:g}s"
    if run.command is None:
        return Verdict("agent-start", "held", settled)
    if run.command_exit == 0:
        return Verdict("agent-start", "held", f"{settled} and `{run.command}` exited 0")
    out = [line for line in run.command_output if line.strip()]
    ended = f"exited {run.command_exit}" if run.command_exit is not None else "did not finish"
    detail = f"{settled}, but `{run.command}` {ended}" + (f": {out[-1]}" if out else "")
    return Verdict("agent-start", "violated", detail, _start_finding(run, detail))


def check_egress(obs: Observation, e: Expected) -> Verdict | None:
    """With ``--network none``: every connection to the engine's host failed (None: not asked)."""
    if e.network != "none" or not e.egress:
        return None
    inside = obs.inside
    if inside is None or inside.egress is None:
        why = obs.why_not_inside or "the probe printed nothing for it"
        return Verdict("egress", "unknown", f"not verified: {why}")
    seen = dict(inside.egress)
    missing = [a for a, _p, _w in e.egress if seen.get(a) not in ("open", "blocked")]
    if missing:
        return Verdict("egress", "unknown", f"not verified: no answer for {', '.join(missing)}")
    opened = [f"{a}:{p} ({w})" for a, p, w in e.egress if seen[a] == "open"]
    if opened:
        detail = "network none, yet a connection from inside reached " + ", ".join(opened)
        finding = HardenedConfigDoesNotHold.finding(
            f"The hardened configuration does not hold at run time: probe egress: {detail}.",
            locations=[
                Location(path=obs.script, note=f"probe egress, container {obs.container[:12]}")
            ],
            fix=Fix(_EGRESS_FIX + f" Regenerate {posixpath.basename(obs.script)}."),
            evidence={
                "probe": "egress",
                "image": obs.image,
                "container": obs.container[:12],
                "reached": opened,
            },
        )
        return Verdict("egress", "violated", detail, finding)
    tried = ", ".join(f"{a}:{p} ({w})" for a, p, w in e.egress)
    return Verdict("egress", "held", f"no connection from inside to {tried}")

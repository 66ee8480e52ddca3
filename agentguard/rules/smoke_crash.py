"""What a smoke probe's crash says (the message, fix and evidence of AG602 and AG603; facts
only, no I/O): the exception and where it was raised and, when the crash is in a package
the lock moved across a major, that crossing, whether the caller's requirement admits the
version installed, and the fix that follows (the rules themselves: :mod:`.smoke`)."""

from __future__ import annotations

import re

from agentguard import escape
from agentguard.facts.smoke import Crash, Crossing, Probe, SmokeFacts
from agentguard.findings import Fix, JSONValue


def _canon(name: str | None) -> str:
    return re.sub(r"[-_.]+", "-", name or "").lower()


def _crossing(c: Crash, facts: SmokeFacts, p: Probe) -> tuple[Crossing, str | None] | None:
    """The AG101 crossing that explains the crash (the package whose object lacks the
    attribute, or whose frame raised, is the child of a range across majors), and the
    version of it installed: the crossing whose locked pin is that version first."""
    candidates = (
        (c.owner_package, c.owner_version),
        (c.frame_package, c.frame_version),
        (p.package, p.version),  # the probed package itself moved (its own API went)
    )
    for name, seen in candidates:
        if not name:
            continue
        mine = [x for x in facts.crossings if _canon(x.package) == _canon(name)]
        installed = facts.version_of(name) or seen
        exact = [x for x in mine if installed in x.locked]
        if exact or mine:
            return (exact or mine)[0], installed
    return None


def _admits(snippet: str | None, package: str, version: str | None) -> bool | None:
    """Whether AG101's snippet (``name>=a,<b ; marker``) admits ``version``; None: unknown."""
    from packaging.requirements import InvalidRequirement, Requirement

    if not snippet or not version:
        return None
    try:
        req = Requirement(snippet)
    except InvalidRequirement:
        return None
    if _canon(req.name) != _canon(package):
        return None
    return req.specifier.contains(version, prereleases=True)


def _crossing_fix(cross: Crossing, installed: str | None, caller: str | None) -> Fix:
    """A fix that leaves the major that crashed: AG101's when its snippet does (without
    its other choice), else a cap below the installed major."""
    again = " Then re-lock and run `--smoke` again."
    if _admits(cross.snippet, cross.package, installed) is False:
        text = cross.fix.split(" Or `")[0].rstrip()
        return Fix(
            text + ("" if text.endswith(".") else ".") + again,
            snippet=escape.snippet(cross.snippet) if cross.snippet else None,
        )
    major = next(
        (
            m
            for m in reversed(cross.majors)
            if installed and (installed == m or installed.startswith(m + "."))
        ),
        None,
    )
    if major is None:
        return Fix(
            f"Cap {cross.package} at the major the code was written against (the lock admits "
            f"{', '.join(cross.majors)}), or port the code to the locked one." + again
        )
    snippet = f"{cross.package}<{major}"
    other = (
        f"or move to a release of {caller} that works with {cross.package} {major}"
        if caller and _canon(caller) != _canon(cross.package)
        else f"or port the code to {cross.package} {major}"
    )
    who = caller if caller and _canon(caller) != _canon(cross.package) else "the code"
    return Fix(
        f"Cap {cross.package} below the major that fails here: add `{snippet}` to your "
        f"requirements ({who} was written against an earlier major), {other}." + again,
        snippet=escape.snippet(snippet),
    )


def crash_message(p: Probe, facts: SmokeFacts) -> tuple[str, Fix, dict[str, JSONValue]]:
    c = p.crash
    what = {
        "import": f"importing `{p.subject}`",
        "sdk-server": "`create_sdk_mcp_server()`",
        "fastmcp": "building a FastMCP server",
        "mcp-server": "building an `mcp` Server",
    }.get(p.kind, p.kind)
    stage = " (listing its tools)" if p.stage == "list-tools" else ""
    pkg = f"{p.package} {p.version}" if p.package and p.version else (p.package or p.subject)
    evidence: dict[str, JSONValue] = {
        "probe": p.kind,
        "subject": p.subject,
        "stage": p.stage,
        "package": p.package,
        "version": p.version,
        "installed_into": facts.install.interpreter if facts.install else None,
    }
    if c is None:
        msg = f"In the locked environment, {what}{stage} of {pkg} fails: {p.detail}."
        fix = Fix(
            "Run the same import in the environment of the lock to see the failure, fix the "
            "pin it points to, re-lock and run `--smoke` again."
        )
        evidence["output"] = list(p.output[-8:])
        return msg, fix, evidence
    evidence["crash"] = c.to_json()
    at = f" at {c.frame}" if c.frame else ""
    src = f" (`{c.frame_source}`)" if c.frame_source else ""
    msg = f"In the locked environment, {what}{stage} of {pkg} raises {c.exc_type}: {c.message}{at}{src}."
    found = _crossing(c, facts, p)
    if c.attribute and c.owner and c.owner_package:
        owner = f"{c.owner_package} {c.owner_version}" if c.owner_version else c.owner_package
        verb = "removed" if found is not None else "has no"
        if c.exc_type == "AttributeError":
            caller = (
                f"{c.frame_package} {c.frame_version}"
                if c.frame_package and c.frame_version
                else pkg
            )
            cls = c.owner.rsplit(".", 1)[-1]
            msg += f" {owner} {verb} `{cls}.{c.attribute}`, which {caller} calls."
        else:  # `from module import name`: the owner is the module
            caller = (
                f"{c.frame_package} {c.frame_version}"
                if c.frame_package and c.frame_version
                else "the project's code"
            )
            msg += f" {owner} {verb} `{c.owner}.{c.attribute}`, which {caller} imports."
    if found is not None:
        cross, installed = found
        through = (
            "the project's own range, which admits"
            if cross.parent == "project"
            else f"a range of {cross.parent}"
            + (f" {cross.parent_version}" if cross.parent_version else "")
            + " that admits"
        )
        msg += (
            f" The lock takes {cross.package} {installed or ', '.join(cross.locked)} through "
            f"{through} majors {', '.join(cross.majors)} (AG101)."
        )
        evidence["crossing"] = {
            "package": cross.package,
            "locked": list(cross.locked),
            "parent": cross.parent,
        }
        return msg, _crossing_fix(cross, installed, c.frame_package), evidence
    blame = c.owner_package or c.frame_package or p.package or p.subject
    if blame == p.package and not c.owner_package:
        fix = Fix(
            f"Pin {blame} to the release your code was written against (the version of your last "
            f"working deploy), or port the code to {pkg}; re-lock and run `--smoke` again."
        )
    else:
        fix = Fix(
            f"Pin {blame} to the release {pkg} was built and tested against (the range its "
            "later releases declare, or the version of your last working deploy), re-lock and "
            "run `--smoke` again."
        )
    return msg, fix, evidence

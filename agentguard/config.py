"""Policy and configuration: shipped policies/*.toml and a project's own configuration.

A project configures agentguard in ``[tool.agentguard]`` of its ``pyproject.toml`` or at
the top level of an ``agentguard.toml``. A shipped policy (``agentguard/policies/*.toml``)
is a configuration of the same shape. Layers, lowest first: the policy chain (each
policy may name the one it builds on with ``policy = "..."``), then the project file.
Tables merge key by key; any other value (a list, a string) replaces the lower one.

Both ``pyproject.toml`` (with a ``[tool.agentguard]`` table) and ``agentguard.toml`` in
one folder: identical content is fine (one source of truth, read twice); different
content is ambiguous and an error naming both files. Unknown keys are errors naming
the file and the key (exit 2).
"""

from __future__ import annotations

import dataclasses
import os
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentguard import safeio
from agentguard.config_validate import AGE as _AGE
from agentguard.config_validate import DEPS_KEYS as DEPS_KEYS
from agentguard.config_validate import GROWTH_KINDS as GROWTH_KINDS
from agentguard.config_validate import TOP_KEYS as TOP_KEYS
from agentguard.config_validate import Layer as _Layer
from agentguard.config_validate import parse_deps, severity_of, validate_layer
from agentguard.errors import ConfigError as ConfigError
from agentguard.facts.names import canonical_name as canonical_name
from agentguard.rules.deps_policy import DepsPolicy as DepsPolicy
from agentguard.safeio import MAX_CONFIG_BYTES
from agentguard.severity import Severity

if TYPE_CHECKING:
    from agentguard.findings import Source

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

DEFAULT_POLICY = "default"
PROJECT_FILE = "agentguard.toml"
PYPROJECT = "pyproject.toml"

_MAX_POLICY_DEPTH = 8


@dataclass(frozen=True)
class IgnoreEntry:
    """``ignore = {AG301 = ["agents/*.py", "Dockerfile:12"]}``: one pattern of one rule."""

    rule: str  # a rule id, or "*" for every rule
    pattern: str  # a path glob (``*``, ``?``, ``**``) as written, without the line
    line: int | None  # only this line, when written as ``path:line``
    origin: str  # the file (and key) that declared it, for the suppression reason

    @property
    def text(self) -> str:
        return f"{self.pattern}:{self.line}" if self.line is not None else self.pattern


@dataclass(frozen=True)
class Config:
    """The effective configuration of one run (policy chain + project file), validated."""

    files: tuple[str, ...]  # every file that contributed, lowest layer first
    policy: str
    fail_on: Severity | None  # None: not configured (the command's default applies)
    disabled: frozenset[str]
    severity: Mapping[str, Severity]
    ignores: tuple[IgnoreEntry, ...]
    rule_options: Mapping[str, Mapping[str, Any]]
    deps: DepsPolicy
    notes: tuple[str, ...] = field(default=())
    build: bool | None = None  # `build = false`: lock never builds an sdist (--only-binary)
    min_release_age: str | None = None  # e.g. "7d": lock leaves out younger uploads
    # paths (globs) the project scan does not read: listed as skipped by configuration
    exclude: tuple[str, ...] = ()
    # context name -> globs that put a path in that context (before the built-in names)
    contexts: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    # context name -> the highest grade of a finding there (test code: low by default)
    context_severity: Mapping[str, Severity] = field(default_factory=dict)
    # `smoke = true`: lock and check run the smoke run. Honoured only from a file given
    # with --config (the CI's): the scanned project's own file is the pull request's, and
    # the smoke run executes the project's packages (see docs/smoke.md)
    smoke: bool | None = None
    smoke_trusted: bool = False  # it came from --config
    # where the configuration came from: "project" (the scanned folder's own file: on a
    # pull request, the PR's), "file" (--config FILE: the caller's), "defaults"
    origin: str = "defaults"
    # the scanned folder's configuration files that were there and not read, with why
    ignored_files: tuple[str, ...] = ()
    inline_ignores: bool = True  # False: --no-inline-ignores (comments never suppress)
    # `[delta] fail-on-growth` (check --base): honoured only from --config (growth_trusted)
    fail_on_growth: tuple[str, ...] = ()
    growth_trusted: bool = False

    def options(self, rule_id: str) -> Mapping[str, Any]:
        return self.rule_options.get(rule_id, {})


def load_policy_data(name: str = DEFAULT_POLICY) -> dict[str, Any]:
    return _read_policy(name, "(built-in default)")[0]


# The shipped policies, read where the package lies (importlib.resources and its readers
# cost 6-8 ms of every run's start, before `lock` can start its resolver); through the
# import system only when the package is not a folder (installed in a zip).
_POLICIES = Path(__file__).parent / "policies"


def shipped_policies() -> list[str]:
    if _POLICIES.is_dir():
        names = [p.name for p in _POLICIES.iterdir()]
    else:
        from importlib import resources

        names = [f.name for f in resources.files("agentguard.policies").iterdir()]
    return sorted(n[: -len(".toml")] for n in names if n.endswith(".toml"))


def _policy_text(name: str) -> str:
    if _POLICIES.is_dir():
        return (_POLICIES / f"{name}.toml").read_text("utf-8")
    from importlib import resources

    return resources.files("agentguard.policies").joinpath(f"{name}.toml").read_text("utf-8")


def _read_policy(name: str, named_in: str) -> tuple[dict[str, Any], str]:
    if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", name) or name not in shipped_policies():
        raise ConfigError(
            f"{named_in}: unknown policy {name!r} (shipped: {', '.join(shipped_policies())})"
        )
    label = f"policy:{name}"
    text = _policy_text(name)
    return _parse_toml(text, label), label


def _parse_toml(text: str, label: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{label}: not valid TOML: {exc}") from None
    except RecursionError:
        raise ConfigError(f"{label}: nested too deeply to read") from None
    except (ValueError, UnicodeError, OverflowError, MemoryError) as exc:  # a 4301-digit int
        raise ConfigError(f"{label}: not valid TOML: {str(exc).splitlines()[0][:200]}") from None


def deps_policy(data: dict[str, Any] | None = None) -> DepsPolicy:
    """The ``[deps]`` table of ``data`` (default: the shipped default policy)."""
    return parse_deps((data or load_policy_data()).get("deps", {}))


# -- reading the project's file -------------------------------------------------------


def _read_file(path: Path) -> dict[str, Any]:
    try:
        text = safeio.read_text(path, cap=MAX_CONFIG_BYTES)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    return _parse_toml(text, str(path))


def _project_layer(path: Path) -> _Layer | None:
    data = _read_file(path)
    if path.name != PYPROJECT:
        return _Layer(str(path), "", data)
    tool = data.get("tool", {})
    section = tool.get("agentguard") if isinstance(tool, dict) else None
    if section is None:
        return None
    if not isinstance(section, dict):
        raise ConfigError(f"{path}: tool.agentguard must be a table")
    return _Layer(str(path), "tool.agentguard.", section)


def find_project_layer(project: Path) -> tuple[_Layer | None, list[str]]:
    """The project's configuration in ``project`` (not its parents), and notes."""
    own = project / PROJECT_FILE
    pyproject = project / PYPROJECT
    from_own = _project_layer(own) if own.is_file() else None
    from_py = _project_layer(pyproject) if pyproject.is_file() else None
    if from_own and from_py:
        if from_own.data != from_py.data:
            raise ConfigError(
                f"two configurations: {own} and [tool.agentguard] in {pyproject} differ; "
                "keep one of them (agentguard does not pick one for you)"
            )
        return from_own, [f"config: {own} and {pyproject} hold the same configuration"]
    return from_own or from_py, []


def project_files(project: Path) -> list[Path]:
    """The configuration files the scanned folder holds (read or not)."""
    return [p for p in (project / PROJECT_FILE, project / PYPROJECT) if p.is_file()]


def load_config(
    project: Path | None = None,
    *,
    config_file: Path | None = None,
    project_config: bool = True,
    inline_ignores: bool = True,
) -> Config:
    """The effective configuration for ``project``.

    ``config_file`` (``--config``): only that file; nothing in ``project`` is read.
    ``project_config=False`` (``--no-project-config``): the scanned folder's
    ``agentguard.toml`` and ``[tool.agentguard]`` are not read (CI trusts only its own
    configuration: in a pull request's checkout they are the pull request's). Either way
    the folder's files that were not read are named in :attr:`Config.ignored_files`.
    ``inline_ignores=False`` (``--no-inline-ignores``): no comment suppresses a finding."""
    notes: list[str] = []
    ignored: list[str] = []
    origin = "defaults"
    if config_file is not None:
        if not config_file.is_file():
            raise ConfigError(f"{config_file}: no such configuration file")
        layer = _project_layer(config_file)
        if layer is None:
            raise ConfigError(f"{config_file}: has no [tool.agentguard] table")
        origin = "file"
        if project is not None:
            own = {os.path.realpath(config_file)}
            top = os.path.realpath(project)
            if os.path.commonpath([top, *own]) == top:
                notes.append(
                    f"config: {config_file} (--config) is inside the scanned folder: on a pull "
                    "request its content is the pull request's; keep CI's configuration out of "
                    "the checkout, or guard the file (CODEOWNERS, a required review)"
                )
            ignored = [
                f"{p} (--config {config_file} given)"
                for p in project_files(project)
                if os.path.realpath(p) not in own and _may_configure(p)
            ]
    elif project is not None and project_config:
        layer, notes = find_project_layer(project)
        origin = "project" if layer is not None else "defaults"
    else:
        layer = None
        if project is not None:
            ignored = [
                f"{p} (--no-project-config)" for p in project_files(project) if _may_configure(p)
            ]
    layers = [layer] if layer else []
    for lay in layers:
        validate_layer(lay)
    # the policy chain, from the project's `policy` (default: "default") down to its root
    chain: list[_Layer] = []
    name = str(layer.data.get("policy", DEFAULT_POLICY)) if layer else DEFAULT_POLICY
    named_in = f"{layer.label}: {layer.prefix}policy" if layer else "(built-in default)"
    while True:
        if len(chain) >= _MAX_POLICY_DEPTH or any(c.label == f"policy:{name}" for c in chain):
            raise ConfigError(f"{named_in}: policy {name!r} builds on itself (a cycle)")
        data, label = _read_policy(name, named_in)
        pol = _Layer(label, "", data)
        validate_layer(pol)
        chain.append(pol)
        if "policy" not in data:
            break
        name, named_in = str(data["policy"]), f"{label}: policy"
    stack = [*reversed(chain), *layers]
    config = _build(stack, policy=chain[0].label.split(":", 1)[1], notes=notes)
    config = dataclasses.replace(
        config, origin=origin, ignored_files=tuple(ignored), inline_ignores=inline_ignores
    )
    if config_file is not None and config.smoke is not None:
        config = dataclasses.replace(config, smoke_trusted=True)
    if config_file is not None:
        config = dataclasses.replace(config, growth_trusted=True)
    return config


def load_target_config(
    root: Path,
    *,
    config_file: Path | None = None,
    project_config: bool = True,
    inline_ignores: bool = True,
) -> tuple[Config, list[Source]]:
    """:func:`load_config` for a scanned folder: its own ``pyproject.toml`` that does not
    parse is a failed source (exit 3; the scan says what is wrong with the file), not a
    usage error; a configuration that says something wrong, or a bad ``--config``, is."""
    try:
        config = load_config(
            root,
            config_file=config_file,
            project_config=project_config,
            inline_ignores=inline_ignores,
        )
        return config, []
    except ConfigError as exc:
        text = str(exc).removeprefix(f"{root / PYPROJECT}: ")
        unreadable = text.startswith(("not valid TOML", "nested too deeply", "cannot read"))
        if config_file is not None or text == str(exc) or not unreadable:
            raise
        from agentguard.findings import Source

        failed = Source.failed(
            "config",
            str(root / PYPROJECT),
            f"the configuration could not be read: {exc}",
            error_code="config-unreadable",
            retryable=False,
        )
        return load_config(None, inline_ignores=inline_ignores), [failed]


def _may_configure(path: Path) -> bool:
    """An ``agentguard.toml``, or a ``pyproject.toml`` that names ``tool.agentguard`` (read
    as text only: a file not read for its configuration is not parsed either)."""
    if path.name != PYPROJECT:
        return True
    try:
        return "agentguard" in safeio.read_text(path, cap=MAX_CONFIG_BYTES)
    except (OSError, UnicodeDecodeError):
        return True  # (said as not read; whether it held a table is unknown)


# -- merging -----------------------------------------------------------------------


def _merge(low: dict[str, Any], high: dict[str, Any]) -> dict[str, Any]:
    out = dict(low)
    for key, value in high.items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _ignore_entries(lay: _Layer, rule: str, patterns: list[str]) -> list[IgnoreEntry]:
    out = []
    for text in patterns:
        pattern, line = text, None
        head, sep, tail = text.rpartition(":")
        if sep and tail.isdigit() and head:
            pattern, line = head, int(tail)
        out.append(IgnoreEntry(rule, pattern, line, f"{lay.label}: {lay.prefix}ignore.{rule}"))
    return out


def _build(stack: list[_Layer], *, policy: str, notes: list[str]) -> Config:
    merged: dict[str, Any] = {}
    ignores: dict[str, list[IgnoreEntry]] = {}
    for lay in stack:
        merged = _merge(merged, lay.data)
        for rule, patterns in lay.data.get("ignore", {}).items():
            ignores[rule] = _ignore_entries(lay, rule, patterns)  # a higher layer replaces
    top = stack[-1]
    fail_on = severity_of(top, "fail-on", merged["fail-on"]) if "fail-on" in merged else None
    return Config(
        files=tuple(lay.label for lay in stack),
        policy=policy,
        fail_on=fail_on,
        disabled=frozenset(merged.get("disable", [])),
        severity={r: Severity.parse(s) for r, s in merged.get("severity", {}).items()},
        ignores=tuple(e for rule in sorted(ignores) for e in ignores[rule]),
        rule_options={r: dict(o) for r, o in merged.get("rules", {}).items()},
        deps=deps_policy(merged),
        notes=tuple(notes),
        build=merged.get("build"),
        smoke=merged.get("smoke"),
        fail_on_growth=tuple(merged.get("delta", {}).get("fail-on-growth", [])),
        min_release_age=str(merged["min-release-age"]) if "min-release-age" in merged else None,
        exclude=tuple(merged.get("exclude", [])),
        contexts={c: tuple(g) for c, g in merged.get("context", {}).items()},
        context_severity={
            **_default_ceilings(),
            **{c: Severity.parse(v) for c, v in merged.get("context-severity", {}).items()},
        },
    )


def release_age_seconds(text: str) -> int:
    """``"7d"`` -> 604800; raises ValueError for anything else (see ``_AGE``)."""
    m = _AGE.match(text)
    if m is None:
        raise ValueError(f"not a duration: {text!r} (write e.g. 7d, 36h or 2w)")
    unit = (m.group(2) or "d")[0]
    return int(m.group(1)) * {"h": 3600, "d": 86400, "w": 7 * 86400}[unit]


def _default_ceilings() -> dict[str, Severity]:
    from agentguard.context import DEFAULT_CEILING

    return dict(DEFAULT_CEILING)

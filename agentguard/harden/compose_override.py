"""``docker-compose.hardened.yml``: every service of the hardened configuration.

The file is complete, to be used *instead of* the original
(``docker compose -f docker-compose.hardened.yml up``), not merged on top of it: compose
merges ``cap_add``, ``volumes``, ``devices`` and ``environment`` across files, so an
override cannot take a bind mount, a capability or a literal secret away. Each render is
checked against the Compose Specification schema (the one the inspector uses).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from agentguard.harden.code_image import BASE_ARG, CodeRun
from agentguard.harden.escape import comment
from agentguard.harden.model import HOME_DIR, HardenedSpec, ServiceSpec

FILE_NAME = "docker-compose.hardened.yml"
IMAGE_PLACEHOLDER = "${AGENT_IMAGE:?set AGENT_IMAGE to the agent's image}"


def service_body(
    spec: HardenedSpec, svc: ServiceSpec, code: CodeRun | None = None
) -> dict[str, Any]:
    body: dict[str, Any] = {}
    if svc.image is not None:
        body["image"] = svc.image
    if svc.build is not None:
        body["build"] = dict(svc.build)
    if code is not None and not code.mounts:
        # the hardened image: the project's code only, built from the Dockerfile beside this
        body["image"] = code.tag
        body["build"] = {"context": code.context, "dockerfile": code.dockerfile_from_context}
        if code.base_arg:
            body["build"]["args"] = {BASE_ARG: "${AGENT_IMAGE:?build the original image first}"}
    if svc.image is None and svc.build is None:
        body["image"] = IMAGE_PLACEHOLDER
    if svc.entrypoint is not None:
        body["entrypoint"] = _plain(svc.entrypoint)
    if svc.command is not None:
        body["command"] = _plain(svc.command)
    body["user"] = spec.user
    body["read_only"] = True
    body["working_dir"] = spec.workdir
    body["tmpfs"] = [f"{t.path}:{t.options()}" for t in spec.tmpfs]
    body["cap_drop"] = ["ALL"]
    body["security_opt"] = ["no-new-privileges:true"]
    if spec.network == "none":
        body["network_mode"] = "none"
    else:
        body["networks"] = [spec.network]
    body["mem_limit"] = spec.memory
    body["pids_limit"] = spec.pids
    # a variable passed by name is `NAME:` with no value: compose takes it from the shell
    by_file = spec.env_file is not None
    if spec.env_file is not None:
        # the by-name variables: compose reads the file (a `$` in its path is not expanded)
        body["env_file"] = [spec.env_file.replace("$", "$$")]
    body["environment"] = {
        "HOME": HOME_DIR,
        **{e.name: e.value for e in svc.env if not (by_file and e.value is None)},
    }
    volumes: list[dict[str, Any]] = [
        {"type": "bind", "source": m.host, "target": m.container, "read_only": True}
        for m in spec.allow_mounts
    ]
    volumes += [
        {"type": "bind", "source": host, "target": target, "read_only": True}
        for host, target in (code.mounts if code is not None else ())
    ]
    volumes += [
        {"type": "volume", "source": v.name, "target": v.target, "read_only": v.read_only}
        for v in svc.volumes
    ]
    if volumes:
        body["volumes"] = volumes
    for key, value in svc.passthrough.items():
        if key == "ports" and spec.network == "none":
            continue  # no network: nothing to publish
        body[key] = _plain(value)
    return body


def _plain(value: Any) -> Any:
    """Tuples and mappings as the plain lists and dicts YAML writes."""
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def compose_document(
    spec: HardenedSpec,
    top_level: dict[str, Any] | None = None,
    code: Mapping[str, CodeRun] | None = None,
) -> dict[str, Any]:
    runs = code or {}
    doc: dict[str, Any] = {
        "services": {svc.name: service_body(spec, svc, runs.get(svc.name)) for svc in spec.services}
    }
    defs = top_level or {}
    named = sorted({v.name for svc in spec.services for v in svc.volumes})
    if named:
        doc["volumes"] = {n: _plain(defs.get(f"volumes:{n}")) or {} for n in named}
    secrets = sorted(
        {
            s if isinstance(s, str) else str(s.get("source"))
            for svc in spec.services
            for s in svc.passthrough.get("secrets") or []
            if isinstance(s, (str, dict))
        }
    )
    if secrets:
        doc["secrets"] = {n: _plain(defs.get(f"secrets:{n}")) or {} for n in secrets}
    if spec.network != "none":
        doc["networks"] = {spec.network: {"external": True}}
    return doc


class _Dumper(yaml.SafeDumper):
    """Writes ``None`` as nothing: ``NAME:`` (pass through by name), not ``NAME: null``."""


_Dumper.add_representer(
    type(None), lambda dumper, _v: dumper.represent_scalar("tag:yaml.org,2002:null", "")
)


def render_compose(
    spec: HardenedSpec,
    *,
    header: list[str],
    top_level: dict[str, Any] | None = None,
    code: Mapping[str, CodeRun] | None = None,
) -> str:
    text = yaml.dump(
        compose_document(spec, top_level, code),
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )
    return "".join(f"# {comment(h)}\n" if h else "#\n" for h in header) + text


def schema_problems(text: str) -> list[str]:
    """Compose Specification violations of a rendered file (empty when it is valid)."""
    from agentguard.inspect.project.compose_facts import DocumentError, read_compose

    try:
        return list(read_compose(FILE_NAME, text).schema_errors)
    except DocumentError as exc:
        return [str(exc)]

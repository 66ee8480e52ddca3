"""The smoke run's child: runs in the scratch environment's own interpreter, never imported
by agentguard (it imports the project's locked packages, which is the point).

``python -I probe_child.py SPEC OUT``: SPEC is a JSON list of probes; for each, a
``{"start": id}`` line and then a ``{"done": id, ...}`` line are appended to OUT (flushed), so
the parent knows which probe was running when the child died or hung. Standard library
only; the syntax of Python 3.8 (the oldest interpreter a project may target).
"""

from __future__ import annotations

import asyncio
import json
import linecache
import os
import sys
import sysconfig
import traceback
from typing import Any

PROBE_TOOL = "agentguard_probe"
_SITE = tuple(
    os.path.realpath(p)
    for p in {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
)


def _dists() -> dict[str, list[str]]:
    try:
        from importlib.metadata import packages_distributions

        return {k: list(v) for k, v in packages_distributions().items()}
    except Exception:  # (Python < 3.10)
        return {}


_TOP = _dists()


def _version(dist: str | None) -> str | None:
    if not dist:
        return None
    try:
        from importlib.metadata import version

        return version(dist)
    except Exception:
        return None


_FILES: dict[str, str] = {}


def _dist_of_file(rel: str) -> str | None:
    """The distribution whose RECORD lists ``rel`` (a path below site-packages)."""
    if not _FILES:
        try:
            from importlib.metadata import distributions

            for d in distributions():
                for f in d.files or ():
                    _FILES.setdefault(str(f).replace(os.sep, "/"), d.metadata["Name"])
        except Exception:
            pass
    return _FILES.get(rel)


def _dist_of_module(module: str) -> str | None:
    found = _TOP.get(module.split(".")[0]) or []
    if len(found) == 1:
        return found[0]
    loaded = sys.modules.get(module)  # a namespace several distributions share
    rel = _in_site(getattr(loaded, "__file__", None) or "") if loaded is not None else None
    return _dist_of_file(rel) if rel else None


def _in_site(path: str) -> str | None:
    real = os.path.realpath(path)
    for site in _SITE:
        if real.startswith(site + os.sep):
            return os.path.relpath(real, site).replace(os.sep, "/")
    return None


def _crash(exc: BaseException) -> dict[str, Any]:
    out: dict[str, Any] = {"exc_type": type(exc).__name__, "message": str(exc)[:1000]}
    frame = None
    for fs in traceback.extract_tb(exc.__traceback__):
        rel = _in_site(fs.filename)
        if rel is not None:
            frame = (rel, fs.lineno, fs.filename)
    if frame is not None:
        rel, lineno, filename = frame
        out["frame"] = f"{rel}:{lineno}"
        text = (linecache.getline(filename, lineno or 0) or "").strip()
        out["frame_source"] = text.split("  #")[0].rstrip()[:200]
        top = rel.split("/")[0]
        top = top[:-3] if top.endswith(".py") else top
        dist = _dist_of_file(rel) or _dist_of_module(top)
        out["frame_package"] = dist
        out["frame_version"] = _version(dist)
    if isinstance(exc, AttributeError):
        obj = getattr(exc, "obj", None)
        name = getattr(exc, "name", None)
        if obj is not None and name:
            cls = obj if isinstance(obj, type) else type(obj)
            module = getattr(cls, "__module__", "") or ""
            out["owner"] = f"{module}.{cls.__qualname__}" if module else cls.__qualname__
            out["attribute"] = str(name)
            dist = _dist_of_module(module) if module else None
            path = getattr(sys.modules.get(module), "__file__", None) if module else None
            rel = _in_site(path) if path else None
            dist = (_dist_of_file(rel) if rel else None) or dist
            out["owner_package"] = dist
            out["owner_version"] = _version(dist)
    return out


def _import(module: str, names: list[str]) -> dict[str, Any]:
    import importlib

    mod = importlib.import_module(module)
    for name in names:
        if not hasattr(mod, name):
            importlib.import_module(f"{module}.{name}")  # `from pkg import submodule`
    return {"detail": f"imported {module}" + (f" ({', '.join(names)})" if names else "")}


async def _sdk_tools(module: str, server: Any, config: Any) -> tuple[list[str], str]:
    """The SDK's own path to an in-process server's tools (its Query's MCP router)."""
    import importlib

    try:
        query = importlib.import_module(f"{module}._internal.query")
        route = query.Query.__dict__.get("_handle_sdk_mcp_request")
    except ImportError:
        route = None
    if route is not None:
        q = query.Query(transport=None, is_streaming_mode=True, sdk_mcp_servers={"p": server})
        answer = await q._handle_sdk_mcp_request(
            "p", {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        )
        if "error" in answer:
            raise RuntimeError(f"tools/list answered an error: {answer['error']}")
        tools = [t["name"] for t in answer["result"]["tools"]]
        return tools, f"through {module}'s own MCP router (Query._handle_sdk_mcp_request)"
    return await _handler_tools(server), "through the server's tools/list handler"


async def _handler_tools(server: Any) -> list[str]:
    from mcp import types  # type: ignore[import-not-found]

    handler = server.request_handlers[types.ListToolsRequest]
    result = await handler(types.ListToolsRequest(method="tools/list"))
    return [t.name for t in result.root.tools]


def _sdk_server(module: str) -> dict[str, Any]:
    import importlib

    sdk = importlib.import_module(module)

    async def probe(args: Any) -> Any:
        return {"content": [{"type": "text", "text": "ok"}]}

    stage = "construct"
    try:
        tool = sdk.tool(PROBE_TOOL, "agentguard's smoke probe", {"x": str})(probe)
        config = sdk.create_sdk_mcp_server(name="agentguard-probe", version="0.0.0", tools=[tool])
        server = config["instance"] if isinstance(config, dict) else config
        stage = "list-tools"
        tools, how = asyncio.run(_sdk_tools(module, server, config))
    except Exception as exc:
        exc.agentguard_stage = stage  # type: ignore[attr-defined]
        raise
    return {"tools": tools, "detail": f"create_sdk_mcp_server built a server; tools listed {how}"}


def _fastmcp(module: str) -> dict[str, Any]:
    import importlib

    stage = "construct"
    try:
        server = importlib.import_module(module).FastMCP("agentguard-probe")

        def agentguard_probe(x: str) -> str:
            return x

        server.tool()(agentguard_probe)
        stage = "list-tools"
        lister = getattr(server, "list_tools", None) or server.get_tools
        listed = asyncio.run(lister())
        names = sorted(listed) if isinstance(listed, dict) else [t.name for t in listed]
    except Exception as exc:
        exc.agentguard_stage = stage  # type: ignore[attr-defined]
        raise
    return {"tools": names, "detail": f"{module}.FastMCP built a server; its list_tools answered"}


def _mcp_server(module: str) -> dict[str, Any]:
    import importlib

    stage = "construct"
    try:
        from mcp import types

        server = importlib.import_module(module).Server("agentguard-probe")

        async def list_tools() -> list[Any]:
            return [
                types.Tool(name=PROBE_TOOL, description="probe", inputSchema={"type": "object"})
            ]

        server.list_tools()(list_tools)
        stage = "list-tools"
        names = asyncio.run(_handler_tools(server))
    except Exception as exc:
        exc.agentguard_stage = stage  # type: ignore[attr-defined]
        raise
    return {
        "tools": names,
        "detail": f"{module}.Server built a server; its tools/list handler answered",
    }


def _run(probe: dict[str, Any]) -> dict[str, Any]:
    kind, module = probe["kind"], probe["module"]
    if kind == "import":
        return _import(module, list(probe.get("names", [])))
    if kind == "sdk-server":
        return _sdk_server(module)
    if kind == "fastmcp":
        return _fastmcp(module)
    if kind == "mcp-server":
        return _mcp_server(module)
    raise ValueError(f"unknown probe kind {kind!r}")


def main() -> int:
    with open(sys.argv[1], encoding="utf-8") as fh:
        probes = json.load(fh)
    with open(sys.argv[2], "a", encoding="utf-8") as out:

        def put(record: dict[str, Any]) -> None:
            out.write(json.dumps(record) + "\n")
            out.flush()

        dists = {}
        try:
            from importlib.metadata import distributions

            for d in distributions():
                name = d.metadata["Name"]
                if name:
                    dists[name] = d.version
        except Exception:
            pass
        put({"versions": sorted(dists.items())})
        for probe in probes:
            put({"start": probe["id"]})
            record: dict[str, Any] = {"done": probe["id"]}
            try:
                record.update(_run(probe), status="ok")
            except BaseException as exc:  # SystemExit and KeyboardInterrupt of a package too
                stage = getattr(
                    exc, "agentguard_stage", "import" if probe["kind"] == "import" else "construct"
                )
                record.update(status="failed", stage=stage, crash=_crash(exc))
            dist = _dist_of_module(probe["module"]) or _dist_of_module(
                probe["module"].split(".")[0]
            )
            record.update(package=dist, version=_version(dist))
            put(record)
    return 0


if __name__ == "__main__":
    sys.exit(main())

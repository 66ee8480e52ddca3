"""TypeScript/JavaScript: ``query({ options })`` of ``@anthropic-ai/claude-agent-sdk``.

Parsed with tree-sitter (the TypeScript, TSX and JavaScript grammars). Reads the option
object passed to ``query()`` -- inline, or through a ``const`` resolved in its enclosing
blocks -- and ``const x: Options = {...}`` declarations typed with the SDK's
``Options``. Values that are not literals become :class:`Unknown`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

import tree_sitter as ts
import tree_sitter_javascript as ts_javascript
import tree_sitter_typescript as ts_typescript

from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.model import (
    AgentConfig,
    McpServer,
    Option,
    Unknown,
    alternatives,
)
from agentguard.inspect.project.ts_eval import TSModule, _short, _text, typed_descendants

OPTION_NAMES = {
    "tools": "tools",
    "allowedTools": "allowed_tools",
    "disallowedTools": "disallowed_tools",
    "permissionMode": "permission_mode",
    "allowDangerouslySkipPermissions": "allow_dangerously_skip_permissions",
    "settingSources": "setting_sources",
    "cwd": "cwd",
    "additionalDirectories": "add_dirs",
    "mcpServers": "mcp_servers",
    "fallbackModel": "fallback_model",
    "sandbox": "sandbox",
    "model": "model",
    "extraArgs": "extra_args",
}

_LANGUAGES: dict[str, ts.Language] = {}


def _language(path: str) -> ts.Language:
    ext = posixpath.splitext(path)[1].lower()
    key = {".ts": "ts", ".mts": "ts", ".cts": "ts", ".tsx": "tsx", ".jsx": "tsx"}.get(ext, "js")
    if key not in _LANGUAGES:
        raw = {
            "ts": ts_typescript.language_typescript,
            "tsx": ts_typescript.language_tsx,
            "js": ts_javascript.language,
        }[key]()
        _LANGUAGES[key] = ts.Language(raw)
    return _LANGUAGES[key]


@dataclass
class TSFacts:
    configs: list[AgentConfig] = field(default_factory=list)
    mcp_servers: list[McpServer] = field(default_factory=list)
    parse_error_line: int | None = None


def _first_error_line(root: ts.Node) -> int | None:
    stack = [root]
    while stack:
        n = stack.pop()
        if n.type == "ERROR" or n.is_missing:
            return n.start_point[0] + 1
        if n.has_error:
            stack.extend(reversed(n.children))
    return 1 if root.has_error else None


def analyse_ts(path: str, data: bytes, *, origin: str = "project") -> TSFacts:
    """Extract Claude SDK configurations from one TS/JS file."""
    language = _language(path)
    tree = ts.Parser(language).parse(data)
    mod = TSModule(path, tree.root_node)
    out = TSFacts()
    if mod.engine is None:
        return out
    if tree.root_node.has_error:
        out.parse_error_line = _first_error_line(tree.root_node)
    for node in typed_descendants(tree.root_node, language, ("call_expression",)):
        if node.type == "call_expression":
            fn = node.child_by_field_name("function")
            if fn is None or mod.callee(fn) != "query":
                continue
            args = node.child_by_field_name("arguments")
            first = args.named_children[0] if args is not None and args.named_children else None
            params = mod.eval(first) if first is not None else {}
            _add_configs(mod, out, node, params, origin, label="query({ options })")
    seen = mod.resolved
    for node in typed_descendants(tree.root_node, language, ("variable_declarator",)):
        if node.type == "variable_declarator":
            ann = node.child_by_field_name("type")
            value = node.child_by_field_name("value")
            if ann is None or value is None or value.type != "object":
                continue
            type_name = _text(ann).lstrip(":").strip()
            if mod.imports.get(type_name, "").endswith(":Options") and value.start_byte not in seen:
                seen.add(value.start_byte)
                opts = mod.eval(value)
                _config(mod, out, value, opts, origin, label=f"{type_name} object", ambiguous=None)
    return out


def _add_configs(
    mod: TSModule,
    out: TSFacts,
    call: ts.Node,
    params: Any,
    origin: str,
    *,
    label: str,
) -> None:
    options: Any = params.get("options") if isinstance(params, dict) else None
    if not isinstance(params, dict):
        options = Unknown(_short(call), "query() argument not known")
    alts = alternatives(options)
    ambiguity = (
        f"line {call.start_point[0] + 1}: options depend on a branch ({len(alts)} alternatives)"
        if len(alts) > 1
        else None
    )
    for alt in alts:
        if alt is None:
            _config(
                mod,
                out,
                call,
                {},
                origin,
                label="query() without options (SDK defaults)",
                ambiguous=ambiguity,
            )
        elif isinstance(alt, dict):
            _config(mod, out, call, alt, origin, label=label, ambiguous=ambiguity)
        elif isinstance(alt, Unknown):
            # Options built where this file cannot see (a parameter, another module): every
            # option is unknown, so the rules report what may be live, with low confidence.
            _config(
                mod,
                out,
                call,
                {"**": alt},
                origin,
                label="query() with options not known statically",
                ambiguous=ambiguity,
            )


def _config(
    mod: TSModule,
    out: TSFacts,
    node: ts.Node,
    opts: dict[str, Any],
    origin: str,
    *,
    label: str,
    ambiguous: str | None,
) -> None:
    line = node.start_point[0] + 1
    options: dict[str, Option] = {}
    open_ended: str | None = None
    for key, value in opts.items():
        if key == "**":
            open_ended = f"{value.expr} ({value.reason})" if isinstance(value, Unknown) else "..."
            continue
        canon = OPTION_NAMES.get(key)
        if canon is not None:
            options[canon] = Option(value, line, key)
    out.configs.append(
        AgentConfig(
            engine=mod.engine or "claude-agent-sdk (TypeScript)",
            path=mod.path,
            line=line,
            label=label,
            options=options,
            ambiguous=ambiguous is not None,
            ambiguity=ambiguous,
            origin=origin,
            open_ended=open_ended,
        )
    )
    servers = opts.get("mcpServers")
    if isinstance(servers, dict):
        for name, spec in servers.items():
            if isinstance(spec, dict):
                out.mcp_servers.append(
                    mcp_server_from_mapping(
                        name, spec, path=mod.path, line=line, declared_in="mcpServers option"
                    )
                )

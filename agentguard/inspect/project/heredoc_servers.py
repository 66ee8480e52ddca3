"""MCP servers a here-document writes: a workflow ``run:`` step, a Dockerfile or a shell
script that does ``cat > mcp-servers.json << 'EOF'`` with a JSON body holding
``mcpServers`` (claude-code-action's issue-triage example does). Each server is a launch
with the file line of its name, as an ``.mcp.json`` server is.

What the shell does to the body is kept as unknown, never guessed: in a body whose
delimiter is not quoted, a value with ``$`` or a backquote is expanded when the file is
written, so it is unknown; a workflow's ``${{ }}`` is replaced by Actions before any shell
runs, quoted or not, so it is unknown too. A body that holds ``mcpServers`` and is not
JSON agentguard reads, or is over :data:`MAX_BODY_CHARS`, is a failed source: its servers
may be missed."""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from agentguard.findings import Source, SourceStatus
from agentguard.inspect.project.gha_expr import evaluate, to_text
from agentguard.inspect.project.jsonc import load_jsonc
from agentguard.inspect.project.lined import PARSE_FAILURES, LinedDoc, document_error
from agentguard.inspect.project.mcp_mapping import GATEWAY_CONTAINER, mcp_server_from_mapping
from agentguard.inspect.project.model import McpServer, Unknown
from agentguard.inspect.project.outcome import failed_source
from agentguard.inspect.project.servers_needle import text_names_servers
from agentguard.inspect.project.shell_heredocs import (
    MAX_HEREDOCS,
    MAX_NESTING,
    Heredoc,
    Line,
    heredocs,
    text_lines,
)

if TYPE_CHECKING:
    from agentguard.inspect.project.outcome import FileOutcome

MAX_BODY_CHARS = 1 << 20  # one here-document's body read as JSON
_EXPR = re.compile(r"\$\{\{.*?\}\}", re.S)
# where a `${{ }}` stood: a private-use character, valid inside a JSON string
_MARK = re.compile("\ue000(\\d{1,6})\ue000")

# what may stand before a JSON object: a byte-order mark, blanks, JSONC comments (Gemini CLI
# and VS Code read commented settings)
_PRELUDE = re.compile(r"\ufeff?(?:\s+|//[^\n]*|/\*.*?\*/)*", re.S)

Found = tuple[list[McpServer], list[Source]]

# A JSON string (matched whole, so that what stands inside it stays inside it), a `${{ }}`
# outside any string (gh-aw writes `"sink-visibility": ${{ toJSON(...) }}`), or, in a body
# whose delimiter is not quoted, a shell expansion outside any string (`"port": $PORT`)
_JSON_STRING = r'"(?:[^"\\\n]|\\.)*"'
_SHELL_EXPANSION = r"(?<!\\)\$(?:\{[^}\n]*\}|[A-Za-z_][A-Za-z0-9_]*|\([^)\n]*\))"
_IN_WORKFLOW = re.compile(rf"{_JSON_STRING}|\$\{{\{{.*?\}}\}}", re.S)
_IN_SHELL = re.compile(rf"{_JSON_STRING}|\$\{{\{{.*?\}}\}}|{_SHELL_EXPANSION}", re.S)
# in a body whose delimiter is not quoted the shell removes the backslash before `$`, a
# backquote or a backslash (`"\${GITHUB_WORKSPACE}"` is written as `"${GITHUB_WORKSPACE}"`)
_SHELL_ESCAPE = re.compile(r"\\([$`\\])")
WORKFLOW_VALUE = "a workflow expression, known only when the workflow runs"
SHELL_VALUE = "expanded by the shell when the here-document is written"


def _marked(mark: Callable[[str, str], str], workflow: bool, m: re.Match[str]) -> str:
    """Each `${{ }}` inside a string as its mark; one outside any string (or a shell
    expansion there) as a string holding its mark: a value known only when the step runs,
    never a JSON error."""
    text = m.group(0)
    if text.startswith('"'):
        return _EXPR.sub(lambda e: mark(e.group(0), WORKFLOW_VALUE), text) if workflow else text
    if text.startswith("${{"):
        return f'"{mark(text, WORKFLOW_VALUE)}"' if workflow else text
    return f'"{mark(text, SHELL_VALUE)}"'


def heredoc_servers(path: str, lines: Sequence[Line], *, where: str, workflow: bool) -> Found:
    """The servers of every here-document in ``lines`` whose body holds ``mcpServers``,
    and the failed sources of those that could not be read. ``where``: what the text is
    ("a run step", "a Dockerfile"); ``workflow``: ``${{ }}`` are workflow expressions."""
    servers: list[McpServer] = []
    failed: list[Source] = []
    for count, doc in enumerate(heredocs(lines, shell=_known_expressions if workflow else None)):
        if count == MAX_HEREDOCS:
            failed.append(
                failed_source(
                    path,
                    f"more than {MAX_HEREDOCS} here-documents (the next opened at line "
                    f"{doc.opened_at}): the rest were not read for MCP servers",
                    "cap-heredocs",
                )
            )
            break
        text = doc.text
        if not text_names_servers(text):
            continue
        if doc.too_deep:
            failed.append(
                failed_source(
                    path,
                    f"the here-document opened at line {doc.opened_at} holds `mcpServers` and "
                    f"here-documents nested more than {MAX_NESTING} deep: they were not read",
                    "cap-heredoc-nesting",
                )
            )
            continue
        if not _json_object(text):
            continue  # (a script holding one: its own heredocs are scanned on their own)
        if len(text) > MAX_BODY_CHARS:
            failed.append(
                failed_source(
                    path,
                    f"the here-document opened at line {doc.opened_at} holds `mcpServers` and "
                    f"is over {MAX_BODY_CHARS} characters: its MCP servers were not read",
                    "heredoc-too-large",
                )
            )
            continue
        got = _servers(path, doc, where, workflow)
        if isinstance(got, Source):
            failed.append(got)
        else:
            servers += got
    return servers, failed


# `NAME[:TAG]@sha256:HEX`: an image reference fixed by its digest, wherever the file says it
_DIGEST_REF = re.compile(
    r"(?<![\w./:@-])([a-z0-9][\w.-]*(?:/[\w.-]+)+)(?::[\w.-]+)?@sha256:[0-9a-f]{64}\b"
)
_MAX_PULLED = 64
# a line that pulls images: `docker pull`/`podman pull`, or gh-aw's own download script
_PULLS = re.compile(r"\b(?:docker|podman)\s+(?:image\s+)?pull\b|download_docker_images\.sh\b")


def _with_pulled_digests(servers: list[McpServer], lines: Sequence[Line]) -> list[McpServer]:
    """Each server that runs a gateway container by name, with the references of that image
    by digest on lines of the same file that pull images (not a comment, not a mere
    mention): facts, not a judgement; the rule says what they prove."""
    containers = [s for s in servers if s.declared_in.endswith(GATEWAY_CONTAINER)]
    if not containers:
        return servers
    refs: dict[str, list[tuple[str, int]]] = {}
    for number, text in lines:
        if text.lstrip().startswith("#") or not _PULLS.search(text):
            continue  # (a comment, or a line that names it without pulling it, proves less)
        for m in _DIGEST_REF.finditer(text):
            got = refs.setdefault(m.group(1), [])
            if len(got) < _MAX_PULLED and (m.group(0), number) not in got:
                got.append((m.group(0), number))
    out = []
    for s in servers:
        image = _image_name(s) if s in containers else None
        found = refs.get(image or "")
        out.append(dataclasses.replace(s, pulled_digests=tuple(found)) if found else s)
    return out


def _image_name(server: McpServer) -> str | None:
    """The repository a gateway container names without a digest (``ghcr.io/x/y:tag`` ->
    ``ghcr.io/x/y``), or None."""
    image = server.image
    if image is None or "@" in image:
        return None
    last = image.rsplit("/", 1)
    return image.rsplit(":", 1)[0] if ":" in last[-1] else image


def _known_expressions(line: str) -> str:
    """A run step's line as the shell gets it where Actions' replacement is known:
    ``${{ '<<' }}EOF`` is an operator by the time bash reads it. An expression whose value
    is not known stays as written."""
    if "${{" not in line:
        return line

    def known(m: re.Match[str]) -> str:
        value = to_text(evaluate(m.group(0)[3:-2], {}))
        return m.group(0) if value is None else value

    return _EXPR.sub(known, line)


def _json_object(text: str) -> bool:
    """The body is a JSON object, maybe after a byte-order mark and comments."""
    m = _PRELUDE.match(text)
    return text.startswith("{", m.end() if m else 0)


def _servers(path: str, doc: Heredoc, where: str, workflow: bool) -> list[McpServer] | Source:
    exprs: list[tuple[str, str]] = []

    def mark(text: str, why: str) -> str:
        exprs.append((text, why))
        return f"\ue000{len(exprs) - 1}\ue000"

    pattern = _IN_SHELL if not doc.quoted else _IN_WORKFLOW if workflow else None
    text = doc.text if pattern is None else pattern.sub(partial(_marked, mark, workflow), doc.text)
    if not doc.quoted:  # what the shell makes of the body before the command reads it
        text = _SHELL_ESCAPE.sub(r"\1", text)
    try:
        parsed = load_jsonc(text)
    except PARSE_FAILURES as exc:
        err = document_error(exc)
        at = doc.body[err.line - 1][0] if err.line and err.line <= len(doc.body) else doc.opened_at
        return failed_source(
            path,
            f"the here-document opened at line {doc.opened_at} holds `mcpServers` and is not "
            f"JSON agentguard reads (line {at}: {err}): its MCP servers were not read",
            f"heredoc-{err.code}",
        )
    tables = _tables(parsed.value)
    if not tables:
        return []  # `mcpServers` elsewhere: not a configuration a client reads
    declared_in = f"here-document in {where}" + (
        f" writing {posixpath.basename(doc.target)}" if doc.target else ""
    )
    if not doc.terminated:
        declared_in += f" (no closing `{doc.delimiter}`: it runs to the end)"
    out: list[McpServer] = []
    for keys, table in tables:
        for name, spec in table.items():
            line = _file_line(parsed, doc, *keys, name)
            value = _unexpanded(spec, exprs, doc.quoted)
            if not isinstance(value, dict):
                value = {"command": Unknown(str(spec)[:80], "the server entry is not an object")}
            out.append(
                mcp_server_from_mapping(
                    str(name), value, path=path, line=line, declared_in=declared_in
                )
            )
    return out


def _tables(root: Any) -> list[tuple[tuple[str, ...], dict[str, Any]]]:
    """The server tables a client reads in the body: top-level ``mcpServers``, and each
    ``projects.PATH.mcpServers`` (Claude Code's ``~/.claude.json``, which a here-document
    writing to ``$HOME`` names only through a variable)."""
    if not isinstance(root, dict):
        return []
    out: list[tuple[tuple[str, ...], dict[str, Any]]] = []
    if isinstance(root.get("mcpServers"), dict):
        out.append((("mcpServers",), root["mcpServers"]))
    projects = root.get("projects")
    for proj, cfg in projects.items() if isinstance(projects, dict) else ():
        if isinstance(cfg, dict) and isinstance(cfg.get("mcpServers"), dict):
            out.append((("projects", str(proj), "mcpServers"), cfg["mcpServers"]))
    return out


def _file_line(parsed: LinedDoc, doc: Heredoc, *keys: str) -> int:
    at = parsed.line(*keys)
    return doc.body[at - 1][0] if at and at <= len(doc.body) else doc.opened_at


def _unexpanded(value: Any, exprs: list[tuple[str, str]], quoted: bool) -> Any:
    """``value`` with what the shell or Actions replace made unknown."""
    if isinstance(value, dict):
        return {k: _unexpanded(v, exprs, quoted) for k, v in value.items()}
    if isinstance(value, list):
        return [_unexpanded(v, exprs, quoted) for v in value]
    if not isinstance(value, str):
        return value
    marks = [int(m.group(1)) for m in _MARK.finditer(value)]
    if marks and all(n < len(exprs) for n in marks):  # (the body's own U+E000 is its text)
        shown = _MARK.sub(lambda m: exprs[int(m.group(1))][0], value)
        return Unknown(shown[:80], exprs[marks[0]][1])
    if not quoted and ("$" in value or "`" in value):
        return Unknown(value[:80], SHELL_VALUE)
    return value


# -- the files they are read from -------------------------------------------------------


def workflow_heredoc_servers(path: str, data: bytes) -> Found:
    """The servers written by here-documents in the ``run:`` steps of a workflow or a
    composite action. Raises :class:`~agentguard.inspect.project.lined.DocumentError`."""
    from agentguard.inspect.project.yaml_lined import load_workflow_yaml

    text = data.decode("utf-8-sig")
    doc = load_workflow_yaml(text)
    raw = text.split("\n")
    servers: list[McpServer] = []
    failed: list[Source] = []
    for keys, script in _run_steps(doc.value, ()):
        if not text_names_servers(script):
            continue
        got, bad = heredoc_servers(
            path, _script_lines(raw, doc.line(*keys) or 1, script), where="a run step",
            workflow=True,
        )  # fmt: skip
        servers += got
        failed += bad
    return _with_pulled_digests(servers, list(enumerate(raw, 1))), failed


def _run_steps(value: Any, keys: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    """(key path, script) of every ``steps[i].run`` written as text, in document order
    (the YAML reader bounds the depth)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _run_steps(v, (*keys, k))
    elif isinstance(value, list):
        for i, step in enumerate(value):
            run = step.get("run") if isinstance(step, dict) else None
            if keys and keys[-1] == "steps" and isinstance(run, str):
                out.append(((*keys, i, "run"), run))
            else:
                out += _run_steps(step, (*keys, i))
    return out


def _script_lines(raw: list[str], key_line: int, script: str) -> list[Line]:
    """The script's lines with their file lines: a literal block (``run: |``) starts on
    the line after its key, line for line; any other form (folded, quoted) is given the
    key's line throughout, since its lines are not the file's."""
    lines = script.split("\n")
    literal = key_line + len(lines) - 1 <= len(raw) + 1 and all(
        key_line + k < len(raw) and raw[key_line + k].strip() == t.strip()
        for k, t in enumerate(lines)
        if t.strip()
    )
    if literal:
        return text_lines(script, key_line + 1)
    return [(key_line, t) for t in lines]


def file_heredoc_servers(path: str, data: bytes, where: str) -> Found:
    """The servers written by here-documents of a Dockerfile or a shell script."""
    text = data.decode("utf-8", "replace")
    lines = text_lines(text)
    servers, failed = heredoc_servers(path, lines, where=where, workflow=False)
    return _with_pulled_digests(servers, lines), failed


def read_heredoc_servers(path: str, kind: str, data: bytes, out: FileOutcome) -> None:
    """Into ``out``: the servers here-documents write in a workflow, a composite action, a
    Dockerfile or a shell script that names ``mcpServers`` (the caller checked
    :func:`.servers_needle.names_servers`), with a source saying what was read."""
    from agentguard.inspect.project.composite import is_action_file
    from agentguard.inspect.project.lined import DocumentError
    from agentguard.inspect.project.workflows import is_workflow

    low = posixpath.basename(path).lower()
    if kind == "script" and (is_workflow(path, data) or is_action_file(path)):
        try:
            servers, failed = workflow_heredoc_servers(path, data)
        except (DocumentError, UnicodeDecodeError) as exc:
            if not any(s.name == path and s.status is SourceStatus.FAILED for s in out.sources):
                err = document_error(exc)
                where = f" (line {err.line})" if err.line else ""
                out.sources.append(failed_source(path, f"{err}{where}", f"workflow-{err.code}"))
            return
    elif kind == "script" and low.endswith((".sh", ".bash", ".zsh")):
        servers, failed = file_heredoc_servers(path, data, "a shell script")
    elif kind == "container" and _dockerfile(low):
        servers, failed = file_heredoc_servers(path, data, "a Dockerfile")
    else:
        return
    out.mcp_servers += servers
    out.sources += failed
    if servers:
        out.sources.append(
            Source.ok("file", path, f"MCP servers written by here-documents ({len(servers)})")
        )


def _dockerfile(low: str) -> bool:
    return (
        low in ("dockerfile", "containerfile")
        or low.startswith(("dockerfile.", "containerfile."))
        or low.endswith((".dockerfile", ".containerfile"))
    )

"""``claude`` command lines in scripts, Dockerfiles, compose files, package.json, code.

A line-level reader, not a shell parser: it finds the word ``claude`` used as a command
(``claude``, ``/usr/local/bin/claude``, ``npx @anthropic-ai/claude-code``, and the
``claude_args:`` input of claude-code-action in a workflow) followed by
flags, joins backslash continuations and open brackets (a JSON/YAML/Python argv list
over several lines), and reads the flags that decide what the engine may do. Comment
lines (``#``, ``//``) are ignored, and so is the prose of a Python file (its docstrings and
other bare string statements: documentation that names a command runs nothing). Each invocation becomes an :class:`AgentConfig` with
engine "claude CLI" and the SDK option names.
"""

from __future__ import annotations

import ast
import re
import unicodedata
import warnings
from dataclasses import replace

from agentguard.facts.agents import FirewallContainer
from agentguard.inspect.project.awf import read_awf, wrapper_of
from agentguard.inspect.project.line_hits import lines_holding
from agentguard.inspect.project.model import AgentConfig, Option
from agentguard.inspect.project.needles import has_cli_use as has_cli_use
from agentguard.inspect.project.shell_words import shell_words

# What ends an unquoted word besides white space: the brackets and commas of an argv list
# written in code (JSON, YAML, Python), and the shell's `;`.
_WORD_END = frozenset(",[](){};")
# inside double quotes a backslash escapes only these (POSIX); elsewhere it stays
_COMMAND = re.compile(
    rb"(?:^|[\s\"'`\[(/;&|=])claude(?:[\s\"'`,\])]|$)|claude_args:|@anthropic-ai/claude-code"
)
_SEPARATORS = {"&&", "||", "|", ";", "&"}
_CLAUDE_PACKAGES = ("@anthropic-ai/claude-code",)

# flag -> (option name, how many values: 0 = switch, 1 = one, -1 = until the next flag)
_FLAGS: dict[str, tuple[str, int]] = {
    "--dangerously-skip-permissions": ("permission_mode", 0),
    "--allow-dangerously-skip-permissions": ("allow_dangerously_skip_permissions", 0),
    "--permission-mode": ("permission_mode", 1),
    "--allowedTools": ("allowed_tools", -1),
    "--allowed-tools": ("allowed_tools", -1),
    "--disallowedTools": ("disallowed_tools", -1),
    "--disallowed-tools": ("disallowed_tools", -1),
    "--tools": ("tools", -1),
    "--add-dir": ("add_dirs", -1),
    "--setting-sources": ("setting_sources", 1),
    "--fallback-model": ("fallback_model", 1),
    "--model": ("model", 1),
    "--mcp-config": ("mcp_config", -1),
    "-p": ("print", 0),
    "--print": ("print", 0),
}
MAX_JOIN = 30  # lines joined for one command


def _logical_lines(text: str) -> list[tuple[int, str]]:
    hits, lines = lines_holding(text, ("claude",))
    out: list[tuple[int, str]] = []
    i = 0
    for start in hits:
        if start < i:
            continue  # (joined to a line before)
        i = start
        line = lines[i]
        stripped = line.lstrip()
        if stripped.startswith(("#", "//")):
            i += 1
            continue
        parts = [line]
        if stripped.startswith("claude_args:"):
            # claude-code-action's input: flags on this line or in the indented block below
            indent = len(line) - len(stripped)
            while i + 1 < len(lines) and i - start < MAX_JOIN:
                nxt = lines[i + 1]
                if nxt.strip() and len(nxt) - len(nxt.lstrip()) <= indent:
                    break
                i += 1
                parts.append(nxt)
            out.append((start + 1, " ".join(p.strip() for p in parts)))
            i += 1
            continue
        depth = line.count("[") - line.count("]") + line.count("(") - line.count(")")
        while i + 1 < len(lines) and depth >= 0:
            tail = parts[-1].rstrip()
            # continue: a backslash, an open bracket, or an argv list that goes on ("x",)
            if not (tail.endswith(("\\", ",")) or depth > 0) or i - start >= MAX_JOIN:
                break
            i += 1
            nxt = lines[i]
            if not nxt.lstrip().startswith(("#", "//")):
                parts.append(nxt)
                depth += nxt.count("[") - nxt.count("]") + nxt.count("(") - nxt.count(")")
        out.append((start + 1, " ".join(p.rstrip().rstrip("\\") for p in parts)))
        i += 1
    return out


_VALUE_SEP = re.compile(r",|\s+(?![^()]*\))")  # commas, and spaces outside Tool(...)


def _split_values(values: list[str]) -> tuple[str, ...]:
    out: list[str] = []
    for v in values:
        out.extend(x.strip() for x in _VALUE_SEP.split(v) if x and x.strip())
    return tuple(out)


# `claude` as a command word inside a script: at a word's start or after a path's `/`;
# or gh-aw's harness, `node .../claude_harness.cjs COMMAND FLAGS`, which starts COMMAND
# (`claude`, or the workflow's `engine.command`) with Claude's flags
_EMBEDDED = re.compile(r"(?:^|[\s'\"/])claude(?:_harness\.cjs)?(?:[\s'\"]|$)")
_HARNESS = "claude_harness.cjs"


def _tokens(line: str, depth: int = 0) -> list[str]:
    """Tokens of a line; a quoted word that holds a whole `claude ...` command (a
    package.json script, a YAML `run:` value, the script of `bash -c '...'`) is split
    again as the shell that runs it would, once or twice (`bash -c` inside `bash -c`)."""
    out: list[str] = []
    for text, quoted in shell_words(line):
        if quoted and depth < 2 and "claude" in text and _EMBEDDED.search(text):
            out.extend(_tokens(text, depth + 1))
        else:
            out.append(text)
    return out


# What lets a Python file run its own prose: reading a docstring back (``__doc__``, by any
# spelling: a computed name through getattr, vars, globals, a ``__dict__``, a frame, a
# format string, a name built at run time and evaluated: ``eval("__d" + "oc__")``), a code
# object's constants, or its own text (``__file__``, the loader, linecache, inspect, any
# file it opens). A file naming any of these keeps its prose.
_READS_ITS_PROSE = re.compile(
    r"__doc__|getdoc|get_docstring|pydoc|\bhelp\b|getcomments|__code__|co_consts|f_code|"
    r"\beval\b|\bexec\b|"
    r"__file__|__loader__|__spec__|__cached__|argv|linecache|tokenize|getsource|"
    r"__dict__|\bvars\b|\bglobals\b|\blocals\b|f_globals|\bmodules\b|__builtins__|"
    r"\bgetattr\b|attrgetter|__getattribute__|\bformat\b|format_map|Formatter|"
    r"__import__|importlib|pkgutil|\bopen\b|read_text|read_bytes|get_data"
)
# Python's own line breaks (what an AST's line numbers count), kept as they are
_PY_BREAK = re.compile(r"(\r\n|\r|\n)")


def _reads_its_prose(tree: ast.Module, lines: list[str]) -> bool:
    """Whether the file's code (its names, not its comments or strings: a docstring that
    says "open" reads nothing) names a way to its own prose (:data:`_READS_ITS_PROSE`).

    The names are every identifier the parsed tree holds (a name, an attribute, a
    definition's, an argument's or keyword's, an import's, a ``global``'s, a pattern's:
    each string field of a node other than a constant's value), and the whole text of every
    f-string (its fields are code; its literal parts and the strings inside its fields are
    searched too, as the tokenizer saw one token): both as the source spells it (escapes,
    line continuations, bytes and each part of an implicit concatenation as they stand, the
    tokenizer's token) and as Python decodes it (``lines``: the source's lines, Python's
    breaks). Read off the tree the file was parsed into: the words Python's tokenizer gives,
    without tokenizing the file again (what cost pydantic-ai a tenth of a second)."""
    words: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            words.append(_source_of(node, lines))
            words.extend(
                n.value
                for n in ast.walk(node)
                if isinstance(n, ast.Constant) and isinstance(n.value, str)
            )
            continue
        if isinstance(node, ast.Constant):
            continue
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, str):
                words.append(value)
            elif isinstance(value, list) and value and isinstance(value[0], str):
                words.extend(v for v in value if isinstance(v, str))
    return _READS_ITS_PROSE.search(" ".join(words)) is not None


def _source_of(node: ast.expr, lines: list[str]) -> str:
    """The source text a node spans (``lines``: the source's lines, Python's breaks; the
    columns are UTF-8 byte offsets); all the lines it is on when its place is not known."""
    end_lineno, end_col = node.end_lineno, node.end_col_offset
    if end_lineno is None or end_col is None or not 1 <= node.lineno <= end_lineno <= len(lines):
        return " ".join(lines[max(node.lineno - 1, 0) : end_lineno or len(lines)])
    if node.lineno == end_lineno:
        return lines[node.lineno - 1].encode()[node.col_offset : end_col].decode(errors="replace")
    first = lines[node.lineno - 1].encode()[node.col_offset :].decode(errors="replace")
    last = lines[end_lineno - 1].encode()[:end_col].decode(errors="replace")
    return "\n".join([first, *lines[node.lineno : end_lineno - 1], last])


def _python_prose_blanked(text: str) -> str:
    """The Python source with the lines of its bare string statements (docstrings, string
    blocks left as notes) emptied, line numbers and line breaks kept; a file that does not
    parse is kept whole (a template, or another Python: its lines are still read), and so
    is one that may read its prose back (:data:`_READS_ITS_PROSE`: it may be what it runs)."""
    try:
        with warnings.catch_warnings():  # (the project's own warnings: bad escapes)
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return text
    parts = _PY_BREAK.split(text)
    lines = parts[0::2]  # (the AST's lines: columns are UTF-8 byte offsets)
    # (every name the tree gives is spelled in the text as Python reads a name, NFKC-folded:
    # fullwidth `open` is `open`; every f-string's source too: a text that spells none of the
    # words names no way to its prose in its code. A word only an f-string's escape spells,
    # `f"\x6fpen"`, is not sought, as the tokenizer's token did not spell it either)
    spelled = text if text.isascii() else unicodedata.normalize("NFKC", text)
    if _READS_ITS_PROSE.search(spelled) is not None and _reads_its_prose(tree, lines):
        return text
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
            and node.end_lineno is not None
            and node.end_col_offset is not None
            and node.end_lineno <= len(lines)
        ):
            continue
        first = lines[node.lineno - 1].encode()
        if first[: node.col_offset].strip():
            continue  # (`x = 1; "note"`: code shares the line)
        last = lines[node.end_lineno - 1].encode()
        if last[node.end_col_offset :].strip() not in (b"", b";"):
            continue
        for n in range(node.lineno - 1, node.end_lineno):
            lines[n] = ""
    parts[0::2] = lines
    return "".join(parts)


def cli_configs(path: str, data: bytes, *, origin: str = "project") -> list[AgentConfig]:
    text = data.decode("utf-8", "replace")
    if path.endswith((".py", ".pyi")):
        text = _python_prose_blanked(text)
    out: list[AgentConfig] = []
    physical: list[str] | None = None
    awf = "awf" in text  # (once: a search of the whole file per command line was quadratic)
    for line_no, line in _logical_lines(text):
        tokens = _tokens(line)
        for i, tok in enumerate(tokens):
            is_cmd = tok in ("claude", "claude_args:") or tok.endswith("/claude")
            if not is_cmd and tok.startswith(_CLAUDE_PACKAGES):
                is_cmd = i > 0 and tokens[i - 1] in ("npx", "bunx", "-y", "--yes", "exec", "dlx")
            engine_command = _engine_command(tokens, i)
            if not is_cmd and engine_command is None:
                continue
            rest = tokens[i + (2 if engine_command else 1) :]
            if tok == "claude_args:":
                # a quoted one-line value holds the flags: `claude_args: '--allowedTools "..."'`
                rest = [t for r in rest for t in (_tokens(r, 2) if r.startswith("-") else [r])]
            config = _read_flags(path, line_no, rest, origin)
            if config is not None and engine_command is not None:
                config = replace(
                    config,
                    label=f"claude command line (gh-aw's harness starts `{engine_command}`, "
                    "the workflow's engine command, with Claude's flags)",
                )
            if config is not None:
                if awf:
                    physical = physical if physical is not None else text.splitlines()
                    config = replace(config, confined_by=_firewall(physical, line_no, line))
                out.append(config)
            break
    return out


def _engine_command(tokens: list[str], i: int) -> str | None:
    """The command gh-aw's harness starts when it is not ``claude`` itself (a workflow's
    ``engine.command``: a wrapper that takes Claude's flags), or None. ``claude`` after the
    harness is read as ``claude`` (the next token), never twice."""
    if not (tokens[i] == _HARNESS or tokens[i].endswith("/" + _HARNESS)) or i + 1 >= len(tokens):
        return None
    command = tokens[i + 1]
    if command.startswith("-") or command in _SEPARATORS:
        return None
    return None if command == "claude" or command.endswith("/claude") else command


_AWF_WORD = re.compile(r"(?:^|[\s/])awf(?:\s|$)")


def _firewall(physical: list[str], line_no: int, line: str) -> FirewallContainer | None:
    """The awf container the command line is started in: the `awf ... --` the same shell
    command opens with, on this line or on the continued lines above it (a YAML `run:`
    block: `awf --config ... \\` then `-- /bin/bash -c '... claude ...'`)."""
    first = line_no
    while first > 1 and line_no - first < MAX_JOIN and physical[first - 2].rstrip().endswith("\\"):
        first -= 1
    head = [physical[n - 1].rstrip().rstrip("\\") for n in range(first, line_no)]
    words = shell_words(" ".join([*head, line]))
    at = next(
        (
            k
            for k, (w, quoted) in enumerate(words)
            if w == "claude"
            or w.endswith(("/claude", _HARNESS))
            or (quoted and "claude" in w and _EMBEDDED.search(w))
        ),
        None,
    )
    wrapper = wrapper_of(words, at) if at is not None else None
    if wrapper is None:
        return None
    awf_line = next(
        (n for n in range(first, line_no + 1) if _AWF_WORD.search(physical[n - 1])), line_no
    )
    return read_awf(physical, awf_line, words, wrapper, shell_words)


def read_flag_text(text: str, line: int, hole: str = "") -> tuple[dict[str, Option], bool]:
    """The options set by the flags in ``text`` (claude-code-action's ``claude_args``
    input: flags only, over one line or several), and whether every ``hole`` (a value
    not known, marked in the text) is a flag's value: one that is not may be any flags."""
    lines = [raw for raw in text.splitlines() if not raw.lstrip().startswith("#")]
    args = [
        t for r in _tokens(" ".join(lines)) for t in (_tokens(r, 2) if r.startswith("-") else [r])
    ]
    contained = True
    for i, tok in enumerate(args if hole else ()):
        if hole not in tok:
            continue
        flag = tok.partition("=")[0]
        after_flag = i > 0 and args[i - 1] in _FLAGS and _FLAGS[args[i - 1]][1] != 0
        if not ((flag in _FLAGS and "=" in tok) or after_flag):
            contained = False
    return _flag_options(line, args) or {}, contained


def _read_flags(path: str, line: int, args: list[str], origin: str) -> AgentConfig | None:
    options = _flag_options(line, args)
    if options is None:
        return None
    return AgentConfig(
        engine="claude CLI",
        path=path,
        line=line,
        label="claude command line",
        options=options,
        origin=origin,
    )


def _flag_options(line: int, args: list[str]) -> dict[str, Option] | None:
    options: dict[str, Option] = {}
    seen_flag = False
    i = 0
    while i < len(args):
        tok = args[i]
        if tok in _SEPARATORS:
            if i == 0 and tok == "|":  # a YAML block scalar: `claude_args: |`
                i += 1
                continue
            break
        flag, _, inline = tok.partition("=")
        spec = _FLAGS.get(flag)
        if spec is None:
            i += 1
            continue
        seen_flag = True
        name, arity = spec
        i += 1
        values: list[str] = [inline] if inline else []
        if not inline:
            if arity == 1 and i < len(args):
                values.append(args[i])
                i += 1
            elif arity == -1:
                while i < len(args) and not args[i].startswith("-") and args[i] not in _SEPARATORS:
                    values.append(args[i])
                    i += 1
        if flag == "--dangerously-skip-permissions":
            options[name] = Option("bypassPermissions", line, flag)
        elif arity == 0:
            options[name] = Option(True, line, flag)
        elif arity == 1:
            options[name] = Option(values[0] if values else None, line, flag)
        else:
            prior = options.get(name)
            merged = (prior.value if prior else ()) + _split_values(values)
            options[name] = Option(merged, line, flag)
    if not seen_flag:
        return None
    options.pop("print", None)
    return options

"""MCP server definitions in Python code (a file's mappings and stdio calls)."""

from __future__ import annotations

import ast
import re
from typing import TYPE_CHECKING

from agentguard.inspect.project.mcp_mapping import mcp_server_from_mapping
from agentguard.inspect.project.python_eval import Evaluator, plain
from agentguard.inspect.project.python_import_needles import BLANKS
from agentguard.inspect.project.python_scope import ModuleIndex, short

if TYPE_CHECKING:
    from agentguard.facts.agents import McpServer

_STDIO_CALLEES = ("stdio", "mcp")

# What mcp_servers needs the file to spell: `command` as a keyword (`command=`, blanks,
# newlines and continuations between, as inside brackets; not `commands` or `**command`),
# or as a string constant, a dict's key. Python reads a string's letters from escapes too
# (`"comm\x61nd"`, `"\143ommand"`, `"\N{...}ommand"`), joins adjacent pieces (`"comm" "and"`)
# and drops a backslash-newline inside one: so each letter may be written as an escape that
# may stand for it, with piece breaks and continuations between letters, and the word ends
# at a closing quote or a continuation (not `"command-r"`). An identifier spelled otherwise
# (a fullwidth letter, which Python reads as its ASCII one) is no ASCII: such a file goes
# to every reader before this test (python_agents.Wanted.of). A named character is not
# looked up (any name may stand for a letter).
#
# The test starts at every `c` and backslash of a file, so from each it reads a bounded
# stretch: a named character's name is at most 100 characters, and a comment is not read
# through (a line of `c' #` read to its end from each `c` took a minute for 200 KB): a
# comment where a gap may hold one (after `command`, or after the closing quote of a piece
# that spells the word's start) counts as "maybe".
_ESCAPE_ANY = rb"\\N\{[A-Za-z0-9 \-]{1,100}\}"
_CONTINUED = rb"(?:\\\r\n|\\\r|\\\n)"
_BREAK = rb"(?:" + _CONTINUED + rb"|[\"']" + BLANKS + rb"[rRuUbBfF]{0,2}[\"'])*"
_COMMENTED = rb"[\"']" + BLANKS + rb"#"  # (a piece's closing quote, then a comment)
_END = rb"(?:[\"']|" + _CONTINUED + rb")"


def _letter(c: str) -> bytes:
    code = ord(c)
    hexes = f"{code:02x}"
    hex_class = "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in hexes)
    octal = f"{code:o}"
    return (
        rb"(?:"
        + c.encode()
        + rb"|\\(?:x"
        + hex_class.encode()
        + rb"|u00"
        + hex_class.encode()
        + rb"|U000000"
        + hex_class.encode()
        + rb"|"
        + octal.encode()
        + rb")|"
        + _ESCAPE_ANY
        + rb")"
    )


def _spelled(word: str) -> bytes:
    """``word`` spelled as above, or a start of it spelled so and then a comment."""
    letters = [_letter(c) for c in word]
    rest = _END
    for letter in reversed(letters[1:]):
        rest = rb"(?:" + _BREAK + rb"(?:" + letter + rest + rb"|" + _COMMENTED + rb"))"
    return letters[0] + rest


_SPELLED = re.compile(_spelled("command"))
_KEYWORD = re.compile(rb"command" + BLANKS + rb"(?:=(?!=)|#)")


def may_declare_servers(data: bytes) -> bool:
    """False only when :func:`mcp_servers` cannot find a server in the file, under the MCP
    readers' own rule that a file that never names MCP declares none (the second-stage
    pre-filter): it needs `command` as a keyword or spelled in a string (above)."""
    return b"mcp" in data.lower() and (
        _KEYWORD.search(data) is not None or _SPELLED.search(data) is not None
    )


def mcp_servers(path: str, index: ModuleIndex, ev: Evaluator) -> list[McpServer]:
    """MCP servers defined in code: a mapping with `command` and `args`/`type`/`env`, or a
    stdio/MCP call with `command=` and `args=` (the mapping reader reads what they set)."""
    out: list[McpServer] = []
    names: dict[int, str] = {}
    for node, _scope in index.dicts:
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(v, ast.Dict) and isinstance(k, ast.Constant) and isinstance(k.value, str):
                names[id(v)] = k.value
    for node, scope in index.dicts:
        keys = {k.value for k in node.keys if isinstance(k, ast.Constant)}
        if "command" not in keys or not ({"args", "type", "env"} & keys):
            continue
        spec = plain(ev.eval(node, scope))
        if not isinstance(spec, dict):
            continue
        out.append(
            mcp_server_from_mapping(
                names.get(id(node), "(unnamed)"),
                spec,
                path=path,
                line=node.lineno,
                declared_in="mapping in code",
            )
        )
    for call, scope in index.calls:
        kws = {kw.arg: kw.value for kw in call.keywords if kw.arg}
        if "command" not in kws or "args" not in kws:
            continue
        q = ev.qualname(call.func, scope) or short(call.func, 60)
        if not any(s in q.lower() for s in _STDIO_CALLEES):
            continue
        spec = {
            "command": plain(ev.eval(kws["command"], scope)),
            "args": plain(ev.eval(kws["args"], scope)),
        }
        out.append(
            mcp_server_from_mapping(
                "(unnamed)",
                spec,
                path=path,
                line=call.lineno,
                declared_in=f"{q.split('.')[-1]}(...)",
            )
        )
    return out

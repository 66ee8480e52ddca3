"""A Jinja-templated Dockerfile (``Dockerfile.j2``), read best-effort before rendering.

What runs is the rendered file, which depends on values agentguard does not have. So
every branch is read: the tags of ``{% if %}``/``{% elif %}``/``{% else %}``/``{% for %}``
/``{% macro %}`` are dropped and their bodies kept in place (a macro's body is read where
it is defined, and its ``{{ name() }}`` call is dropped), and each ``{{ value }}`` becomes
the visible unknown ``{{value}}`` (one word, never a guessed value); a value alone on its
line stands for instructions nobody can read before rendering, so it is dropped and
counted. Line numbers are
kept, so findings point into the template. Branches written inside one continued
instruction (``RUN a \\`` then ``{% if %} b {% else %} c {% endif %}``) are joined with
``;`` so that the instruction reads both. A file that still does not parse is skipped with
the reason by the caller, never failed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TAG = re.compile(r"\{#.*?#\}|\{%-?\s*(\w*)(.*?)-?%\}|\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_MACRO = re.compile(r"\{%-?\s*macro\s+(\w+)\s*\(")
_CALL = re.compile(r"(\w+)\s*\(.*\)\s*$", re.S)
_BLOCKS = {"if": "endif", "for": "endfor", "macro": "endmacro", "block": "endblock"}
_NOT_FOLLOWED = {"include", "import", "from", "extends", "call"}
MAX_VALUE = 40  # characters of a value's name kept in its unknown


@dataclass(frozen=True)
class Untemplated:
    text: str  # the template with its tags dropped and values as {{name}}
    branches: int  # {% if %} blocks whose branches were all kept
    values: int  # {{ }} values left unknown
    unknown_lines: int  # {{ }} standing alone on a line: instructions unknown, not read
    not_followed: tuple[str, ...]  # {% include %} and the like: what they add is not read


def is_template(path: str, text: str) -> bool:
    low = path.lower()
    return low.endswith((".j2", ".jinja", ".jinja2")) or "{%" in text or "{{" in text


def _unknown(expr: str) -> str:
    name = re.sub(r"[^A-Za-z0-9_.]+", "_", expr.strip()).strip("_")[:MAX_VALUE]
    return "{{" + (name or "value") + "}}"


def _alone(text: str, start: int, end: int) -> bool:
    """The tag is the only thing on its line(s)."""
    before = text[text.rfind("\n", 0, start) + 1 : start]
    nl = text.find("\n", end)
    after = text[end : nl if nl >= 0 else len(text)]
    return not before.strip() and not after.strip()


def _continued(out: list[str]) -> bool:
    """The text written so far ends inside a continued instruction (``\\`` at the end of
    its last line that holds anything)."""
    for line in reversed("".join(out).split("\n")):
        if line.strip():
            return line.rstrip().endswith("\\")
    return False


def _join_branch(out: list[str]) -> None:
    """Make the branch just read continue into the next one: `` ; \\`` after its last line."""
    text = "".join(out)
    lines = text.split("\n")
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].strip():
            if not lines[i].rstrip().endswith("\\"):
                lines[i] = lines[i].rstrip() + " ; \\"
            break
    out[:] = ["\n".join(lines)]


def untemplate(text: str) -> Untemplated:
    macros = set(_MACRO.findall(text))
    out: list[str] = []
    stack: list[tuple[str, bool]] = []  # (block, opened inside a continued instruction)
    branches = values = unknown_lines = 0
    not_followed: list[str] = []
    pos = 0
    for m in _TAG.finditer(text):
        out.append(text[pos : m.start()])
        pos = m.end()
        keyword, expr = m.group(1), m.group(3)
        newlines = "\n" * m.group(0).count("\n")
        if expr is not None:  # {{ value }}
            call = _CALL.match(expr)
            if call and call.group(1) in macros:
                out.append(newlines)  # the macro's body is read where it is defined
            elif _alone(text, m.start(), m.end()) and not _continued(out):
                unknown_lines += 1  # whole instructions come from it: unknown, not guessed
                out.append(newlines)
            else:
                values += 1
                out.append(_unknown(expr) + newlines)
            continue
        out.append(newlines)
        if keyword is None:  # a {# comment #}
            continue
        if keyword in _BLOCKS:
            stack.append((keyword, _continued(out)))
            if keyword == "if":
                branches += 1
        elif keyword in ("elif", "else") and stack and stack[-1][0] in ("if", "for"):
            if stack[-1][1]:
                _join_branch(out)
        elif keyword.startswith("end") and stack:
            stack.pop()
        elif keyword in _NOT_FOLLOWED:
            not_followed.append(f"{{% {keyword}{m.group(2).rstrip(' -')} %}}".strip())
    out.append(text[pos:])
    return Untemplated("".join(out), branches, values, unknown_lines, tuple(not_followed))

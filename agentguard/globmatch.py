"""Path globs matched in linear time (config ignores, ``.dockerignore``).

Globs come from the project under check. Translated to a regular expression, a pattern
such as ``**a**a**a**a**a**b`` backtracks for minutes on one path; here a glob is a list
of tokens run as a set of states over the path, one character at a time: time is
``O(len(path) * len(pattern))`` whatever the pattern.

``*`` is any run inside one path segment, ``?`` one character but ``/``, ``**`` any run
(``**/`` any number of whole folders, none included). With ``classes=True`` (the
engine's ``.dockerignore`` dialect) ``[...]`` is a character class and ``\\`` escapes the
next character; otherwise both are literal.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import PurePosixPath

_LIT, _ONE, _STAR, _DSTAR, _DIRS, _CLASS = range(6)


@dataclass(frozen=True)
class Glob:
    pattern: str
    tokens: tuple[tuple[int, str | re.Pattern[str] | None], ...]

    def match(self, path: str) -> bool:
        """Whether the whole of ``path`` matches."""
        tokens = self.tokens
        end = len(tokens)
        states = self._closure({0})
        for ch in path:
            nxt: set[int] = set()
            for i in states:
                if i == end:
                    continue
                kind, arg = tokens[i]
                if kind == _LIT:
                    if ch == arg:
                        nxt.add(i + 1)
                elif kind == _ONE:
                    if ch != "/":
                        nxt.add(i + 1)
                elif kind == _STAR:
                    if ch != "/":
                        nxt.add(i)
                elif kind == _DSTAR:
                    nxt.add(i)
                elif kind == _DIRS:
                    nxt.add(i)
                    if ch == "/":
                        nxt.add(i + 1)
                elif isinstance(arg, re.Pattern) and arg.fullmatch(ch):
                    nxt.add(i + 1)
            if not nxt:
                return False
            states = self._closure(nxt)
        return end in states

    def _closure(self, states: set[int]) -> set[int]:
        """Add the states reachable without reading: past ``*``, ``**`` and ``**/``."""
        out = set(states)
        todo = list(states)
        while todo:
            i = todo.pop()
            skippable = i < len(self.tokens) and self.tokens[i][0] in (_STAR, _DSTAR, _DIRS)
            if skippable and i + 1 not in out:
                out.add(i + 1)
                todo.append(i + 1)
        return out


def compile_glob(pattern: str, *, classes: bool = False) -> Glob:
    tokens: list[tuple[int, str | re.Pattern[str] | None]] = []
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if pattern.startswith("**", i):
            i += 2
            if i < n and pattern[i] == "/":
                tokens.append((_DIRS, None))
                i += 1
            else:
                tokens.append((_DSTAR, None))
            while i < n and pattern[i] == "*":  # a third star adds nothing
                i += 1
            continue
        if ch == "*":
            if not tokens or tokens[-1][0] not in (_STAR, _DSTAR):
                tokens.append((_STAR, None))
        elif ch == "?":
            tokens.append((_ONE, None))
        elif classes and ch == "[" and (end := pattern.find("]", i + 1)) > i + 1:
            body = pattern[i + 1 : end].replace("\\", "\\\\")
            if body.startswith(("!", "^")):
                body = "^" + body[1:]
            try:
                tokens.append((_CLASS, re.compile("[" + body + "]")))
            except re.error:
                tokens.extend((_LIT, c) for c in pattern[i : end + 1])
            i = end
        elif classes and ch == "\\" and i + 1 < n:
            i += 1
            tokens.append((_LIT, pattern[i]))
        else:
            tokens.append((_LIT, ch))
        i += 1
    return Glob(pattern, tuple(tokens))


@functools.lru_cache(maxsize=1024)
def glob_to_regex(pattern: str) -> Glob:
    """``*`` any run inside one path segment, ``?`` one character, ``**`` any depth
    (matched in linear time: :mod:`agentguard.globmatch`)."""
    return _compiled(pattern)


@functools.lru_cache(maxsize=4096)
def _compiled(pattern: str) -> Glob:
    return compile_glob(pattern)


@functools.lru_cache(maxsize=8192)
def _path_matches(pattern: str, cand: str) -> bool:
    rx = glob_to_regex(pattern.rstrip("/"))
    if rx.match(cand) or glob_to_regex(pattern.rstrip("/") + "/**").match(cand):
        return True
    return "/" not in pattern and rx.match(PurePosixPath(cand).name)


def glob_matches(pattern: str, path: str) -> bool:
    """An ignore/exclude/context glob against a project-relative path."""
    return _path_matches(pattern, path.replace("\\", "/"))

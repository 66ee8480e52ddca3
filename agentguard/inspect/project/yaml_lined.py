"""YAML to plain values with line numbers, safe against alias bombs.

PyYAML's safe composer builds the node graph (aliases are shared nodes, not copies);
the values are then materialised here with a budget: every node visit counts, so an
alias expanded a billion times stops at :data:`MAX_NODES` instead of eating memory.
Merge keys (``<<: *base``) are applied; compose's own tags (``!reset``, ``!override``)
and other unknown tags are read as their plain value.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
from collections.abc import Iterator
from typing import Any

import yaml

from agentguard.inspect.project.lined import MAX_DEPTH, MAX_NODES, DocumentError, KeyPath, LinedDoc

# libyaml's parser when PyYAML was built with it (the wheels are): the same nodes and
# marks, about five times faster than the pure-Python one.
_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_MERGE = "tag:yaml.org,2002:merge"
_PLAIN_TAGS = {
    "tag:yaml.org,2002:null",
    "tag:yaml.org,2002:bool",
    "tag:yaml.org,2002:int",
    "tag:yaml.org,2002:float",
    "tag:yaml.org,2002:str",
}


@contextlib.contextmanager
def _reading(text: str) -> Iterator[yaml.SafeLoader]:
    """A loader over ``text`` whose failures are :class:`DocumentError` with their line."""
    try:
        loader = _Loader(text)  # the reader rejects control characters
    except yaml.YAMLError as exc:
        raise DocumentError(f"not valid YAML: {exc}", line=1) from None
    try:
        yield loader
    except yaml.MarkedYAMLError as exc:
        if "maximum nesting depth" in str(exc.problem):  # libyaml's own depth cap
            raise DocumentError("YAML nested too deeply", code="too-deep") from None
        mark = exc.problem_mark or exc.context_mark
        raise DocumentError(
            f"not valid YAML: {exc.problem or exc}", line=mark.line + 1 if mark else None
        ) from None
    except yaml.YAMLError as exc:
        raise DocumentError(f"not valid YAML: {exc}") from None
    except RecursionError:
        raise DocumentError("YAML nested too deeply", code="too-deep") from None
    finally:
        loader.dispose()


def load_yaml(text: str) -> LinedDoc:
    """The single YAML document in ``text``. Raises :class:`DocumentError`."""
    with _reading(text) as loader:
        node = loader.get_single_node()
    if node is None:
        raise DocumentError("empty document", code="empty")
    lines: dict[KeyPath, int] = {}
    budget = [0]
    value = _convert(loader, node, (), lines, budget, 0)
    return LinedDoc(value, lines)


# (text, document) of the last :func:`load_workflow_yaml`: a workflow is read by several
# readers of the same file (its agent steps, its local actions, the agents its `run:`
# steps start, the here-documents of those steps), each of which loaded it again
_LAST_WORKFLOW: tuple[str, LinedDoc] | None = None


def load_workflow_yaml(text: str) -> LinedDoc:
    """:func:`load_yaml` for the workflow and action readers, which never change what it
    returns: the same text twice in a row is parsed once."""
    global _LAST_WORKFLOW
    last = _LAST_WORKFLOW
    if last is not None and last[0] == text:
        return last[1]
    doc = load_yaml(text)
    _LAST_WORKFLOW = (text, doc)
    return doc


MAX_DOCUMENTS = 1000  # documents read from one multi-document file


def load_yaml_all(text: str) -> list[LinedDoc]:
    """Every document of a multi-document YAML stream (``---``), empty ones left out.
    Raises :class:`DocumentError`; the alias budget is shared across the documents."""
    out: list[LinedDoc] = []
    budget = [0]
    with _reading(text) as loader:
        while loader.check_node():
            node = loader.get_node()
            if node is None:
                continue
            if len(out) >= MAX_DOCUMENTS:
                raise DocumentError(
                    f"more than {MAX_DOCUMENTS} documents",
                    line=node.start_mark.line + 1,
                    code="too-large",
                )
            lines: dict[KeyPath, int] = {}
            out.append(LinedDoc(_convert(loader, node, (), lines, budget, 0), lines))
    return out


def _scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    if node.tag in _PLAIN_TAGS:
        try:
            value = loader.construct_object(node)
        except (yaml.YAMLError, ValueError, OverflowError):
            return node.value
        if isinstance(value, (_dt.date, _dt.datetime, bytes)):
            return node.value
        return value
    return node.value  # timestamps, binary, !reset, !override, custom tags: the text


def _convert(
    loader: yaml.SafeLoader,
    node: yaml.Node,
    path: KeyPath,
    lines: dict[KeyPath, int],
    budget: list[int],
    depth: int,
) -> Any:
    budget[0] += 1
    if budget[0] > MAX_NODES:
        raise DocumentError(
            f"more than {MAX_NODES} values after expanding aliases (an alias bomb?)",
            line=node.start_mark.line + 1,
            code="too-large",
        )
    if depth > MAX_DEPTH:
        raise DocumentError(
            f"nested deeper than {MAX_DEPTH} levels (a recursive alias?)",
            line=node.start_mark.line + 1,
            code="too-deep",
        )
    lines.setdefault(path, node.start_mark.line + 1)
    if isinstance(node, yaml.ScalarNode):
        return _scalar(loader, node)
    if isinstance(node, yaml.SequenceNode):
        return [
            _convert(loader, child, (*path, i), lines, budget, depth + 1)
            for i, child in enumerate(node.value)
        ]
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        merged: list[tuple[str, Any]] = []
        for key_node, value_node in node.value:
            if key_node.tag == _MERGE:
                sources = (
                    value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
                )
                for src in sources:
                    if not isinstance(src, yaml.MappingNode):
                        raise DocumentError(
                            "merge key (<<) needs a mapping", line=src.start_mark.line + 1
                        )
                    value = _convert(loader, src, path, lines, budget, depth + 1)
                    merged.extend(value.items())
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                raise DocumentError(
                    "a mapping key must be a plain value", line=key_node.start_mark.line + 1
                )
            key = _scalar(loader, key_node)
            key = "null" if key is None else str(key).lower() if isinstance(key, bool) else str(key)
            if key in out:
                raise DocumentError(
                    f"duplicate key {key!r}",
                    line=key_node.start_mark.line + 1,
                    code="duplicate-key",
                )
            key_path = (*path, key)
            lines[key_path] = key_node.start_mark.line + 1
            out[key] = _convert(loader, value_node, key_path, lines, budget, depth + 1)
        for key, value in merged:
            out.setdefault(key, value)  # explicit keys win over merged ones
        return out
    raise DocumentError(f"unexpected YAML node {type(node).__name__}")  # pragma: no cover

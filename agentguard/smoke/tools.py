"""A stdio server's ``tools/list`` answer made into a bounded :class:`ToolSnapshot`.

The answer is the server's: hostile. Only a tool's name, description, input schema and
the three annotations of :data:`~agentguard.facts.mcp_tools.HINTS` are kept (a hint that
is not a JSON boolean is not a hint). Each is bounded by its cap, and the digests are
over the whole values, so a change past a cap is still a change. Text is redacted before
it is kept: the snapshot is written into ``mcp.lock.json``, a committed file, and a
description that holds a token would put the token in the repository.
"""

from __future__ import annotations

import json

from agentguard import redact
from agentguard.facts.mcp_tools import (
    HINTS,
    MAX_DESCRIPTION,
    MAX_NAME,
    MAX_NOTES,
    MAX_SCHEMA,
    MAX_SNAPSHOT_BYTES,
    MAX_TOOLS,
    MAX_VERSION,
    ToolRecord,
    ToolSnapshot,
    canonical,
    set_digest,
    sha256,
    tool_digest,
)

# What an input schema nested past what the encoder writes is digested as: a tool with one
# is still recorded (its name, description and hints compared), never the whole answer
# dropped as "did not answer", which let a server evade the comparison at will.
UNREADABLE = "(an input schema nested past what is read)"


def _tool(entry: dict[str, object]) -> tuple[ToolRecord, list[str]]:
    cut: list[str] = []
    raw_name = str(entry["name"])
    name = redact.text(raw_name)
    if len(name) > MAX_NAME:
        cut.append(f"a tool's name: {len(name)} characters, {MAX_NAME} kept")
        name = name[:MAX_NAME]
    description = entry.get("description")
    text = description if isinstance(description, str) else None
    schema = entry.get("inputSchema")
    annotations = entry.get("annotations")
    hints = tuple(
        (h, v)
        for h in HINTS
        if isinstance(annotations, dict) and isinstance(v := annotations.get(h), bool)
    )
    unreadable = False
    try:
        full = None if schema is None else canonical(schema)
    except RecursionError:  # nested past what the encoder writes: the digest says so
        full, schema, unreadable = None, UNREADABLE, True
        cut.append(f"the input schema of {name!r}: nested past what is read, not kept")
    digest = tool_digest(raw_name, text, schema, hints)
    kept, description_digest = text, None
    if text is not None:
        kept = redact.text(text)
        if len(kept) > MAX_DESCRIPTION:
            cut.append(
                f"the description of {name!r}: {len(kept)} characters, {MAX_DESCRIPTION} kept"
            )
            kept = kept[:MAX_DESCRIPTION]
        if kept != text:
            description_digest = sha256(text)
    if name != raw_name and description_digest is None:
        # the name shown is not the one sent (cut, or a secret masked): the record is not
        # the whole tool, and the description's digest marks it so (the lock reader then
        # does not recompute the tool's digest from what it shows)
        description_digest = sha256(text or "")
    schema_text, schema_digest = None, None
    if unreadable:
        schema_digest = sha256(UNREADABLE)
    elif full is not None:
        try:
            shown: str | None = canonical(redact.scrub(schema))
        except RecursionError:  # (the redactor recurses deeper than the encoder)
            shown = None
            cut.append(
                f"the input schema of {name!r}: nested past what the redactor reads, not kept"
            )
        if shown is not None and len(shown) > MAX_SCHEMA:
            cut.append(
                f"the input schema of {name!r}: {len(shown)} characters, not kept "
                f"(over {MAX_SCHEMA})"
            )
        elif shown is not None:
            schema_text = shown
        if schema_text != full:
            schema_digest = sha256(full)
    record = ToolRecord(name, kept, schema_text, hints, digest, description_digest, schema_digest)
    return record, cut


def snapshot_of(listed: object, server_version: object = None) -> ToolSnapshot | None:
    """The snapshot of a ``tools/list`` result's ``tools`` (None: not a list)."""
    if not isinstance(listed, list):
        return None
    records: list[ToolRecord] = []
    digests: list[str] = []
    cut: list[str] = []
    odd = 0
    for entry in listed:
        if isinstance(entry, dict) and isinstance(entry.get("name"), str) and entry["name"]:
            record, why = _tool(entry)
            records.append(record)
            digests.append(record.digest)
            cut += why
        else:  # not a tool: counted, and its digest is part of the set's
            odd += 1
            digests.append(sha256(canonical(entry)))
    if odd:
        cut.append(f"{odd} entr{'y is' if odd == 1 else 'ies are'} not a tool (no name): not kept")
    records.sort(key=lambda r: (r.name, r.digest))
    count = len(records)
    if count > MAX_TOOLS:
        cut.append(
            f"tools: {len(records)} listed, the first {MAX_TOOLS} by name kept (the rest are "
            "in the digest only)"
        )
        records = records[:MAX_TOOLS]
    size, kept = 0, 0
    for r in records:  # written with every non-ASCII escaped: an upper bound of the bytes
        size += len(json.dumps([r.name, r.description, r.input_schema])) + 256
        if size > MAX_SNAPSHOT_BYTES:
            break
        kept += 1
    if kept < len(records):
        cut.append(
            f"tools: {kept} kept, by name: the next would take the recorded answer past "
            f"{MAX_SNAPSHOT_BYTES // 1024} KiB (the rest are in the digest only)"
        )
        records = records[:kept]
    if len(cut) > MAX_NOTES:  # (the lock reader holds the file to the same bound)
        cut = [*cut[: MAX_NOTES - 1], f"and {len(cut) - MAX_NOTES + 1} more cut values"]
    version = None
    if isinstance(server_version, str) and server_version:
        version = redact.text(server_version)[:MAX_VERSION]
    return ToolSnapshot(
        tools=tuple(records),
        digest=set_digest(digests),
        count=count,
        truncated=tuple(cut),
        server_version=version,
        not_tools=odd,
    )

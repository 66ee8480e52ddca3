"""What to do instead, for a failed source whose gatherer named no remedy of its own.

Every failed source says what to do about it (the promise: a failure is never left as a
bare error). Gatherers that know better pass their own ``remedy``; this table is the
fallback by stable ``error_code``, exact codes first, then code prefixes.
"""

from __future__ import annotations

_REBUILD_ARCHIVE = (
    "Re-create the saved image from the engine (`docker save -o image.tar IMAGE`) and "
    "inspect it again; do not run an image whose saved form is damaged."
)
_ALTERED = (
    "Do not run this image: its content does not match the digests it carries. Rebuild it "
    "or pull it again from a registry you trust."
)
_HOSTILE_ENTRY = (
    "Treat the image as hostile (an entry leads outside the image root) and rebuild it from "
    "a Dockerfile you trust."
)
_CHECK_PATH = "Check the path and its permissions, then re-run."

EXACT: dict[str, str] = {
    "truncated": "The data is cut short: re-create the file (or re-run while the engine is "
    "up) and inspect it again.",
    "corrupt-tar": _REBUILD_ARCHIVE,
    "corrupt-gzip": _REBUILD_ARCHIVE,
    "corrupt-zstd": _REBUILD_ARCHIVE,
    "blob-missing": _REBUILD_ARCHIVE,
    "invalid-manifest": _REBUILD_ARCHIVE,
    "invalid-index": _REBUILD_ARCHIVE,
    "invalid-config": _REBUILD_ARCHIVE,
    "invalid-json": _REBUILD_ARCHIVE,
    "layout-unknown": "Pass a `docker save` tarball or an OCI image layout (folder or tar).",
    "no-image": _REBUILD_ARCHIVE,
    "digest-unsupported": _REBUILD_ARCHIVE,
    "digest-mismatch": _ALTERED,
    "diff-id-mismatch": _ALTERED,
    "diff-ids-mismatch": _ALTERED,
    "entry-name-rejected": _HOSTILE_ENTRY,
    "link-outside-image": _HOSTILE_ENTRY,
    "platform-not-found": "Name the image to read with --platform os/arch (e.g. linux/amd64).",
    "platform-ambiguous": "Name the image to read with --platform os/arch[/variant].",
    "platform-invalid": "Write --platform as os/arch[/variant], e.g. linux/arm64/v8.",
    "stream-order": "Save the image to a file (`docker save -o image.tar IMAGE`) and inspect "
    "the file.",
    "stream-read-error": "Check that the engine is up and re-run.",
    "read-error": "Check the disk and the file, then re-run.",
    "spool-failed": "Free space in the temporary folder (TMPDIR), then re-run.",
    "workdir-symlink": "Inspect the running container instead (the engine follows the link), "
    "or make WORKDIR a real folder.",
    "metadata-unreadable": "Reinstall the package in the image from a wheel; its METADATA "
    "could not be read, so its version is unknown.",
    "metadata-link": "Reinstall the package in the image from a wheel; its METADATA is a link.",
    "link-content-unavailable": "Copy the file itself into the image instead of a hard link to it.",
    "archive-unreadable": _CHECK_PATH,
    "file-unreadable": _CHECK_PATH,
    "folder-unreadable": _CHECK_PATH,
    "hash-mismatch": "Do not install from this index until its file matches the hash it lists; "
    "re-run later or use another index.",
    "bad-wheel": "Use another version of the package (its wheel is not a valid zip with one "
    "METADATA), or report it to the package's maintainers.",
    "lock-busy": "Wait for the other `agentguard lock` on this project to finish, then re-run.",
    "lockfile-write-failed": "Free disk space or fix the folder's permissions, then re-run.",
    "internal-error": "Report it as a bug (set AGENTGUARD_DEBUG=1 for the traceback); the "
    "other results are still reported.",
    "not-found": "Check the name, then re-run.",
    "deadline-exceeded": "Check the index (a slow or stalled one holds the run), or give the "
    "run more time with --timeout, then re-run.",
    "index-auth-failed": "Give the index's login (in the --index-url as user:password@, in "
    "netrc, or in the keyring with UV_KEYRING_PROVIDER=subprocess), then re-run.",
    "index-bad-url": "Do not lock against this index: its pages send agentguard to files "
    "elsewhere. If that other host is trusted, name it in AGENTGUARD_INDEX_HOSTS.",
    "too-many-requirements": "Treat the package as hostile: its metadata lists more "
    "requirements than any real package; pick another version or index.",
    "lock-switch-interrupted": "Run `agentguard lock` once: it finishes the interrupted "
    "write of the two lock files (or re-check out both files).",
}

PREFIXES: tuple[tuple[str, str], ...] = (
    (
        "cap-",
        "Treat the input as hostile, or trim it: agentguard stops at this cap to bound time "
        "and memory, and did not read past it.",
    ),
    ("index-", "Check the package index (or --index-url) and the network, then re-run."),
    ("engine-", "Check that the Docker engine is up and DOCKER_HOST points at it, then re-run."),
    ("lockfile-", "Fix or delete the broken lock files, then re-run `agentguard lock`."),
    (
        "resolver-",
        "Run the resolver command shown in the report by hand to see its whole error, then "
        "fix the requirements or the index.",
    ),
)

DEFAULT = (
    "Fix what the reason names (or exclude the file), then re-run; until then the report is "
    "incomplete."
)


def remedy_for(error_code: str | None) -> str:
    """The fallback remedy for ``error_code`` (never empty)."""
    code = error_code or ""
    if code in EXACT:
        return EXACT[code]
    for prefix, text in PREFIXES:
        if code.startswith(prefix):
            return text
    return DEFAULT

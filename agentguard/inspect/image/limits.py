"""Caps that bound what reading one (untrusted) image may cost, and the read errors."""

from __future__ import annotations

from dataclasses import dataclass

KiB = 1024
MiB = 1024 * KiB
GiB = 1024 * MiB


@dataclass(frozen=True)
class Limits:
    """Every cap is a promise: hitting one is a failed source naming it, never a silent cut."""

    max_image_bytes: int = 8 * GiB  # layer bytes traversed (decompressed), whole image
    max_stream_bytes: int = 16 * GiB  # a one-pass stream itself (decompressed when compressed)
    max_entries_per_layer: int = 1_000_000
    max_entries_per_image: int = 4_000_000
    max_outer_entries: int = 200_000  # members of the saved tarball itself
    max_workdir_entries: int = 5000  # listed in ImageFacts.workdir_entries (then truncated)
    max_tracked_entries: int = 50_000  # workdir entries held while layers are merged
    max_file_bytes: int = 256 * KiB  # one collected file
    max_content_bytes: int = 16 * MiB  # all collected files together
    max_code_files: int = 300  # *.py / *.ts / *.js / *.mjs agent code under the workdir
    max_json_bytes: int = 8 * MiB  # index.json, manifest.json, manifests, configs
    max_header_bytes: int = 1 * MiB  # one PAX / GNU long-name header body
    max_zstd_window: int = 128 * MiB  # zstd's own default decoder limit
    max_index_depth: int = 4  # nested OCI indexes
    max_link_hops: int = 8  # symlinks between members of the saved tarball
    # symlinks and folders of the layers, held to resolve paths as the kernel does
    max_link_names: int = 200_000
    max_entry_sources: int = 50  # per-entry failed sources before they are summarised
    verify_layer_digests: bool = True  # manifests and configs are always verified


DEFAULT_LIMITS = Limits()


class ReadFailure(Exception):
    """A read that cannot go on; ``code`` is the stable ``Source.error_code``."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


def truncated(reason: str) -> ReadFailure:
    return ReadFailure("truncated", reason)


def cap_hit(cap: str, reason: str) -> ReadFailure:
    return ReadFailure(f"cap-{cap}", reason)

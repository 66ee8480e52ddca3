"""Package names as the index spells them (PEP 503), without importing packaging."""

from __future__ import annotations


def canonical_name(name: str) -> str:
    """A package name as ``packaging.utils.canonicalize_name`` spells it (PEP 503): here,
    so that loading the configuration does not import packaging's wheel-tag module
    (logging, sysconfig...) before every scan."""
    value = name.lower().replace("_", "-").replace(".", "-")
    while "--" in value:
        value = value.replace("--", "-")
    return value

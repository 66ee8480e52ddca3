"""``check --base REF``: what a change adds and removes, compared by stable fingerprint
(findings), by package (locks) and, once the capability model lands, by agent."""

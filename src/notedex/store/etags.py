"""When a file counts as unchanged. Stdlib only: the CLI's freshness check imports this."""

from __future__ import annotations

# Coarse file systems (FAT 2 s, HFS+ 1 s) can hide a write made just after we read a file:
# a file modified this close to our last read is "racy" and its content is compared.
RACY_WINDOW_NS = 2_000_000_000

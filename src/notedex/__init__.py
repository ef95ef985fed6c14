"""notedex: an always-fresh SQLite index of a Markdown (Obsidian) vault."""

__version__ = "0.1.0"

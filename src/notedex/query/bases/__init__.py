"""Obsidian Bases without the app: the expression language (``syntax``), its values and
functions (``values``, ``functions``) and the evaluation of a base's views (``run``).
SEMANTICS 15 is the spec; stdlib only (the query path)."""

"""A Markdown body -> its links, tags, headings and block ids (SEMANTICS 3, 4, 6, 10), pure and
offset-true.

The package splits the work by construct: ``blocks`` (code, math, HTML blocks, table rows),
``inline`` (escapes, code spans, inline math, and the masking that keeps offsets), ``links``,
``tags`` and ``headings``; ``scan`` puts them together (``scan_body``). Callers import from the
module that defines a name. This file imports nothing: ``query.mentions`` masks text with
``inline`` and ``links`` alone, without the parse model's dataclasses (ARCHITECTURE, the
mentions budget). No I/O (STYLE 9).
"""

"""What every query's output needs: the JSON writer, the text ``Renderer`` and lookup's text.

Split from ``query.render`` (issue 11): ``lookup`` is the query people repeat most, and the
rest of the renderers (health, scan, show, status, ...) were a module load of every lookup.
``query.render`` re-exports these names, so both spellings stay valid.
"""

import os
import sys

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TextIO


def emit_json(data: "Any", out: "TextIO | None" = None) -> None:
    out = out or sys.stdout
    if out.isatty():
        import json  # for people: indented (json's pure-Python path, fine at terminal sizes)

        out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        out.write(compact_json(data))
    out.write("\n")


def compact_json(data: "Any") -> str:
    """``json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)``, sooner.

    What agents read. ``import json`` brings ``re`` and its dependencies, about 5 ms of every
    ``--json`` query here, to encode with a C function ``_json`` exposes directly. So call
    that function; a test pins byte-equality with ``json.dumps``, and any interpreter whose
    ``_json`` differs falls back to ``json.dumps`` itself.
    """
    return compact_encoder()(data)


def compact_encoder() -> "Callable[[Any], str]":
    """``compact_json`` as a function made once, for writers that encode row after row."""
    try:
        from _json import encode_basestring, make_encoder

        encode = make_encoder(None, str, encode_basestring, None, ":", ",", False, False, True)
        encode([], 0)  # an interpreter whose make_encoder differs raises TypeError here
        return lambda data: "".join(encode(data, 0))
    except (ImportError, TypeError):
        import json

        return lambda data: json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


def styled(out: "TextIO", color: str = "auto") -> bool:
    """Whether text output gets bold and terminal hyperlinks: the one rule (issue 34).

    ``--color always`` or ``never`` decides; ``auto`` is a terminal that is not ``TERM=dumb``,
    unless ``$NO_COLOR`` is set to anything but the empty string (no-color.org)."""
    if color != "auto":
        return color == "always"
    return out.isatty() and os.environ.get("TERM") != "dumb" and not os.environ.get("NO_COLOR")


_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escaped(text: str) -> str:
    """``text`` with its control characters written out (``\\n``, ``\\t``, ``\\x07``,
    ``\\u2028``): a name in text output stays on its line and sends the terminal nothing
    (issue 34). The one rule for every name the text output prints (``Renderer.path`` and
    ``Renderer.name``); ``--json``, ``--paths`` and ``-0`` keep names as they are."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code < 0x20 or 0x7F <= code < 0xA0:
            out.append(_NAMED.get(ch) or f"\\x{code:02x}")
        elif ch in "\u2028\u2029":
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    return "".join(out)


class Renderer:
    """Writes aligned, readable text; paths become terminal hyperlinks when ``styled``."""

    def __init__(
        self, vault: str | os.PathLike[str], out: "TextIO | None" = None, color: str = "auto"
    ) -> None:
        self.vault = os.fspath(vault)
        self.out = out or sys.stdout
        self.links = styled(self.out, color)
        """Bold and hyperlinks (``styled``): every style of the text output follows it."""

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def name(self, text: str) -> str:
        """A name (a title, a link target) as the text output prints it: ``escaped``."""
        return escaped(text)

    def path(self, rel: str, line: int | None = None, column: int | None = None) -> str:
        label = escaped(rel) if line is None else f"{escaped(rel)}:{line}:{column}"
        if not self.links:
            return label
        from urllib.parse import quote

        url = "file://" + quote(os.path.join(self.vault, rel))
        return f"\x1b]8;;{url}\x1b\\{label}\x1b]8;;\x1b\\"

    def table(self, headers: "Sequence[str]", rows: "Iterable[Sequence[str]]") -> None:
        """Aligned columns; on a terminal the widest columns but the first are cut, with ``…``,
        until a row fits its width."""
        rows = [[str(c) for c in row] for row in rows]
        if not rows:
            return
        widths = [max(len(h), *(_width(r[i]) for r in rows)) for i, h in enumerate(headers)]
        _fit(widths, self.columns())
        self.line("  ".join(_clip(h, w) for h, w in zip(headers, widths)).rstrip())
        for row in rows:
            self.line("  ".join(_clip(c, w) for c, w in zip(row, widths)).rstrip())

    def columns(self) -> int | None:
        """On a terminal, its width (``$COLUMNS`` first, as shutil reads it); None on a pipe,
        whose reader gets whole lines."""
        if not self.out.isatty():
            return None
        try:
            return int(os.environ["COLUMNS"])
        except (KeyError, ValueError):
            pass
        try:
            return os.get_terminal_size(self.out.fileno()).columns
        except (OSError, ValueError, AttributeError):
            return None

    def section(self, title: str, count: int) -> None:
        self.line()
        self.line(f"{title} ({count})")


MIN_COLUMN = 6  # a column is never cut narrower than this


def _fit(widths: list[int], limit: int | None) -> None:
    """Narrow the widest columns (never the first, the path) until the row fits ``limit``."""
    if limit is None:
        return
    excess = sum(widths) + 2 * (len(widths) - 1) - limit
    while excess > 0:
        widest = max(range(1, len(widths)), key=lambda i: widths[i], default=None)
        if widest is None or widths[widest] <= MIN_COLUMN:
            return
        widths[widest] -= 1
        excess -= 1


def _clip(text: str, width: int) -> str:
    """``text`` padded to ``width`` cells, or cut to ``width - 1`` and ``…``."""
    shown = _width(text)
    if shown <= width or "\x1b" in text:
        return text + " " * (width - shown)
    import unicodedata

    cut, used = [], 0
    for ch in text:
        cells = 2 if unicodedata.east_asian_width(ch) in "WF" else 1
        if used + cells > width - 1:
            break
        cut.append(ch)
        used += cells
    return "".join(cut) + "…" + " " * (width - 1 - used)


def _width(text: str) -> int:
    """Display width: East Asian wide characters take two cells; escape codes none."""
    import unicodedata

    if "\x1b" in text:
        text = text.split("\x1b\\", 1)[-1].split("\x1b]8;;", 1)[0]
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def plural(count: int, word: str, words: str | None = None) -> str:
    """``1 orphan``, ``2 orphans``: the count and the word in the number it needs."""
    return f"{count} {word if count == 1 else (words or word + 's')}"


def render_lookup(r: Renderer, data: "dict[str, Any]") -> None:
    terms = ", ".join(data["terms"]) or "-"
    r.line(f"terms: {terms}   stage: {data['stage']}")
    for rewrite in data.get("rewritten", ()):
        r.line(f"read {rewrite['term']!r} as {rewrite['as']!r} ({rewrite['how']})")
    if not data["candidates"]:
        r.line(data["message"])
        return
    r.line()
    for i, c in enumerate(data["candidates"], 1):
        r.line(f"{i:>2}. {r.name(c['title'])}  {r.path(c['path'])}")
        hits = "; ".join(f"{term} in {', '.join(fields)}" for term, fields in c["hits"].items())
        via = c["via"]
        if via.get("seed"):
            how = f"{via['relation']}: {via['seed']}"
        elif via["stage"] == "graph_expansion":
            how = "seed (" + ", ".join(via.get("matched", [])) + ")"
        elif via["stage"] == "body":
            how = "note text"
        else:
            how = "title/tags"
        details = [f"score {c['score']:g}", how]
        if hits:
            details.append(hits)
        if c["tags"]:
            details.append("#" + " #".join(c["tags"]))
        r.line("    " + " | ".join(details))
    r.line()
    r.line(data["message"])

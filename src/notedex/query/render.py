"""Text rendering of the answers. JSON is the answer dict itself; text carries the same facts."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any, TextIO


def emit_json(data: Any, out: TextIO | None = None) -> None:
    out = out or sys.stdout
    if out.isatty():
        import json  # for people: indented (json's pure-Python path, fine at terminal sizes)

        out.write(json.dumps(data, ensure_ascii=False, indent=2, default=str))
    else:
        out.write(compact_json(data))
    out.write("\n")


def compact_json(data: Any) -> str:
    """``json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)``, sooner.

    What agents read. ``import json`` brings ``re`` and its dependencies, about 5 ms of every
    ``--json`` query here, to encode with a C function ``_json`` exposes directly. So call
    that function; a test pins byte-equality with ``json.dumps``, and any interpreter whose
    ``_json`` differs falls back to ``json.dumps`` itself.
    """
    try:
        from _json import encode_basestring, make_encoder

        encode = make_encoder(None, str, encode_basestring, None, ":", ",", False, False, True)
        return "".join(encode(data, 0))
    except (ImportError, TypeError):
        import json

        return json.dumps(data, ensure_ascii=False, separators=(",", ":"), default=str)


class Renderer:
    """Writes aligned, readable text; paths become terminal hyperlinks on a TTY."""

    def __init__(self, vault: str | os.PathLike[str], out: TextIO | None = None) -> None:
        self.vault = os.fspath(vault)
        self.out = out or sys.stdout
        self.links = self.out.isatty() and os.environ.get("TERM") != "dumb"

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def path(self, rel: str, line: int | None = None, column: int | None = None) -> str:
        label = rel if line is None else f"{rel}:{line}:{column}"
        if not self.links:
            return label
        from urllib.parse import quote

        url = "file://" + quote(os.path.join(self.vault, rel))
        return f"\x1b]8;;{url}\x1b\\{label}\x1b]8;;\x1b\\"

    def table(self, headers: Sequence[str], rows: Iterable[Sequence[str]]) -> None:
        rows = [[str(c) for c in row] for row in rows]
        if not rows:
            return
        widths = [max(len(h), *(_width(r[i]) for r in rows)) for i, h in enumerate(headers)]
        self.line("  ".join(h.ljust(w) for h, w in zip(headers, widths)).rstrip())
        for row in rows:
            cells = [c + " " * (w - _width(c)) for c, w in zip(row, widths)]
            self.line("  ".join(cells).rstrip())

    def section(self, title: str, count: int) -> None:
        self.line()
        self.line(f"{title} ({count})")


def _width(text: str) -> int:
    """Display width: East Asian wide characters take two cells; escape codes none."""
    import unicodedata

    if "\x1b" in text:
        text = text.split("\x1b\\", 1)[-1].split("\x1b]8;;", 1)[0]
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in text)


def _join(values: Sequence[str] | None) -> str:
    return ", ".join(values) if values else "-"


def render_scan(r: Renderer, data: dict[str, Any]) -> None:
    # Every JSON field has a column: text and JSON carry the same facts.
    r.table(
        ("PATH", "TITLE", "ID", "TYPE", "STATUS", "TAGS", "ALIASES"),
        (
            (
                r.path(n["path"]),
                n["title"],
                n["id"] or "-",
                n["type"] or "-",
                n["status"] or "-",
                _join(n["tags"]),
                _join(n["aliases"]),
            )
            for n in data["notes"]
        ),
    )
    if data["errors"]:
        r.section("Errors", data["errorCount"])
        for e in data["errors"]:
            r.line(f"  {r.path(e['path'])}: {e['message']}")
    r.line()
    r.line(f"{data['noteCount']} notes, {data['errorCount']} errors")


def render_health(r: Renderer, data: dict[str, Any]) -> None:
    r.section("Broken links", data["brokenLinkCount"])
    for b in data["brokenLinks"]:
        text = " ".join(b["text"].split("\n"))  # a Markdown link's text may wrap: one line each
        hint = f"; did you mean {b['suggestion']} ({b['reason']})?" if b["suggestion"] else ""
        r.line(
            f"  {r.path(b['source'], b['line'], b['column'])}  {text}  -> {b['target']} "
            f"(no such note{hint})"
        )
    r.section("Broken anchors: no such heading or block", data["brokenAnchorCount"])
    for a in data["brokenAnchors"]:
        text = " ".join(a["text"].split("\n"))
        hint = f"; did you mean {a['suggestion']} ({a['reason']})?" if a["suggestion"] else ""
        r.line(
            f"  {r.path(a['source'], a['line'], a['column'])}  {text}  -> {a['target']} "
            f"has no {a['kind']} {a['subpath']}{hint}"
        )
    r.section("Orphans: no links in or out", data["orphanCount"])
    for o in data["orphanNotes"]:
        r.line(f"  {r.path(o['path'])}")
    r.section("Unlinked: nothing links here", len(data["unlinkedNotes"]))
    for o in data["unlinkedNotes"]:
        r.line(f"  {r.path(o['path'])}")
    r.section("Dead ends: no links out", data["deadEndCount"])
    for o in data["deadEnds"]:
        r.line(f"  {r.path(o['path'])}")
    r.section("Unused attachments: no note links to or embeds them", data["unusedAttachmentCount"])
    for o in data["unusedAttachments"]:
        r.line(f"  {r.path(o['path'])}")
    r.section("Warnings", len(data["warnings"]))
    for w in data["warnings"]:
        r.line(f"  {r.path(w['path'])}: {w['message']}")
    r.section("Errors", len(data["errors"]))
    for e in data["errors"]:
        r.line(f"  {r.path(e['path'])}: {e['message']}")
    r.line()
    verdict = "links are broken" if data["brokenLinkCount"] else "no broken links"
    if data["brokenAnchorCount"]:
        verdict += ", anchors are broken"
    r.line(
        f"{data['brokenLinkCount']} broken links, {data['brokenAnchorCount']} broken anchors, "
        f"{data['orphanCount']} orphans, "
        f"{len(data['unlinkedNotes'])} unlinked, {data['deadEndCount']} dead ends, "
        f"{data['unusedAttachmentCount']} unused attachments, {len(data['warnings'])} warnings, "
        f"{len(data['errors'])} errors: {verdict}"
    )


def render_tags(r: Renderer, data: dict[str, Any]) -> None:
    """The tag pane: one tag a line, nested tags indented under their parents."""
    for t in data["tags"]:
        r.line(f"{'  ' * t['depth']}#{t['tag']}  {t['count']}")
    r.line()
    r.line(f"{data['tagCount']} tags on {data['taggedNoteCount']} notes")


def render_mentions(r: Renderer, data: dict[str, Any]) -> None:
    """One unlinked mention a line, where it is and what it says."""
    for m in data["mentions"]:
        r.line(f"  {r.path(m['source'], m['line'], m['column'])}  {m['text']}")
    r.line()
    more = "" if data["complete"] else " (too many candidates: the first by path)"
    r.line(
        f"{data['mentionCount']} unlinked mentions of {data['title']} in "
        f"{data['sourceCount']} notes{more}"
    )


def render_graph(r: Renderer, data: dict[str, Any]) -> None:
    kinds: dict[str, int] = {}
    for node in data["nodes"]:
        kinds[node["kind"]] = kinds.get(node["kind"], 0) + 1
    for edge in data["edges"]:
        times = f" (x{edge['count']})" if edge["count"] > 1 else ""
        r.line(f"{edge['source']} -> {edge['target']}{times}")
    r.line()
    summary = ", ".join(f"{v} {k}" for k, v in sorted(kinds.items()))
    r.line(f"{len(data['nodes'])} nodes ({summary}), {len(data['edges'])} edges")


def render_show(r: Renderer, data: dict[str, Any]) -> None:
    r.line(f"{data['title']}  ({r.path(data['path'])})")
    fields = [
        ("id", data["id"]),
        ("type", data["type"]),
        ("status", data["status"]),
        ("tags", _join(data["tags"])),
        ("aliases", _join(data["aliases"])),
        ("modified", data["modified"]),
    ]
    for name, value in fields:
        r.line(f"  {name:<9}{value if value is not None else '-'}")
    r.section("Links", len(data["links"]))
    for link in data["links"]:
        target = link["target"] or (f"BROKEN ({link['key']})" if link["broken"] else "(this note)")
        r.line(f"  {link['line']}:{link['column']}  {link['text']}  -> {target}")
    r.section("Backlinks", len(data["backlinks"]))
    for b in data["backlinks"]:
        r.line(f"  {r.path(b['source'], b['line'], b['column'])}  {b['text']}")
    r.section("Outline", len(data["headings"]) + len(data["blockIds"]))
    outline = [(h["line"], f"{'#' * h['level']} {h['text']}") for h in data["headings"]]
    outline += [(b["line"], f"^{b['id']}") for b in data["blockIds"]]
    for line, text in sorted(outline):
        r.line(f"  {line}  {text}")
    for kind in ("warnings", "errors"):
        if data[kind]:
            r.section(kind.capitalize(), len(data[kind]))
            for p in data[kind]:
                r.line(f"  {p['message']}")
    if "body" in data:
        r.line()
        r.line("-" * 60)
        r.out.write(data["body"] if data["body"].endswith("\n") else data["body"] + "\n")
    if "lines" in data:
        r.section("Lines", len(data["lines"]))
        width = len(str(data["lineCount"]))
        for numbered in data["lines"]:
            r.line(f"  {numbered['line']:>{width}}  {numbered['text']}")


def render_quote(r: Renderer, data: dict[str, Any]) -> None:
    """``found PATH:LINE:COLUMN`` and the passage, or ``not found`` and the closest one."""
    passage = data["match"] or data["closest"]
    if data["found"]:
        r.line(f"found  {r.path(data['path'], passage['line'], passage['column'])}")
    else:
        r.line(f"not found in {r.path(data['path'])}")
        if passage is None:
            r.line("  no passage of the note is like it")
            return
        where = r.path(data["path"], passage["line"], passage["column"])
        r.line(f"closest  {where}  (similarity {passage['similarity']:.2f})")
    for text in passage["text"].splitlines():
        r.line(f"  > {text}")


def render_quote_check(r: Renderer, data: dict[str, Any]) -> None:
    for result in data["results"]:
        if result["error"] is not None:
            r.line(f"error  {result['path']}: {result['error']}")
        else:
            render_quote(r, result)
    r.line()
    r.line(f"{data['found']} of {data['total']} quotes found, {data['notFound']} not found")


def render_status(r: Renderer, data: dict[str, Any]) -> None:
    daemon = data["daemon"]
    running = (
        f"running (pid {daemon['pid']}, since {daemon['since']})"
        if daemon["running"]
        else "not running"
    )
    counts = data["counts"]
    rows = [
        ("vault", data["vault"]),
        ("index", data["db"]),
        ("schema", f"v{data['schemaVersion']}"),
        (
            "notes",
            f"{counts['notes']} ({counts['excludedNotes']} more in Excluded files)"
            if counts["excludedNotes"]
            else counts["notes"],
        ),
        ("attachments", counts["attachments"]),
        ("links", f"{counts['links']} ({counts['brokenLinks']} broken)"),
        ("problems", f"{counts['errors']} errors, {counts['warnings']} warnings"),
        ("last indexed", data["lastIndexed"] or "never"),
        ("last batch", data["lastBatch"] or "-"),
        ("daemon", running),
        ("index size", f"{data['dbBytes'] / 1e6:.1f} MB"),
    ]
    for name, value in rows:
        r.line(f"{name:<13}{value}")


def render_captured(r: Renderer, data: dict[str, Any]) -> None:
    r.line(f"captured {r.path(data['path'])} (id {data['id']})")


def render_lookup(r: Renderer, data: dict[str, Any]) -> None:
    terms = ", ".join(data["terms"]) or "-"
    r.line(f"terms: {terms}   stage: {data['stage']}")
    if not data["candidates"]:
        r.line(data["message"])
        return
    r.line()
    for i, c in enumerate(data["candidates"], 1):
        r.line(f"{i:>2}. {c['title']}  {r.path(c['path'])}")
        hits = "; ".join(f"{term} in {', '.join(fields)}" for term, fields in c["hits"].items())
        via = c["via"]
        if via.get("seed"):
            how = f"{via['relation']}: {via['seed']}"
        elif via["stage"] == "graph_expansion":
            how = "seed (" + ", ".join(via.get("matched", [])) + ")"
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


def render_eval(r: Renderer, data: dict[str, Any]) -> None:
    for case in data["cases"]:
        mark = "PASS" if case["passed"] else "FAIL"
        rank = case["bestRank"] if case["bestRank"] is not None else "-"
        extra = []
        if case["hardNegativeMatches"]:
            extra.append("hard negatives: " + ", ".join(case["hardNegativeMatches"]))
        if case["orderOk"] is False:
            extra.append("order wrong")
        tail = f"  ({'; '.join(extra)})" if extra else ""
        r.line(
            f"{mark}  {case['score']:.2f}  rank {rank!s:>2}  {case['stage']:<15} {case['name']}{tail}"
        )
    r.line()

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    r.line(
        f"{data['passed']}/{data['total']} passed, mean score {data['meanScore']:.2f}, "
        f"hit@1 {pct(data['hitAt1'])}, hit@3 {pct(data['hitAt3'])}, MRR {pct(data['mrr'])}"
    )

"""Text rendering of the answers. JSON is the answer dict itself; text carries the same facts.

The JSON writer, the ``Renderer`` and lookup's text live in ``query.output`` (what a lookup
loads); they are re-exported here, where every other command's renderer is.

Over 400 lines on purpose: every command's text renderer side by side, on one ``Renderer``.
"""

import sys

from notedex.codes import FINDINGS, LINK_FINDINGS
from notedex.query.output import (
    MIN_COLUMN,
    Renderer,
    compact_json,
    emit_json,
    escaped,
    plural,
    render_lookup,
)

__all__ = ["MIN_COLUMN", "Renderer", "compact_json", "emit_json", "plural", "render_lookup"]

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Sequence
    from typing import Any, TextIO


def _join(values: "Sequence[str] | None") -> str:
    return ", ".join(values) if values else "-"


SCAN_HEADERS = ("PATH", "TITLE", "ID", "TYPE", "STATUS", "TAGS", "ALIASES")


def scan_cells(n: "Any", r: Renderer) -> "tuple[str, ...]":
    """One note's row of the scan table (a dict or row with scan's JSON keys)."""
    return (
        r.path(n["path"]),
        r.name(n["title"]),
        str(n["id"] or "-"),
        str(n["type"] or "-"),
        str(n["status"] or "-"),
        _join(n["tags"]),
        _join(n["aliases"]),
    )


def render_scan(r: Renderer, data: "dict[str, Any]") -> None:
    # Every JSON field has a column: text and JSON carry the same facts.
    r.table(SCAN_HEADERS, (scan_cells(n, r) for n in data["notes"]))
    if data["errors"]:
        r.section("Errors", data["errorCount"])
        for e in data["errors"]:
            r.line(f"  {r.path(e['path'])}: {e['message']}")
    r.line()
    r.line(scan_summary(data["noteCount"], data["errorCount"]))


def scan_summary(notes: int, errors: int) -> str:
    return f"{plural(notes, 'note')}, {plural(errors, 'error')}"


HEALTH_SECTIONS = (
    ("brokenLinks", "Broken links"),
    ("brokenAnchors", "Broken anchors: no such heading or block"),
    ("orphanNotes", "Orphans: no links in or out"),
    ("unlinkedNotes", "Unlinked: nothing links here"),
    ("deadEnds", "Dead ends: no links out"),
    ("unusedAttachments", "Unused attachments: no note links to or embeds them"),
    *((finding.list_key, finding.title) for finding in LINK_FINDINGS),  # declared (issue 33)
    ("warnings", "Warnings"),
    ("errors", "Errors"),
)
"""health's text sections in order: the list each shows, and its heading."""


_COMMENTED = "  [in-comment]"


def render_health(r: Renderer, data: "dict[str, Any]") -> None:
    if "counts" in data:  # counts by code first (issue 33)
        r.line(by_code_line(data["counts"]))
    # A paged answer (--limit/--offset) keeps the whole lists' counts where the JSON has them.
    sections = [(name, title) for name, title in HEALTH_SECTIONS if name in data]
    counts = {name: len(data[name]) for name, _ in sections}
    counts.update((f.list_key, data[f.count_key]) for f in FINDINGS if f.count_key in data)
    for name, title in sections:  # a report from before a declared list has no such list
        r.section(title, counts[name])
        for item in data[name]:
            r.line(health_line(name, item, r.path))
    r.line()
    r.line(health_summary(counts))


def by_code_line(counts: "dict[str, int]") -> str:
    """health's first line: the codes found and how many of each (issue 33)."""
    counted = [f"{code} {n}" for code, n in counts.items() if n]
    return "By code: " + (", ".join(counted) if counted else "nothing found")


def health_line(name: str, item: "Any", path: "Callable[..., str]") -> str:
    """One finding of the list ``name`` (a dict or row with its JSON keys) as a text line."""
    if name == "brokenLinks":
        text = " ".join(item["text"].split("\n"))  # a Markdown link's text may wrap: one line
        hint = (
            f"; did you mean {item['suggestion']} ({item['reason']})?" if item["suggestion"] else ""
        )
        where = path(item["source"], item["line"], item["column"])
        flag = _COMMENTED if item.get("inComment") else ""
        return f"  {where}  {text}  -> {item['target']} (no such note{hint}){flag}"
    if name == "brokenAnchors":
        text = " ".join(item["text"].split("\n"))
        hint = (
            f"; did you mean {item['suggestion']} ({item['reason']})?" if item["suggestion"] else ""
        )
        where = path(item["source"], item["line"], item["column"])
        flag = _COMMENTED if item.get("inComment") else ""
        return (
            f"  {where}  {text}  -> {item['target']} has no {item['kind']} "
            f"{item['subpath']}{hint}{flag}"
        )
    if "source" in item:  # a declared finding about one link (issue 33)
        text = " ".join(item["text"].split("\n"))
        return f"  {path(item['source'], item['line'], item['column'])}  {text}"
    if name in ("warnings", "errors"):
        return f"  {path(item['path'])}: {item['message']}"
    return f"  {path(item['path'])}"


def health_summary(counts: "dict[str, int]") -> str:
    """health's last line: every list's count, and the verdict on links and anchors."""
    verdict = "links are broken" if counts["brokenLinks"] else "no broken links"
    if counts["brokenAnchors"]:
        verdict += ", anchors are broken"
    parts = (
        plural(counts["brokenLinks"], "broken link"),
        plural(counts["brokenAnchors"], "broken anchor"),
        plural(counts["orphanNotes"], "orphan"),
        f"{counts['unlinkedNotes']} unlinked",
        plural(counts["deadEnds"], "dead end"),
        plural(counts["unusedAttachments"], "unused attachment"),
        plural(counts["warnings"], "warning"),
        plural(counts["errors"], "error"),
        *(f"{counts[f.list_key]} {f.code}" for f in LINK_FINDINGS if counts.get(f.list_key)),
    )
    return f"{', '.join(parts)}: {verdict}"


def render_tags(r: Renderer, data: "dict[str, Any]") -> None:
    """The tag pane: one tag a line, nested tags indented under their parents."""
    for t in data["tags"]:
        r.line(f"{'  ' * t['depth']}#{t['tag']}  {t['count']}")
    r.line()
    r.line(f"{plural(data['tagCount'], 'tag')} on {plural(data['taggedNoteCount'], 'note')}")


def render_tasks(r: Renderer, data: "dict[str, Any]") -> None:
    """One task a line, where it is, its status and its text as written; then the counts."""
    lines = data.get("lines")  # query.tasks.task_lines: tuples, not objects
    if lines is None:
        keys = ("path", "line", "column", "status", "text")
        lines = [[t[key] for key in keys] for t in data["tasks"]]
    if r.links:
        for path, line, column, status, text, *_ in lines:
            where = r.path(path, line, column)
            r.line(f"{where}: [{r.name(status)}] {r.name(text)}".rstrip())
    else:  # the same lines, written at once: 88,000 tasks at 100k notes (issue 32)
        r.out.write("".join([_plain_task(*row[:5]) for row in lines]))
    r.line()
    counts = data["counts"]
    r.line(
        f"{plural(data['taskCount'], 'task')}: {counts['open']} open, {counts['done']} done, "
        f"{counts['cancelled']} cancelled"
    )


def _plain_task(path: str, line: int, column: int, status: str, text: str) -> str:
    """A task's line without hyperlinks, as ``Renderer.path``/``name`` write it: a printable
    line is its own escaped form (``escaped`` changes no printable text), so only a line with
    another character (a control character, a no-break space) goes through ``escaped``."""
    plain = f"{path}:{line}:{column}: [{status}] {text}"
    if not plain.isprintable():
        plain = f"{escaped(path)}:{line}:{column}: [{escaped(status)}] {escaped(text)}"
    return plain.rstrip() + "\n"


def render_mentions(r: Renderer, data: "dict[str, Any]") -> None:
    """One unlinked mention a line, where it is and what it says."""
    for m in data["mentions"]:
        r.line(f"  {r.path(m['source'], m['line'], m['column'])}  {m['text']}")
    r.line()
    more = "" if data["complete"] else " (too many candidates: the first by path)"
    r.line(
        f"{plural(data['mentionCount'], 'unlinked mention')} of {data['title']} in "
        f"{plural(data['sourceCount'], 'note')}{more}"
    )


def render_graph(r: Renderer, data: "dict[str, Any]") -> None:
    kinds: dict[str, int] = {}
    for node in data["nodes"]:
        kinds[node["kind"]] = kinds.get(node["kind"], 0) + 1
    for edge in data["edges"]:
        times = f" (x{edge['count']})" if edge["count"] > 1 else ""
        r.line(f"{r.name(edge['source'])} -> {r.name(edge['target'])}{times}")
    r.line()
    names = {"note": "notes", "attachment": "attachments", "unresolved": "unresolved"}
    summary = ", ".join(plural(v, k, names.get(k)) for k, v in sorted(kinds.items()))
    r.line(
        f"{plural(len(data['nodes']), 'node')} ({summary}), {plural(len(data['edges']), 'edge')}"
    )


def render_dot(r: Renderer, data: "dict[str, Any]") -> None:
    """The graph in Graphviz's DOT language: notes as boxes, attachments as notes' folded
    corner, unresolved targets dashed; an edge's label is its count when above 1."""
    shapes = {"note": "box", "attachment": "note", "unresolved": "box, style=dashed"}
    r.line("digraph notedex {")
    r.line("  node [shape=box];")
    for node in data["nodes"]:
        shape = "" if node["kind"] == "note" else f", shape={shapes[node['kind']]}"
        r.line(f"  {_dot_id(node['id'])} [label={_dot_id(node['label'])}{shape}];")
    for edge in data["edges"]:
        label = f" [label={edge['count']}]" if edge["count"] > 1 else ""
        r.line(f"  {_dot_id(edge['source'])} -> {_dot_id(edge['target'])}{label};")
    r.line("}")


def _dot_id(text: str) -> str:
    """A DOT quoted string: backslashes and double quotes escaped, line breaks as \\n."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + escaped.replace("\r", "").replace("\n", "\\n") + '"'


def emit_paths(paths: "Iterable[str]", *, nul: bool, out: "TextIO | None" = None) -> None:
    """``--paths``: one vault path a line; ``-0``: each path ended by a NUL byte."""
    out = out or sys.stdout
    end = "\0" if nul else "\n"
    out.write("".join(path + end for path in paths))


def render_show(r: Renderer, data: "dict[str, Any]") -> None:
    if "lines" in data:  # --lines: only the lines, numbered as in the file (issue 34)
        width = len(str(data["lineCount"]))
        for numbered in data["lines"]:
            r.line(f"{numbered['line']:>{width}}  {numbered['text']}")
        return
    r.line(f"{r.name(data['title'])}  ({r.path(data['path'])})")
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
    for cause in data.get("staleBecause", ()):
        where = cause["path"] or "the vault folder"
        r.line(f"  {'stale?':<9}possibly: {where}: {cause['message']} (rows kept as last read)")
    r.section("Links", len(data["links"]))
    for link in data["links"]:
        target = link["target"] or (f"BROKEN ({link['key']})" if link["broken"] else "(this note)")
        r.line(f"  {link['line']}:{link['column']}  {r.name(link['text'])}  -> {r.name(target)}")
    r.section("Backlinks", len(data["backlinks"]))
    for b in data["backlinks"]:
        r.line(f"  {r.path(b['source'], b['line'], b['column'])}  {r.name(b['text'])}")
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
        if data["truncated"]:
            r.line("-" * 60)
            r.line(
                f"[truncated: the body is {data['size']} bytes with its frontmatter; see --max-bytes]"
            )


def render_quote(r: Renderer, data: "dict[str, Any]") -> None:
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


def render_quote_check(r: Renderer, data: "dict[str, Any]") -> None:
    for result in data["results"]:
        if result["error"] is not None:
            r.line(f"error  {result['path']}: {result['error']}")
        else:
            render_quote(r, result)
    r.line()
    r.line(
        f"{data['found']} of {plural(data['total'], 'quote')} found, {data['notFound']} not found"
    )


def local_time(iso: str | None) -> str | None:
    """An ISO 8601 time of the JSON as the text shows it: local time, with its offset."""
    if iso is None:
        return None
    import datetime as dt

    return dt.datetime.fromisoformat(iso).astimezone().strftime("%Y-%m-%d %H:%M:%S %z")


def render_status(r: Renderer, data: "dict[str, Any]") -> None:
    daemon = data["daemon"]
    running = (
        f"running (pid {daemon['pid']}, since {local_time(daemon['since'])})"
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
        (
            "problems",
            f"{plural(counts['errors'], 'error')}, {plural(counts['warnings'], 'warning')}",
        ),
        ("last indexed", local_time(data["lastIndexed"]) or "never"),
        ("last batch", local_time(data["lastBatch"]) or "-"),
        ("daemon", running),
        *_not_watched(daemon),
        *(
            [("rebuilding", "yes: a full index is being built to replace this one")]
            if data.get("rebuilding")
            else []
        ),
        ("index size", f"{data['dbBytes'] / 1e6:.1f} MB"),
    ]
    for name, value in rows:
        r.line(f"{name:<13}{value}")


def _not_watched(daemon: "dict[str, Any]") -> "list[tuple[str, str]]":
    """The running daemon's count of folders without a watch (changes there are seen only by
    its retries and rescans): a row when there are any."""
    count = daemon.get("foldersNotWatched")
    if not count:
        return []
    sample = ", ".join(daemon.get("notWatchedSample") or [])
    more = "..." if count > len(daemon.get("notWatchedSample") or []) else ""
    return [("not watched", f"{plural(count, 'folder')} ({sample}{more}); being retried")]


def render_captured(r: Renderer, data: "dict[str, Any]") -> None:
    r.line(f"captured {r.path(data['path'])} (id {data['id']})")


def render_eval(r: Renderer, data: "dict[str, Any]") -> None:
    for case in data["cases"]:
        mark = "PASS" if case["passed"] else "FAIL"
        rank = case["bestRank"] if case["bestRank"] is not None else "-"
        extra = []
        if case["hardNegativeMatches"]:
            extra.append("hard negatives: " + ", ".join(case["hardNegativeMatches"]))
        if case["orderOk"] is False:
            extra.append("order wrong")
        if case.get("expectsNone") and case.get("returned"):
            extra.append(f"expected no answer, got {case['returned']}")
        tail = f"  ({'; '.join(extra)})" if extra else ""
        r.line(
            f"{mark}  {case['score']:.2f}  rank {rank!s:>2}  {case['stage']:<15} {case['name']}{tail}"
        )
    r.line()

    def pct(value: float | None) -> str:
        return "-" if value is None else f"{value:.2f}"

    r.line(
        f"{data['passed']}/{data['total']} passed, mean score {data['meanScore']:.2f}, "
        f"hit@1 {pct(data['hitAt1'])}, hit@3 {pct(data['hitAt3'])}, "
        f"hit@10 {pct(data.get('hitAt10'))}, MRR {pct(data['mrr'])}"
        + (
            f", {data['noAnswerEmpty']}/{data['noAnswerCases']} no-answer questions empty"
            if data.get("noAnswerCases")
            else ""
        )
    )


def render_recent(r: Renderer, data: "dict[str, Any]") -> None:
    """`recent`: scan's columns after the time each note was modified (UTC)."""
    r.table(
        ("MODIFIED", "PATH", "TITLE", "ID", "TYPE", "STATUS", "TAGS", "ALIASES"),
        (
            (
                n["modified"],
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
    r.line()
    r.line(plural(data["noteCount"], "note"))

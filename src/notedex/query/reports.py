"""`health`: orphans, unlinked notes, dead ends, unused attachments, broken links, broken
anchors, warnings and errors (SEMANTICS 8, 10); and `tags`, the tag pane (SEMANTICS 4.10),
here rather than in a module of its own so that it costs no import but this hot-path one; and
`properties`, the properties pane (issue 32), beside it."""

from __future__ import annotations

from notedex.codes import CODES, FINDINGS, IN_COMMENT, PROBLEM_LISTS
from notedex.store import read
from notedex.store.connect import read_transaction

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Mapping
    from typing import Any

    from notedex.codes import Selection
    from notedex.query.filters import NoteFilter
    from notedex.query.output import Renderer


HEALTH_LISTS = (*(finding.list_key for finding in FINDINGS), *PROBLEM_LISTS)
"""The lists of the report, in order: what ``--limit``/``--offset`` page."""


def health(conn: sqlite3.Connection, nf: NoteFilter | None = None) -> dict[str, Any]:
    """The report; with an active ``nf``, only the findings in the notes it keeps (SEMANTICS
    14.8: unused attachments by ``--folder`` alone)."""
    report = _health(conn)
    if nf is None or not nf.active:
        return report
    with read_transaction(conn):
        kept = {r["path"] for r in read.notes(conn, nf)}
    return kept_findings(report, kept, nf)


def kept_findings(report: dict[str, Any], kept: set[str], nf: NoteFilter) -> dict[str, Any]:
    """``report`` with the findings of the notes in ``kept`` only, counts recounted."""

    def under(path: str) -> bool:
        return not nf.folders or any(
            not folder or path.startswith(folder + "/") for folder in nf.folders
        )

    out = dict(report)
    for name in HEALTH_LISTS:
        if name == "unusedAttachments":
            notes_only = nf.tags or nf.note_type or nf.where
            out[name] = [] if notes_only else [i for i in report[name] if under(i["path"])]
        else:
            out[name] = [
                item for item in report[name] if item.get("source", item.get("path")) in kept
            ]
    for finding in FINDINGS:
        if finding.count_key is not None:
            out[finding.count_key] = len(out[finding.list_key])
    out["counts"] = code_counts(out)
    return out


def _health(conn: sqlite3.Connection) -> dict[str, Any]:
    """Every list of the registry (``FINDINGS``, in its order) as the JSON objects the writer
    keeps or health's joins build (``store.health_lists.health_json_sql``), so the built report and
    the streamed one are the same objects; then the warnings, errors and counts."""
    import json  # not on the streamed path (re, json)

    from notedex.store import health_lists

    with read_transaction(conn):
        lists = {
            finding.list_key: [
                json.loads(doc) for doc in health_lists.health_json_rows(conn, finding.list_key)
            ]
            for finding in FINDINGS
        }
        warnings, errors = _problems(conn)
    data: dict[str, Any] = {**lists, "warnings": warnings, "errors": errors}
    for finding in FINDINGS:
        if finding.count_key is not None:
            data[finding.count_key] = len(data[finding.list_key])
    data["counts"] = code_counts(data)
    return data


def broken_count(conn: sqlite3.Connection) -> int:
    """``findings_count(health(conn))`` without building the report: the broken links and
    anchors counted in their tables (what `mv` compares before and after a move; issue 33:
    building the report twice cost `mv` seconds at 100k notes)."""
    from notedex.store import health_lists

    with read_transaction(conn):
        return health_lists.health_finding_count(conn)


def findings_count(data: dict[str, Any]) -> int:
    """What makes health exit 1: broken links and broken anchors (docs/cli.md), those left
    after ``--only``/``--ignore`` when they filtered the report (``selected``)."""
    return int(data["brokenLinkCount"]) + int(data["brokenAnchorCount"])


def code_counts(data: dict[str, Any]) -> dict[str, int]:
    """health's ``counts``: every code (notedex.codes.CODES, in its order) and how many
    findings of it the report's lists hold; ``in-comment`` counts the broken links and anchors
    inside comments."""
    tally = dict.fromkeys(CODES, 0)
    for finding in FINDINGS:
        tally[finding.code] = len(data[finding.list_key])
        if finding.commented:
            tally[IN_COMMENT] += sum(1 for item in data[finding.list_key] if "inComment" in item)
    for name in PROBLEM_LISTS:
        for item in data[name]:
            tally[item["code"]] = tally.get(item["code"], 0) + 1
    return tally


def counts_tail(lengths: dict[str, int], codes: dict[str, int]) -> str:
    """The end of health's compact document after its lists: each declared count key (in
    ``FINDINGS``' order: orphanCount, brokenLinkCount... as ever, then the added ones) and
    ``counts``, closing the object."""
    counted = "".join(
        f',"{f.count_key}":{lengths[f.list_key]}' for f in FINDINGS if f.count_key is not None
    )
    return f'{counted},"counts":{counts_json(lengths, codes)}}}'


def code_tally(lists: dict[str, int], codes: dict[str, int]) -> dict[str, int]:
    """``code_counts`` from the lists' lengths and the SQL counts of the rest
    (``store.health_lists.health_code_counts``), every code in ``CODES``' order."""
    tally = dict.fromkeys(CODES, 0)
    for finding in FINDINGS:
        tally[finding.code] = lists[finding.list_key]
    for code, count in codes.items():
        tally[code] = count
    return tally


def counts_json(lists: dict[str, int], codes: dict[str, int]) -> str:
    """``code_tally`` as compact JSON: what the compact and streamed documents end with."""
    tally = code_tally(lists, codes)
    return "{" + ",".join(f'"{code}":{count}' for code, count in tally.items()) + "}"


def selected(data: dict[str, Any], choice: Selection) -> dict[str, Any]:
    """``data`` with only the findings ``choice`` keeps (``--only``, ``--ignore``, the config
    file's ``ignore``), its counts counted again."""
    kept = dict(data)
    for finding in FINDINGS:
        kept[finding.list_key] = (
            [
                item
                for item in data[finding.list_key]
                if choice.keeps(
                    finding.code, item[finding.path_key], bool(item.get("inComment", False))
                )
            ]
            if choice.wants(finding.code, finding.commented)
            else []
        )
        if finding.count_key is not None:
            kept[finding.count_key] = len(kept[finding.list_key])
    for name in PROBLEM_LISTS:
        kept[name] = [item for item in data[name] if choice.keeps(item["code"], item["path"])]
    kept["counts"] = code_counts(kept)
    return kept


def finding_paths(data: dict[str, Any]) -> list[str]:
    """``health --paths``: every note the report names, once, in the report's order (broken
    links' and anchors' sources, orphans, unlinked notes, then warnings' and errors' paths)."""
    paths = [b["source"] for b in (*data["brokenLinks"], *data["brokenAnchors"])]
    paths += [n["path"] for n in (*data["orphanNotes"], *data["unlinkedNotes"])]
    paths += [p["path"] for p in (*data["warnings"], *data["errors"])]
    return list(dict.fromkeys(paths))


def _tags_among(
    note_tags: list[tuple[int, str, str]],
) -> tuple[list[tuple[str, str, int]], dict[str, int], int]:
    """``tag_spellings``, ``notes_tagged_under`` and ``tagged_note_count`` of some notes,
    from their (file id, tag key, spelling) rows: what the writer's counts hold for all."""
    spellings: dict[tuple[str, str], int] = {}
    under: dict[str, set[int]] = {}
    for file_id, key, tag in note_tags:
        spellings[(key, tag)] = spellings.get((key, tag), 0) + 1
        parts = key.split("/")
        for depth in range(1, len(parts) + 1):
            under.setdefault("/".join(parts[:depth]), set()).add(file_id)
    rows = [(key, tag, n) for (key, tag), n in sorted(spellings.items())]
    tagged = len({file_id for file_id, _, _ in note_tags})
    return rows, {key: len(ids) for key, ids in under.items()}, tagged


def health_json(conn: sqlite3.Connection) -> tuple[bytes, int]:
    """``health(conn)`` as compact JSON in UTF-8, exactly as ``render.emit_json`` writes it to
    a pipe, and the count of broken links and anchors (the exit code: ``findings_count``).

    A large vault has tens of thousands of findings: SQLite writes each list, so Python neither
    builds nor encodes a dict per finding, nor holds a string per finding; broken anchors' JSON
    objects are stored by the writer (broken_anchor_docs), not joined and built per query.
    """
    from notedex.store import health_lists  # health's alone: not on lookup's or search's path

    with read_transaction(conn):
        lists = [(name, *health_lists.health_list_json(conn, name)) for name in HEALTH_LISTS]
        codes = health_lists.health_code_counts(conn)
    lengths = {name: count for name, count, _ in lists}
    parts = [b"{"]
    for i, (name, _, body) in enumerate(lists):
        parts += [b"]," if i else b"", f'"{name}":['.encode(), body]
    parts.append(b"]" + counts_tail(lengths, codes).encode())
    document = b"".join(parts)
    broken, anchors = lengths["brokenLinks"], lengths["brokenAnchors"]
    return document, broken + anchors


def _problems(conn: sqlite3.Connection) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(warnings, errors): stored problems, plus a warning per ambiguous link (SEMANTICS 8)."""
    from notedex.store import health_lists

    warning_rows = read.problems(conn, "warning")
    ambiguous_rows = health_lists.ambiguous_links(conn)
    error_rows = read.problems(conn, "error")
    warnings = [
        {"path": r["path"], "message": r["message"], "code": r["code"]} for r in warning_rows
    ]
    warnings += [
        {
            "path": r["source"],
            "message": f"line {r['line']}: {r['text']} is ambiguous; resolved to {r['target']} "
            "by Obsidian's tie-break (same folder first, then shortest path)",
            "code": health_lists.AMBIGUOUS_CODE,
        }
        for r in ambiguous_rows
    ]
    warnings.sort(key=lambda w: w["path"])
    errors = [{"path": r["path"], "message": r["message"], "code": r["code"]} for r in error_rows]
    return warnings, errors


def tags(conn: sqlite3.Connection, nf: NoteFilter | None = None) -> dict[str, Any]:
    """The tag tree as a flat list in tree order (a parent before its children, siblings by
    their folded key): each tag's spelling, ``count`` (notes with it or a tag nested in it),
    ``direct`` (notes with exactly it), ``parent`` and ``depth``; counted over the notes an
    active ``nf`` keeps."""
    from notedex.store import listing_rows  # `tags` only: health never loads it

    with read_transaction(conn):
        if nf is not None and nf.active:
            rows, rollup, tagged = _tags_among(listing_rows.note_tags_among(conn, nf))
        else:
            rows = listing_rows.tag_spellings(conn)
            rollup = listing_rows.notes_tagged_under(conn)
            tagged = listing_rows.tagged_note_count(conn)
    direct: dict[str, int] = {}
    spelling: dict[str, tuple[int, str]] = {}  # key -> (-notes, spelling): most used first
    for key, tag, notes in rows:
        direct[key] = direct.get(key, 0) + notes
        spelling[key] = min(spelling.get(key, (0, "\U0010ffff")), (-notes, tag))
    keys = set(direct)
    for key in direct:  # a parent no note carries itself still has a row (the pane shows it)
        parts = key.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            keys.add(parent)
            if parent not in spelling:
                written = spelling[key][1].split("/")
                spelling[parent] = (0, "/".join(written[:depth]))
    parents = {key.rpartition("/")[0] for key in keys if "/" in key}
    counts = {**direct, **{parent: rollup.get(parent, 0) for parent in parents}}
    ordered = sorted(keys, key=lambda k: k.split("/"))
    return {
        "tags": [
            {
                "tag": spelling[key][1],
                "count": counts[key],
                "direct": direct.get(key, 0),
                "parent": spelling[key.rpartition("/")[0]][1] if "/" in key else None,
                "depth": key.count("/"),
            }
            for key in ordered
        ],
        "tagCount": len(ordered),
        "taggedNoteCount": tagged,
    }


# -- `properties`: the properties pane (issue 32) ----------------------------------------------

_NOT_A_TYPE = ("null", "object")


def _type_of(kinds: dict[str, tuple[int, int]], declared: str | None) -> str:
    """SEMANTICS 14.4: the declared type; else the type most of its notes' values have (a list
    when most notes hold a list), ties to the first by name; "text" when every value is empty."""
    if declared is not None:
        return declared
    notes = max((n for n, _ in kinds.values()), default=0)
    listed = max((lists for _, lists in kinds.values()), default=0)
    if listed * 2 > notes:
        return "list"  # vault.properties.LIST, not imported on the hot path
    typed = [(-n, kind) for kind, (n, _) in kinds.items() if kind not in _NOT_A_TYPE]
    return min(typed)[1] if typed else "text"


def properties(
    conn: sqlite3.Connection,
    declared: Mapping[str, str],
    nf: NoteFilter | None = None,
) -> dict[str, Any]:
    """Every property of the notes listed (``nf``'s when active): name (folded, SEMANTICS
    14.1), type, whether the vault declares it, and how many notes have it; by name."""
    from notedex.store import filters as filters_sql  # not on health's path

    with read_transaction(conn):
        rows = filters_sql.property_kinds(conn, nf)
        totals = {key: filters_sql.property_notes(conn, key, nf) for key in {r[0] for r in rows}}
    kinds: dict[str, dict[str, tuple[int, int]]] = {}
    for key, kind, notes, lists in rows:
        kinds.setdefault(key, {})[kind] = (notes, lists)
    found = [
        {
            "name": key,
            "type": _type_of(by_kind, declared.get(key)),
            "declared": key in declared,
            "count": totals[key],
        }
        for key, by_kind in sorted(kinds.items())
    ]
    return {"properties": found, "propertyCount": len(found)}


def property_values(
    conn: sqlite3.Connection,
    name: str,
    declared: Mapping[str, str],
    nf: NoteFilter | None = None,
) -> dict[str, Any]:
    """One property's values (list items one by one, text without case) and the notes with
    each, most first; its type and note count as ``properties`` gives them."""
    from notedex.store import filters as filters_sql  # not on health's path
    from notedex.vault.properties import fold_name

    key = fold_name(name)
    with read_transaction(conn):
        rows = filters_sql.property_values(conn, key, nf)
        kinds = {
            kind: (notes, lists)
            for k, kind, notes, lists in filters_sql.property_kinds(conn, nf)
            if k == key
        }
        total = filters_sql.property_notes(conn, key, nf)
    return {
        "name": key,
        "type": _type_of(kinds, declared.get(key)),
        "declared": key in declared,
        "count": total,
        "values": [
            {"value": spelling, "type": kind, "count": notes} for _, spelling, kind, notes in rows
        ],
        "valueCount": len(rows),
    }


def render_properties(r: Renderer, data: dict[str, Any]) -> None:
    """Text: one property a line (its notes, name, type), or one value a line."""
    if "values" in data:
        r.line(f"{data['name']} ({data['type']}): {data['count']} notes")
        for item in data["values"]:
            r.line(f"  {item['count']:>6}  {item['value']}")
        return
    for item in data["properties"]:
        mark = "" if not item["declared"] else " (types.json)"
        r.line(f"{item['count']:>6}  {item['name']}  {item['type']}{mark}")
    r.line(f"{data['propertyCount']} properties")

"""``health``'s streamed forms (ARCHITECTURE "Streaming answers", ``query.stream``): the whole
report's JSON as the index holds it, and its text; a filtered, selected or paged report
(``HealthChoice``) and ``--paths``/``-0``, a finding at a time.
"""

from __future__ import annotations

from notedex.query.output import compact_encoder
from notedex.query.reports import HEALTH_LISTS, counts_tail
from notedex.query.stream import page_bounds
from notedex.store import read
from notedex.store.connect import read_transaction

# `health` is on the hot path (tests/system/test_imports.py): no `typing`.
TYPE_CHECKING = False  # mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable
    from typing import Any

    from notedex.codes import Selection
    from notedex.query.filters import NoteFilter
    from notedex.query.stream import Document


def health_json(conn: sqlite3.Connection, doc: Document) -> None:
    """``query.reports.health_json``'s document, a batch of findings at a time: the JSON
    objects the writer stored (or SQLite builds) per row, as that function concatenates them,
    as UTF-8 from the index to ``doc`` (``Document.add_bytes``)."""
    from notedex.store import health_lists

    read.unmapped(conn)
    counts: dict[str, int] = {}
    with read_transaction(conn):
        doc.findings = health_lists.health_finding_count(conn)
        for i, name in enumerate(HEALTH_LISTS):
            doc.add(("{" if i == 0 else "],") + f'"{name}":[')
            count = 0
            for rows, data in health_lists.health_json_batches(conn, name):
                doc.add_bytes(b"," + data if count else data)
                count += rows
            counts[name] = count
        codes = health_lists.health_code_counts(conn)
    doc.add("]" + counts_tail(counts, codes))


def health_text(conn: sqlite3.Connection, doc: Document) -> None:
    """``render.render_health``'s text on a pipe: the counts by code, then each section's count
    (counted first) and its findings one at a time, from the JSON objects ``health --json``
    writes, so the text and the document cannot disagree."""
    import json  # the text of health, not its hot --json path

    from notedex.query.output import Renderer
    from notedex.query.render import HEALTH_SECTIONS, by_code_line, health_line, health_summary
    from notedex.query.reports import code_tally
    from notedex.store import health_lists

    r = Renderer("", doc)  # type: ignore[arg-type]  # a writer that is no terminal
    read.unmapped(conn)
    with read_transaction(conn):
        doc.findings = health_lists.health_finding_count(conn)
        counts = {name: health_lists.health_row_count(conn, name) for name, _ in HEALTH_SECTIONS}
        r.line(by_code_line(code_tally(counts, health_lists.health_code_counts(conn))))
        for name, title in HEALTH_SECTIONS:
            r.section(title, counts[name])
            for item in health_lists.health_json_rows(conn, name):
                r.line(health_line(name, json.loads(item), r.path))
    doc.add("\n" + health_summary(counts))


class HealthChoice:
    """The findings a filtered (``nf``: ``query.reports.kept_findings``) or selected
    (``choice``: ``--only``, ``--ignore``, the config's ``ignore``: ``reports.selected``)
    ``health`` keeps, decided one finding at a time: the kept notes' paths are a TEMP table
    probed per finding (``health_lists.kept_paths_start``), never a set in the process. Made inside
    the caller's read transaction."""

    def __init__(
        self, conn: sqlite3.Connection, nf: NoteFilter | None, choice: Selection | None
    ) -> None:
        from notedex.codes import FINDINGS
        from notedex.store import health_lists

        self._conn = conn
        self._nf = nf if nf is not None and nf.active else None
        self._choice = choice
        self._findings = {finding.list_key: finding for finding in FINDINGS}
        if self._nf is not None:
            health_lists.kept_paths_start(conn, self._nf)

    def _wants(self, name: str) -> bool:
        """Whether the list ``name`` can keep any finding."""
        nf, choice, finding = self._nf, self._choice, self._findings.get(name)
        notes_only = nf is not None and bool(nf.tags or nf.note_type or nf.where)
        if notes_only and name == "unusedAttachments":  # SEMANTICS 14.8: by --folder alone
            return False
        return choice is None or finding is None or choice.wants(finding.code, finding.commented)

    def _keeps(self, name: str, item: dict[str, Any]) -> bool:
        from notedex.store import health_lists

        nf, choice, finding = self._nf, self._choice, self._findings.get(name)
        if nf is not None:
            if name == "unusedAttachments":
                path = item["path"]
                if nf.folders and not any(
                    not folder or path.startswith(folder + "/") for folder in nf.folders
                ):
                    return False
            elif not health_lists.kept_path(self._conn, item.get("source") or item["path"]):
                return False
        if choice is None:
            return True
        if finding is None:  # warnings and errors
            return choice.keeps(item["code"], item["path"])
        return choice.keeps(
            finding.code, item[finding.path_key], bool(item.get("inComment", False))
        )

    def items(self, name: str) -> Iterable[tuple[str, dict[str, Any]]]:
        """The kept findings of the list ``name`` in report order: (its JSON as the index
        holds it, the object)."""
        import json

        from notedex.store import health_lists

        if not self._wants(name):
            return
        for raw in health_lists.health_json_rows(self._conn, name):
            item = json.loads(raw)
            if self._keeps(name, item):
                yield raw, item

    def tally(self, name: str, item: dict[str, Any], counts: dict[str, int]) -> None:
        """``reports.code_counts`` of one kept finding of ``name``, added to ``counts``."""
        from notedex.codes import IN_COMMENT

        finding = self._findings.get(name)
        if finding is None:
            counts[item["code"]] = counts.get(item["code"], 0) + 1
            return
        counts[finding.code] += 1
        if finding.commented and "inComment" in item:
            counts[IN_COMMENT] += 1


def health_chosen_json(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``compact_json(reports.selected(reports.health(conn, nf), choice))``, finding after
    finding: the lists first, each kept finding's JSON as the index holds it, then the counts,
    tallied on the way. The broken links and anchors kept (the exit code) are counted in a
    first pass over those two lists, before the first byte. With ``page`` (offset, limit or
    None), the page ``query.paging.paginate`` cuts: each list's findings on the page written,
    all of them counted."""
    from notedex.codes import CODES, FINDINGS

    encode = compact_encoder()
    offset, stop = page_bounds(page)
    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        doc.findings = sum(1 for name in ("brokenLinks", "brokenAnchors") for _ in keep.items(name))
        lengths: dict[str, int] = {}
        tally = dict.fromkeys(CODES, 0)
        for i, name in enumerate(HEALTH_LISTS):
            doc.add(("{" if i == 0 else "],") + f'"{name}":[')
            count = written = 0
            for raw, item in keep.items(name):
                if count >= offset and (stop is None or count < stop):
                    doc.add("," + raw if written else raw)
                    written += 1
                keep.tally(name, item, tally)
                count += 1
            lengths[name] = count
    counted = "".join(
        f',"{f.count_key}":{lengths[f.list_key]}' for f in FINDINGS if f.count_key is not None
    )
    doc.add(f']{counted},"counts":{encode(tally)}')
    if page is not None:
        more = stop is not None and any(n > stop for n in lengths.values())
        doc.add(
            f',"totals":{encode(lengths)},"total":{max(lengths.values())},"offset":{offset},'
            f'"limit":{encode(page[1])},"hasMore":{encode(more)}'
        )
    doc.add("}")


def health_chosen_text(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    page: tuple[int, int | None] | None = None,
) -> None:
    """``render.render_health`` of a filtered, selected or paged (``page``: offset, limit or
    None) report on a pipe: a first pass counts the kept findings (the first line counts
    them by code, each section's heading says how many: of a paged list, the whole list's
    where the JSON has its count, else the page's), a second writes them, in one read
    transaction."""
    from itertools import islice

    from notedex.codes import CODES, FINDINGS
    from notedex.query.output import Renderer
    from notedex.query.render import HEALTH_SECTIONS, by_code_line, health_line, health_summary

    r = Renderer("", doc)  # type: ignore[arg-type]  # a writer that is no terminal
    offset, stop = page_bounds(page)
    counted = {f.list_key for f in FINDINGS if f.count_key is not None}
    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        counts = dict.fromkeys((name for name, _ in HEALTH_SECTIONS), 0)
        tally = dict.fromkeys(CODES, 0)
        for name in HEALTH_LISTS:
            for _raw, item in keep.items(name):
                counts[name] += 1
                keep.tally(name, item, tally)
        doc.findings = counts["brokenLinks"] + counts["brokenAnchors"]
        if page is not None:  # render_health counts a paged list by its page, or its count key
            for name in counts:
                if name not in counted:
                    whole = counts[name]
                    counts[name] = max(0, (whole if stop is None else min(whole, stop)) - offset)
        r.line(by_code_line(tally))
        for name, title in HEALTH_SECTIONS:
            r.section(title, counts[name])
            for _raw, item in islice(keep.items(name), offset, stop):
                r.line(health_line(name, item, r.path))
    doc.add("\n" + health_summary(counts))


HEALTH_PATHS = (
    ("brokenLinks", "source"),
    ("brokenAnchors", "source"),
    ("orphanNotes", "path"),
    ("unlinkedNotes", "path"),
    ("warnings", "path"),
    ("errors", "path"),
)
"""``reports.finding_paths``: the lists whose notes ``health --paths`` names, in its order."""


def health_paths(
    conn: sqlite3.Connection,
    doc: Document,
    nf: NoteFilter | None = None,
    choice: Selection | None = None,
    *,
    end: str = "\n",
) -> None:
    """``health --paths``/``-0``: ``reports.finding_paths`` of the (filtered, selected) report,
    each path once, as the findings come: the paths already written are a TEMP table probed
    per finding (``health_lists.seen_paths_start``), not a set in the process."""
    from notedex.store import health_lists

    read.unmapped(conn)
    with read_transaction(conn):
        keep = HealthChoice(conn, nf, choice)
        if nf is None and choice is None:
            doc.findings = health_lists.health_finding_count(conn)
        else:
            doc.findings = sum(
                1 for name in ("brokenLinks", "brokenAnchors") for _ in keep.items(name)
            )
        health_lists.seen_paths_start(conn)
        for name, key in HEALTH_PATHS:
            for _raw, item in keep.items(name):
                if health_lists.seen_path_add(conn, item[key]):
                    doc.add(item[key] + end)

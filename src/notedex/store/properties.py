"""The ``properties`` table read back: every property with its notes and value types, and one
property's values with their notes (``notedex properties``). Stdlib only: the query path."""

from typing import TYPE_CHECKING

from notedex.store.filters import notes_kept

if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    from notedex.store.filters import NoteFilter


def _kept(conn: "sqlite3.Connection", nf: "NoteFilter | None", params: "list[Any]") -> str:
    """The notes listed: not excluded, and kept by ``nf`` when it is active."""
    if nf is not None and nf.active:
        return notes_kept(conn, "p.file_id", nf, params)
    return "p.file_id NOT IN (SELECT file_id FROM notes WHERE excluded = 1)"


def property_kinds(
    conn: "sqlite3.Connection", nf: "NoteFilter | None" = None
) -> list[tuple[str, str, int, int]]:
    """(key, kind, notes, of them with a list) of every property and value kind, by key then
    kind: what ``query.properties`` reads a property's type and note count from."""
    params: list[Any] = []
    kept = _kept(conn, nf, params)
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        f"""
        SELECT p.key, p.kind, count(DISTINCT p.file_id), count(DISTINCT
               CASE WHEN p.is_list = 1 THEN p.file_id END)
        FROM properties p WHERE {kept}
        GROUP BY p.key, p.kind ORDER BY p.key, p.kind
        """,
        params,
    ).fetchall()


def property_notes(conn: "sqlite3.Connection", key: str, nf: "NoteFilter | None" = None) -> int:
    """How many listed notes have the property ``key`` (folded)."""
    params: list[Any] = [key]
    kept = _kept(conn, nf, params)
    row = conn.execute(
        f"SELECT count(DISTINCT p.file_id) FROM properties p WHERE p.key = ? AND {kept}", params
    ).fetchone()
    return int(row[0])


def property_values(
    conn: "sqlite3.Connection", key: str, nf: "NoteFilter | None" = None
) -> list[tuple[str, str, str, int]]:
    """(fold, first spelling, kind, notes) of each value of ``key`` (list items one by one),
    most notes first, then by the folded value; empty values apart."""
    params: list[Any] = [key]
    kept = _kept(conn, nf, params)
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        f"""
        SELECT coalesce(p.fold, p.value), min(p.value), min(p.kind), count(DISTINCT p.file_id) AS n
        FROM properties p
        WHERE p.key = ? AND p.kind NOT IN ('null') AND {kept}
        GROUP BY coalesce(p.fold, p.value) ORDER BY n DESC, 1
        """,
        params,
    ).fetchall()

"""Read-only queries only whole-vault listings ask: the notes a ``scan`` counts and streams with
their names, every note's tags or aliases in path order (``scan``, ``export``), a page of notes
(the MCP resources), and the tag pane's counts (``tags``). Stdlib only, written as
``store.read`` (whose ``NOTE_COLUMNS`` they select): on the listings' path (docs/design/imports.md).

A module of its own so that the queries on the hot path (lookup, search, health), which load
``store.read``, do not unmarshal this code (issue 30's speed budget).
"""

from notedex.store.read import NOTE_COLUMNS

TYPE_CHECKING = False  # no `typing` import on the listings' path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any

    Row = sqlite3.Row

    from notedex.store.filters import NoteFilter


def note_count(conn: "sqlite3.Connection", nf: "NoteFilter | None" = None) -> int:
    """How many notes ``notes_in_path_order(conn, nf)`` lists (a paged answer's total)."""
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = ["n.excluded = 0", *(note_conditions(conn, nf, params) if nf is not None else ())]
    sql = "SELECT count(*) FROM notes n JOIN files f ON f.id = n.file_id WHERE " + " AND ".join(
        where
    )
    return int(conn.execute(sql, params).fetchone()[0])


def notes_with_names(conn: "sqlite3.Connection", nf: "NoteFilter") -> "sqlite3.Cursor":
    """``notes_in_path_order(conn, nf)`` (any order ``nf`` sorts by), each row with its
    ``tags_json`` and ``aliases_json``: a JSON array of its tags and of its aliases, by
    position, built by SQLite per row (one seek into each table's file_id key). A scan sorted
    another way than by path streams these rows (issue 35): the sort is SQLite's (its sorter
    spills to temporary files), and no dict of every note's names is built in Python."""
    from notedex.store.filters import note_conditions, order_by

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    names = """,
        (SELECT json_group_array(tag) FROM (SELECT k.tag AS tag FROM tags t
           JOIN tag_names k ON k.id = t.tag_id WHERE t.file_id = f.id ORDER BY t.position))
          AS tags_json,
        (SELECT json_group_array(alias) FROM (SELECT a.alias AS alias FROM aliases a
           WHERE a.file_id = f.id ORDER BY a.position)) AS aliases_json"""
    sql = f"SELECT {NOTE_COLUMNS}{names} FROM notes n JOIN files f ON f.id = n.file_id"
    sql += f" WHERE {where} ORDER BY " + order_by(conn, nf, params)
    return conn.execute(sql, params)


def notes_after(conn: "sqlite3.Connection", after: str, limit: int) -> "list[Row]":
    """A page of the notes ``scan`` lists, by path: the first ``limit`` sorted after ``after``."""
    return conn.execute(
        f"SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE n.excluded = 0 AND f.path > ? ORDER BY f.path LIMIT ?",
        (after, limit),
    ).fetchall()


def tag_spellings(conn: "sqlite3.Connection") -> list[tuple[str, str, int]]:
    """Every tag spelling with the notes (not excluded) that carry it, as (``tag_key``,
    ``tag``, notes), by key then spelling: the writer's counts (store/tagcounts.py). A note
    holds each tag key once (SEMANTICS 4.9), so the counts add up per key."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        """
        SELECT k.tag_key, k.tag, u.notes FROM tag_uses u CROSS JOIN tag_names k ON k.id = u.tag_id
        ORDER BY k.tag_key, k.tag
        """
    ).fetchall()


def notes_tagged_under(conn: "sqlite3.Connection") -> dict[str, int]:
    """For each tag key and each parent of one, the notes (not excluded) with it or a tag
    nested in it (SEMANTICS 4.8), each note once: the writer's counts (store/tagcounts.py)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    return dict(cursor.execute("SELECT tag_key, notes FROM tag_rollup").fetchall())


def note_tags_among(conn: "sqlite3.Connection", nf: "NoteFilter") -> list[tuple[int, str, str]]:
    """(file id, tag key, spelling) of every tag of the notes ``nf`` keeps (not excluded)."""
    from notedex.store.filters import notes_kept

    params: list[Any] = []
    kept = notes_kept(conn, "t.file_id", nf, params)
    cursor = conn.cursor()
    cursor.row_factory = None
    return cursor.execute(
        f"SELECT t.file_id, k.tag_key, k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id "
        f"WHERE {kept}",
        params,
    ).fetchall()


def tagged_note_count(conn: "sqlite3.Connection") -> int:
    """The notes (not excluded) with at least one tag."""
    return int(conn.execute("SELECT count(*) FROM tagged_notes").fetchone()[0])


def names_in_path_order(
    conn: "sqlite3.Connection", kind: str, nf: "NoteFilter | None" = None
) -> "sqlite3.Cursor":
    """(path, name) of every file's tags (``kind`` "tags") or aliases, by path then position:
    ``tags_by_note``/``aliases_by_note`` as a stream to merge with ``notes_in_path_order``.
    With an active ``nf``, only those of the notes ``notes_in_path_order(conn, nf)`` lists
    (issue 32: a filtered scan of 41 notes read the 330,000 tags of a 100k vault), walked
    from ``files`` in path order: no sort, and no plan that starts from every tag."""
    if nf is not None and nf.active:
        return _kept_names_in_path_order(conn, kind, nf)
    if kind == "tags":
        return conn.execute(
            """
            SELECT f.path, k.tag FROM tags t JOIN tag_names k ON k.id = t.tag_id
            JOIN files f ON f.id = t.file_id ORDER BY f.path, t.position
            """
        )
    return conn.execute(
        "SELECT f.path, a.alias FROM aliases a JOIN files f ON f.id = a.file_id "
        "ORDER BY f.path, a.position"
    )


def _kept_names_in_path_order(
    conn: "sqlite3.Connection", kind: str, nf: "NoteFilter"
) -> "sqlite3.Cursor":
    from notedex.store.filters import note_conditions

    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    if kind == "tags":
        names = (
            "k.tag FROM files f CROSS JOIN notes n ON n.file_id = f.id"
            " CROSS JOIN tags t ON t.file_id = f.id CROSS JOIN tag_names k ON k.id = t.tag_id"
        )
    else:
        names = (
            "t.alias FROM files f CROSS JOIN notes n ON n.file_id = f.id"
            " CROSS JOIN aliases t ON t.file_id = f.id"
        )
    return conn.execute(f"SELECT f.path, {names} WHERE {where} ORDER BY f.path, t.position", params)

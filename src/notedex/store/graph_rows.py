"""`graph`'s SQL: the edges between files (all of them, streamed by source, or those touching
some notes), the link targets that are files but no listed note, the unresolved links, and the
TEMP tables of a filtered graph's notes and of the unresolved keys' node ids (issue 35). Only
`graph` imports it, and `graph` loads ``typing`` anyway (off the hot path's lists).
"""

from typing import TYPE_CHECKING

from notedex.store.read import _json_ints

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence

    Row = sqlite3.Row

    from notedex.store.filters import NoteFilter


def graph_edges(conn: "sqlite3.Connection") -> "list[Row]":
    """Edges between files (count = occurrences); unresolved targets carry their linkpath."""
    return graph_edges_by_source(conn).fetchall()


def graph_edges_by_source(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """``graph_edges`` as a cursor: the rows of one source path come together, in path order;
    with ``kept``, only the kept notes' (``graph_kept_start``)."""
    return conn.execute(
        f"""
        SELECT f.path AS source, t.path AS target, l.linkpath AS linkpath,
               t.is_note AS target_is_note, count(*) AS count
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND (l.target_id IS NULL OR l.target_id <> l.source_id)
          AND n.excluded = 0 {_KEPT_SOURCE if kept else ""}
        GROUP BY l.source_id, coalesce(l.target_id, -1),
                 CASE WHEN l.target_id IS NULL THEN l.linkpath END
        ORDER BY f.path, coalesce(t.path, l.linkpath)
        """
    )


_EDGE_COLUMNS = """
    l.source_id AS source_id, f.path AS source, l.target_id AS target_id, t.path AS target,
    l.linkpath AS linkpath, t.is_note AS target_is_note, count(*) AS count
"""
_EDGE_FROM = """
    FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
    LEFT JOIN files t ON t.id = l.target_id
"""


def graph_edges_touching(conn: "sqlite3.Connection", file_ids: "Sequence[int]") -> "list[Row]":
    """``graph_edges`` (same rules, plus both ends' ids) that start or end at one of ``file_ids``.

    An edge between two of them comes twice (once from each side); the caller keeps one.
    """
    return conn.execute(
        f"""
        SELECT {_EDGE_COLUMNS} {_EDGE_FROM}
        WHERE l.source_id IN (SELECT value FROM json_each(?1)) AND l.linkpath <> ''
          AND (l.target_id IS NULL OR l.target_id <> l.source_id) AND n.excluded = 0
        GROUP BY l.source_id, coalesce(l.target_id, -1),
                 CASE WHEN l.target_id IS NULL THEN l.linkpath END
        UNION ALL
        SELECT {_EDGE_COLUMNS} {_EDGE_FROM}
        WHERE l.target_id IN (SELECT value FROM json_each(?1)) AND l.target_id <> l.source_id
          AND l.linkpath <> '' AND n.excluded = 0
        GROUP BY l.source_id, l.target_id
        """,
        {"1": _json_ints(file_ids)},  # ?1 binds by name (a sequence is an error from 3.14)
    ).fetchall()


def graph_node_paths_among(conn: "sqlite3.Connection", paths: "Sequence[str]") -> set[str]:
    """Which of ``paths`` are nodes of the whole ``graph``: a listed note or a link's target."""
    import json

    return {
        row[0]
        for row in conn.execute(
            """
            SELECT f.path FROM files f LEFT JOIN notes n ON n.file_id = f.id
            WHERE f.path IN (SELECT value FROM json_each(?))
              AND (n.excluded = 0 OR EXISTS (SELECT 1 FROM links l WHERE l.target_id = f.id))
            """,
            (json.dumps(list(paths)),),
        )
    }


_GRAPH_LINKS = """
    FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
    WHERE l.linkpath <> '' AND n.excluded = 0
"""
_KEPT_SOURCE = " AND l.source_id IN (SELECT file_id FROM temp.graph_kept)"
"""With ``kept``: only the links of the notes in the TEMP table ``graph_kept_start`` fills."""


def _listed_note(kept: bool, column: str = "t.id") -> str:
    """``column`` is a graph's note node: a listed note, or with ``kept`` one the filter kept."""
    if kept:
        return f"EXISTS (SELECT 1 FROM temp.graph_kept k WHERE k.file_id = {column})"
    return f"EXISTS (SELECT 1 FROM notes tn WHERE tn.file_id = {column} AND tn.excluded = 0)"


def graph_kept_start(conn: "sqlite3.Connection", nf: "NoteFilter") -> None:
    """A TEMP table (the read-only connection's own, SQLite-side) of the file ids of the notes
    ``nf`` keeps: a filtered graph's notes, whose links alone it draws (issue 35: probed by
    the streamed graph's queries instead of a Python set of kept paths)."""
    from notedex.store.filters import fill_kept

    conn.execute("CREATE TEMP TABLE IF NOT EXISTS graph_kept (file_id INTEGER PRIMARY KEY)")
    fill_kept(conn, nf, "graph_kept", "n.file_id")


def graph_linked_files(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """The link targets that are files but no listed note, in the order ``graph_edges`` first
    reaches them: by the first source path linking to them, then by path. With ``kept``, of
    the kept notes' links, and no kept note (``graph_kept_start``)."""
    return conn.execute(
        f"""
        SELECT t.path AS target, t.is_note AS target_is_note, min(f.path) AS first
        FROM links l JOIN files f ON f.id = l.source_id JOIN notes n ON n.file_id = l.source_id
        JOIN files t ON t.id = l.target_id
        WHERE l.linkpath <> '' AND n.excluded = 0 AND l.target_id <> l.source_id
          {_KEPT_SOURCE if kept else ""} AND NOT {_listed_note(kept)}
        GROUP BY l.target_id ORDER BY first, t.path
        """
    )


def graph_broken_links(conn: "sqlite3.Connection", kept: bool = False) -> "sqlite3.Cursor":
    """(source path, linkpath) of every unresolved graph link, once each, in edge order."""
    return conn.execute(
        f"SELECT DISTINCT f.path, l.linkpath {_GRAPH_LINKS} AND l.target_id IS NULL "
        f"{_KEPT_SOURCE if kept else ''} ORDER BY f.path, l.linkpath"
    )


def graph_file_node(conn: "sqlite3.Connection", path: str, kept: bool = False) -> bool:
    """Whether ``path`` is a file node of the whole graph: a listed note or a graph link's
    target (the links ``graph_edges`` reads); with ``kept``, of the filtered graph."""
    return (
        conn.execute(
            f"""
            SELECT 1 FROM files t WHERE t.path = ?1 AND (
              {_listed_note(kept)}
              OR EXISTS (SELECT 1 {_GRAPH_LINKS} AND l.target_id = t.id
                         AND l.source_id <> t.id {_KEPT_SOURCE if kept else ""}))
            """,
            {"1": path},
        ).fetchone()
        is not None
    )


def unresolved_ids_start(conn: "sqlite3.Connection") -> None:
    """An empty TEMP table of unresolved keys and their graph node ids."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS graph_unresolved"
        " (key TEXT PRIMARY KEY, id TEXT NOT NULL UNIQUE) WITHOUT ROWID"
    )
    conn.execute("DELETE FROM temp.graph_unresolved")


def unresolved_id(conn: "sqlite3.Connection", key: str) -> str | None:
    row = conn.execute("SELECT id FROM temp.graph_unresolved WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def unresolved_id_taken(conn: "sqlite3.Connection", node_id: str) -> bool:
    return (
        conn.execute("SELECT 1 FROM temp.graph_unresolved WHERE id = ?", (node_id,)).fetchone()
        is not None
    )


def unresolved_id_add(conn: "sqlite3.Connection", key: str, node_id: str) -> None:
    conn.execute("INSERT INTO temp.graph_unresolved (key, id) VALUES (?, ?)", (key, node_id))

"""What `fix` and `mv` read from the index before they write the vault: every indexed file's
path and spelling on disk, the links a move touches, the files filed under a name. Read side;
``edit/`` imports it (it loads ``typing`` anyway).
"""

from typing import TYPE_CHECKING

from notedex.store.schema import LINK_TEXT

if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Iterable

    Row = sqlite3.Row


def vault_paths(conn: "sqlite3.Connection") -> dict[str, str]:
    """Every indexed file's vault path (notes and attachments) and its on-disk spelling: what
    `fix` resolves a suggestion against (SEMANTICS 7) and the file it opens."""
    return {
        path: disk_rel or path
        for path, disk_rel in conn.execute("SELECT path, disk_rel FROM files ORDER BY path")
    }


def links_touching(conn: "sqlite3.Connection", paths: "list[str]") -> "list[Row]":
    """The links from or into the files at ``paths``: source path, line, column, the text as
    written, linkpath and the target's path (NULL when unresolved). What `mv` re-resolves
    after a move: the links of the moved files and those into files that share a name with
    one (issue 33: a probe by source and by target, not a read of every link)."""
    import json

    return conn.execute(
        f"""
        WITH chosen(id) AS (
            SELECT id FROM files WHERE path IN (SELECT value FROM json_each(?))
        )
        SELECT f.path AS source, l.line, l.col AS column, {LINK_TEXT} AS text, l.linkpath,
               t.path AS target
        FROM links l JOIN files f ON f.id = l.source_id LEFT JOIN files t ON t.id = l.target_id
        WHERE l.linkpath != ''
          AND (l.source_id IN (SELECT id FROM chosen) OR l.target_id IN (SELECT id FROM chosen))
        ORDER BY f.path, l.seq
        """,
        (json.dumps(paths),),
    ).fetchall()


def paths_filed_under(conn: "sqlite3.Connection", keys: "Iterable[str]") -> "list[str]":
    """The paths of the files filed under ``keys`` (``vault.resolve.file_keys``), by the index
    files_name_key: a probe per name (a note's stem key k is its name key k.md), not a fold of
    every path of the vault (issue 33: 0.7 s of a folder `mv` at 100k notes)."""
    import json

    from notedex.vault.resolve import file_keys, file_name_crc, key_crc

    keys = set(keys)
    # The index's expression: the writer registers it, a read connection does here.
    conn.create_function("nx_file_name_crc", 1, file_name_crc, deterministic=True)
    names = json.dumps(sorted({key_crc(name) for key in keys for name in (key, key + ".md")}))
    rows = conn.execute(
        "SELECT path FROM files WHERE nx_file_name_crc(path) IN (SELECT value FROM json_each(?))",
        (names,),
    )
    return sorted(path for (path,) in rows if not keys.isdisjoint(file_keys(path)))

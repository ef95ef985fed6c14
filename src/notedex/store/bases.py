"""Read side: the rows a base evaluates (every vault file with its note data), narrowed in SQL
by folder and tag where the filters allow, and their tags and links. Stdlib only."""

from notedex.store.schema import LINK_KINDS

TYPE_CHECKING = False  # no `typing` on the base path (design/bases.md); mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from collections.abc import Sequence
    from typing import Any

_EMBEDS = tuple(i for i, kind in enumerate(LINK_KINDS) if "embed" in kind)


def file_rows(
    conn: "sqlite3.Connection",
    *,
    folders: "Sequence[str]" = (),
    tags: "Sequence[Sequence[str]]" = (),
) -> "list[sqlite3.Row]":
    """Every file (id, path, size, mtime_ns, ctime_ns, is_note, properties as JSON text), in
    path order.

    ``folders``: only files under one of them (OR); ``tags``: for each group, only notes with one
    of its tags or a tag nested in it (the groups AND-ed). The one function a base's rows come
    through: the note properties column is read here and nowhere else.
    """
    where: list[str] = []
    params: list[Any] = []
    # A prefix P/ as a range, P/ <= text < P0 ('0' follows '/'), which the indexes on path and
    # tag_key answer: substr(text, 1, len) = 'P/' read every file's or every tag's row (issue 32).
    if folders:
        ors = []
        for folder in folders:
            ors.append("(f.path >= ? AND f.path < ?)")
            params += [folder + "/", folder + "0"]
        where.append("(" + " OR ".join(ors) + ")")
    for group in tags:
        ors = []
        for tag in group:
            ors.append("(k.tag_key = ? OR (k.tag_key >= ? AND k.tag_key < ?))")
            params += [tag, tag + "/", tag + "0"]
        if folders:  # from the folders' files, each one's few tags (not every tagged file)
            # The tags' ids first (tag_names is small), so each file's tags are compared by id,
            # not each joined to its name: 8 -> 5 ms at 100k notes. `+` keeps `tags_tag` out.
            where.append(
                "EXISTS (SELECT 1 FROM tags t WHERE t.file_id = f.id AND +t.tag_id IN"
                " (SELECT k.id FROM tag_names k WHERE " + " OR ".join(ors) + "))"
            )
        else:
            where.append(
                "f.id IN (SELECT t.file_id FROM tags t JOIN tag_names k ON k.id = t.tag_id WHERE "
                + " OR ".join(ors)
                + ")"
            )
    sql = (
        "SELECT f.id AS id, f.path AS path, f.size AS size, f.mtime_ns AS mtime_ns,"
        " f.ctime_ns AS ctime_ns, f.is_note AS is_note, n.properties AS properties"
        " FROM files f LEFT JOIN notes n ON n.file_id = f.id"
    )
    if where:
        sql += " WHERE " + " AND ".join(where)
    return conn.execute(sql + " ORDER BY f.path", params).fetchall()


def tags_of_files(
    conn: "sqlite3.Connection", ids: "Sequence[int] | None" = None
) -> dict[int, list[tuple[str, str]]]:
    """Per file id (all, or these), its tags in note order: (spelling, lower-cased key)."""
    sql = "SELECT t.file_id, k.tag, k.tag_key FROM tags t JOIN tag_names k ON k.id = t.tag_id"
    params: tuple[str, ...] = ()
    if ids is not None:
        sql += " WHERE t.file_id IN (SELECT value FROM json_each(?))"
        params = ("[" + ",".join(str(int(i)) for i in ids) + "]",)
    out: dict[int, list[tuple[str, str]]] = {}
    for file_id, tag, key in conn.execute(sql + " ORDER BY t.file_id, t.position", params):
        out.setdefault(file_id, []).append((tag, key))
    return out


def links_of_files(
    conn: "sqlite3.Connection",
) -> "list[tuple[int, str, str | None, str, bool]]":
    """Every link: (source id, source path, target path or None, linkpath, is an embed), in
    note order."""
    rows = conn.execute(
        "SELECT l.source_id, s.path, t.path, l.linkpath, l.kind FROM links l"
        " JOIN files s ON s.id = l.source_id"
        " LEFT JOIN files t ON t.id = l.target_id ORDER BY l.source_id, l.seq"
    )
    return [
        (source, path, target, linkpath, kind in _EMBEDS)
        for source, path, target, linkpath, kind in rows
    ]


def base_files(conn: "sqlite3.Connection") -> list[str]:
    """The vault paths of the ``.base`` files, in path order."""
    return [
        path
        for (path,) in conn.execute(
            "SELECT path FROM files WHERE lower(substr(path, -5)) = '.base' ORDER BY path"
        )
    ]


def stored_base(conn: "sqlite3.Connection", path: str) -> "sqlite3.Row | None":
    """A ``.base`` file's row as the indexer stored it: size, mtime_ns (its etag then), doc
    (the base as JSON) and error; None when the index has no such file."""
    return conn.execute(
        "SELECT f.size AS size, f.mtime_ns AS mtime_ns, b.doc AS doc, b.error AS error"
        " FROM files f JOIN bases b ON b.file_id = f.id WHERE f.path = ?",
        (path,),
    ).fetchone()


def file_row(conn: "sqlite3.Connection", path: str) -> "sqlite3.Row | None":
    """One file's row as ``file_rows`` gives it, by vault path."""
    return conn.execute(
        "SELECT f.id AS id, f.path AS path, f.size AS size, f.mtime_ns AS mtime_ns,"
        " f.ctime_ns AS ctime_ns, f.is_note AS is_note, n.properties AS properties"
        " FROM files f LEFT JOIN notes n ON n.file_id = f.id WHERE f.path = ?",
        (path,),
    ).fetchone()


def frontmatter_links(conn: "sqlite3.Connection") -> "list[tuple[int, str, str | None]]":
    """Every frontmatter link (a property's ``[[x]]``) as the index resolved it (SEMANTICS 7):
    (source id, linkpath, target path or None)."""
    return conn.execute(
        "SELECT l.source_id, l.linkpath, t.path FROM links l"
        " LEFT JOIN files t ON t.id = l.target_id WHERE l.kind = ?",
        (LINK_KINDS.index("frontmatter"),),
    ).fetchall()

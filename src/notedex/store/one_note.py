"""One note's rows: which note a name means (its path, title, alias or frontmatter id), and what
`show`, `quote` and `mentions` read of it (outline, links out and in, problems, the folders
above it that could not be read, aliases, body matches); the frontmatter ids `capture` avoids.
Stdlib only: `show`, `mentions` and the listings that find a note (design/imports.md) load it.
"""

from notedex.store.read import NOTE_COLUMNS, fold_name, register_fold
from notedex.store.schema import LINK_KIND, LINK_TEXT, NOTE_TITLE

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3

    Row = sqlite3.Row


def note_by_path(conn: "sqlite3.Connection", path: str) -> "Row | None":
    return conn.execute(
        f"SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id WHERE f.path = ?",
        (path,),
    ).fetchone()


def notes_by_title(conn: "sqlite3.Connection", title: str) -> "list[Row]":
    """Case-insensitive match on path without .md, stem, or title (SEMANTICS 7's fold)."""
    # SQLite's lower() folds ASCII only: "ÉTÉ" must find "été" as links do.
    register_fold(conn)
    key = fold_name(title) or ""
    match = (
        f"nx_fold(f.path) IN (?1, ?1 || '.md') OR nx_fold(n.stem) = ?1 "
        f"OR nx_fold({NOTE_TITLE}) = ?1"
    )
    among = _title_candidates(key)
    params = {"1": key}  # ?1, ?2, ?3 bind by name (a sequence is an error from Python 3.14)
    where = match  # without candidates: every note's names folded in Python, 0.3 s at 100k
    if among is not None:
        where = f"n.file_id IN ({among}) AND ({match})"
        params.update((str(i), needle) for i, needle in enumerate(_title_needles(key), 2))
    return conn.execute(
        f"""
        SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id
        WHERE {where}
        ORDER BY length(f.path), f.path
        """,
        params,
    ).fetchall()


def _caseless_or_ascii(ch: str) -> bool:
    """ASCII, or a character with no case that NFC keeps: CJK ideographs, kana, Hangul."""
    return (
        ch < "\x80"
        or "\u4e00" <= ch <= "\u9fff"
        or "\u3041" <= ch <= "\u3096"
        or "\u30a1" <= ch <= "\u30fa"
        or "\uac00" <= ch <= "\ud7a3"
    )


def _title_needles(key: str) -> tuple[str, ...]:
    """The trigram phrases: the key (a stem or title equal to it holds it), and the key's last
    segment without ``.md`` (a path equal to the key, or to it plus ``.md``, ends with the
    note's stem, which then holds that segment). When the segment is the key (no ``/``, no
    ``.md``: the usual title), the first phrase already finds every stem that holds it."""
    segment = key.rpartition("/")[2].removesuffix(".md")
    whole = '"' + key.replace('"', '""') + '"'
    if segment == key:
        return (whole,)
    return whole, 'stem : "' + segment.replace('"', '""') + '"'


def _title_candidates(key: str) -> str | None:
    """SQL for the notes that may fold to ``key`` (a superset, confirmed by the exact match),
    from the title trigram index; None when the index cannot promise that.

    It can when the key is ASCII and characters without case (``_caseless_or_ascii``) and
    both phrases have 3 or more characters: every stored name is NFC, and the only NFC
    character that ``str.lower()`` turns into one of those is an ASCII capital (U+0130 brings
    U+0307 along), so a name that folds to the key holds only such characters, which the
    trigram tokenizer folds exactly as ``str.lower()`` does (ASCII case; none for the rest).
    """
    segment = key.rpartition("/")[2].removesuffix(".md")
    if len(segment) < 3 or not all(_caseless_or_ascii(ch) for ch in key):
        return None
    if segment == key:  # one phrase (``_title_needles``): one trigram search, not two
        return "SELECT rowid FROM title_grams WHERE title_grams MATCH ?2"
    return (
        "SELECT rowid FROM title_grams WHERE title_grams MATCH ?2 "
        "UNION SELECT rowid FROM title_grams WHERE title_grams MATCH ?3"
    )


def notes_by_alias(conn: "sqlite3.Connection", key: str, folded: str) -> "list[Row]":
    """Notes with an alias that folds to ``folded``; ``key`` is its ``name_key`` (the index)."""
    register_fold(conn)
    return conn.execute(
        f"""
        SELECT DISTINCT {NOTE_COLUMNS} FROM aliases a
        JOIN notes n ON n.file_id = a.file_id JOIN files f ON f.id = n.file_id
        WHERE a.alias_key = ? AND nx_fold(a.alias) = ? ORDER BY f.path
        """,
        (key, folded),
    ).fetchall()


def notes_by_note_id(conn: "sqlite3.Connection", note_id: str) -> "list[Row]":
    """Notes whose frontmatter ``id`` is ``note_id`` (exact; a scan, for `show` only)."""
    return conn.execute(
        f"SELECT {NOTE_COLUMNS} FROM notes n JOIN files f ON f.id = n.file_id "
        "WHERE n.note_id = ? ORDER BY f.path",
        (note_id,),
    ).fetchall()


def note_ids_with_prefix(conn: "sqlite3.Connection", prefix: str) -> list[str]:
    """The frontmatter ids that start with ``prefix`` (``capture`` picks a free one)."""
    return [
        row[0]
        for row in conn.execute(
            "SELECT note_id FROM notes WHERE substr(note_id, 1, ?) = ?", (len(prefix), prefix)
        )
    ]


def note_outline(conn: "sqlite3.Connection", file_id: int) -> str | None:
    """notes.outline of one note (store/outline.py decodes it)."""
    row = conn.execute("SELECT outline FROM notes WHERE file_id = ?", (file_id,)).fetchone()
    return row[0] if row else None


def outgoing_links(conn: "sqlite3.Connection", file_id: int) -> "list[Row]":
    return conn.execute(
        f"""
        SELECT {LINK_KIND} AS kind, {LINK_TEXT} AS raw, l.linkpath, l.subpath, l.display, l.line,
               l.col AS column, t.path AS target, l.ambiguous
        FROM links l LEFT JOIN files t ON t.id = l.target_id
        WHERE l.source_id = ? ORDER BY l.line, l.col, l.seq
        """,
        (file_id,),
    ).fetchall()


def backlinks(conn: "sqlite3.Connection", file_id: int) -> "list[Row]":
    return conn.execute(
        f"""
        SELECT f.path AS source, {LINK_KIND} AS kind, {LINK_TEXT} AS raw, l.line, l.col AS column
        FROM links l JOIN files f ON f.id = l.source_id
        WHERE l.target_id = ? AND l.source_id <> ? ORDER BY f.path, l.line, l.col
        """,
        (file_id, file_id),
    ).fetchall()


def note_problems(conn: "sqlite3.Connection", path: str) -> "list[Row]":
    return conn.execute(
        "SELECT severity, kind, message FROM problems WHERE path = ? ORDER BY id", (path,)
    ).fetchall()


UNREADABLE_WALK_MESSAGE = "cannot %"
"""A ``LIKE`` pattern: the walk problems whose path keeps its rows without a look, a folder it
could not list, an entry it could not look at or a symlink it could not follow (``vault.walk``:
they alone start with "cannot ", tests/unit/vault/test_walk.py)."""


def unread_above(conn: "sqlite3.Connection", path: str) -> "list[Row]":
    """The walk problems at ``path`` or a folder above it (the vault root included) that kept
    its rows unread: the note may be out of date (ARCHITECTURE "Unreadable is visible")."""
    parts = path.split("/")
    places = ["", *("/".join(parts[:end]) for end in range(1, len(parts) + 1))]
    marks = ", ".join("?" * len(places))
    return conn.execute(
        f"SELECT path, message FROM problems WHERE kind = 'walk' AND severity = 'error' "
        f"AND message LIKE ? AND path IN ({marks}) ORDER BY length(path), path",
        (UNREADABLE_WALK_MESSAGE, *places),
    ).fetchall()


def aliases_of(conn: "sqlite3.Connection", file_id: int) -> list[str]:
    return [
        row[0]
        for row in conn.execute(
            "SELECT alias FROM aliases WHERE file_id = ? ORDER BY position", (file_id,)
        )
    ]


def body_matches(conn: "sqlite3.Connection", expression: str, limit: int) -> "list[Row]":
    """Notes (not excluded) whose body matches an FTS5 expression: ``file_id``, ``path``,
    ``disk_rel``, at most ``limit``, by path."""
    return conn.execute(
        """
        SELECT f.id AS file_id, f.path AS path, f.disk_rel AS disk_rel
        FROM body_fts b CROSS JOIN notes n ON n.file_id = b.rowid CROSS JOIN files f ON f.id = b.rowid
        WHERE body_fts MATCH ? AND n.excluded = 0
        LIMIT ?
        """,
        (expression, limit),
    ).fetchall()

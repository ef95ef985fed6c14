"""The SQL of a ``NoteFilter`` (query/filters.py): its conditions on a note row ``n`` (notes)
joined to its file ``f`` (files), and a listing's ORDER BY; and the ``properties`` table read
back for ``notedex properties``. Stdlib only: the query path.

Property conditions read the ``properties`` table (one row per value, typed by its value) by
its ``(key, fold)`` index; the type rules are SEMANTICS 14.
"""

from notedex.vault.properties import CHECKBOX, DATE, DATETIME, LIST, NUMBER, TEXT, fold_text

TYPE_CHECKING = False  # no `typing` import on the query path; mypy honours the name
if TYPE_CHECKING:
    import sqlite3
    from typing import Any, Protocol

    class Condition(Protocol):
        """query.filters.Condition, as this module reads it (store imports no query module)."""

        @property
        def key(self) -> str: ...
        @property
        def op(self) -> str: ...
        @property
        def operand(self) -> str: ...
        @property
        def kind(self) -> str: ...
        @property
        def declared(self) -> str | None: ...

    class NoteFilter(Protocol):
        """query.filters.NoteFilter, as the store reads it."""

        @property
        def tags(self) -> tuple[str, ...]: ...
        @property
        def note_type(self) -> str | None: ...
        @property
        def folders(self) -> tuple[str, ...]: ...
        @property
        def where(self) -> tuple[Condition, ...]: ...
        @property
        def modified_since(self) -> int | None: ...
        @property
        def modified_before(self) -> int | None: ...
        @property
        def created_since(self) -> int | None: ...
        @property
        def created_before(self) -> int | None: ...
        @property
        def sort(self) -> str | None: ...
        @property
        def reverse(self) -> bool: ...
        @property
        def active(self) -> bool: ...


_PRESENT = "p.kind NOT IN ('null', 'object') AND NOT (p.kind = 'checkbox' AND p.fold = 'false')"
_COMPARE = {"=": "=", "!=": "=", "~=": "=", ">=": ">=", "<=": "<=", ">": ">", "<": "<"}


def note_conditions(
    conn: "sqlite3.Connection",
    nf: "NoteFilter",
    params: "list[Any]",
    *,
    tags_and_type: bool = True,
) -> list[str]:
    """SQL conditions (AND) that keep the notes ``nf`` keeps, on ``n`` and ``f`` (without its
    tags and type when ``tags_and_type`` is False: lookup tests those per candidate)."""
    from notedex.store.read import tag_filter, type_filter

    where: list[str] = []
    for tag in nf.tags if tags_and_type else ():
        where.append(tag_filter("n.file_id", tag, params))
    if nf.note_type and tags_and_type:
        where.append(type_filter(conn, nf.note_type, params))
    if nf.folders:
        where.append(_folders(nf.folders, params))
    for column, since, before in (
        ("f.mtime_ns", nf.modified_since, nf.modified_before),
        ("f.ctime_ns", nf.created_since, nf.created_before),
    ):
        if since is not None:
            where.append(f"{column} >= ?")
            params.append(since)
        if before is not None:
            where.append(f"{column} < ?")
            params.append(before)
    for condition in nf.where:
        where.append(_condition(condition, params))
    return where


def fill_kept(conn: "sqlite3.Connection", nf: "NoteFilter", table: str, column: str) -> None:
    """Fill the TEMP table ``table`` (the read-only connection's own, created by the caller)
    with ``column`` (``f.id`` or ``f.path``) of every note ``nf`` keeps, excluded notes never:
    what a filtered, streamed answer probes instead of a Python set (issue 35)."""
    params: list[Any] = []
    where = " AND ".join(["n.excluded = 0", *note_conditions(conn, nf, params)])
    conn.execute(f"DELETE FROM temp.{table}")
    conn.execute(
        f"INSERT INTO temp.{table} SELECT {column} FROM notes n JOIN files f"
        f" ON f.id = n.file_id WHERE {where}",
        params,
    )


def notes_kept(
    conn: "sqlite3.Connection", column: str, nf: "NoteFilter", params: "list[Any]"
) -> str:
    """``column`` (a file id) is one of the notes ``nf`` keeps (excluded notes never are)."""
    where = ["n.excluded = 0", *note_conditions(conn, nf, params)]
    return (
        f"{column} IN (SELECT n.file_id FROM notes n JOIN files f ON f.id = n.file_id "
        f"WHERE {' AND '.join(where)})"
    )


def _folders(folders: "tuple[str, ...]", params: "list[Any]") -> str:
    """SEMANTICS 14.6: a folder and everything below it; '' is the whole vault."""
    if "" in folders:
        return "1"
    parts = []
    for folder in folders:
        # f.path > 'a/' AND f.path < 'a0' ('0' follows '/'): the paths under a/, by index.
        parts.append("(f.path > ? AND f.path < ?)")
        params += [folder + "/", folder + "0"]
    return "(" + " OR ".join(parts) + ")"


def _condition(c: "Condition", params: "list[Any]") -> str:
    """One ``--where`` (SEMANTICS 14.3, 14.5): a note has a row of that property that meets it."""
    if c.op not in ("present", "absent", "~=") and c.declared == LIST:
        return "1" if c.op == "!=" else "0"  # SEMANTICS 14.5: a list equals nothing
    params.append(c.key)
    head = "EXISTS (SELECT 1 FROM properties p WHERE p.file_id = n.file_id AND p.key = ?"
    if c.op in ("present", "absent"):
        exists = f"{head} AND {_PRESENT})"
        return exists if c.op == "present" else f"NOT {exists}"
    scope = "" if c.op == "~=" else " AND p.is_list = 0"
    exists = f"{head}{scope} AND ({_value_match(c, params)}))"
    return f"NOT {exists}" if c.op == "!=" else exists


def _value_match(c: "Condition", params: "list[Any]") -> str:
    """The test of one stored value ``p`` against the operand, by the operand's type and the
    property's (declared, else the value's own): mismatched types never match."""
    sql_op = _COMPARE[c.op]
    declared = None if c.declared == LIST else c.declared
    tests: list[str] = []
    if c.kind == NUMBER and declared in (None, NUMBER):
        is_number = "p.kind = 'number'" if declared is None else "p.num IS NOT NULL"
        tests.append(f"({is_number} AND p.num {sql_op} ?)")
        params.append(float(c.operand))
    if c.kind in (DATE, DATETIME) and declared in (None, DATE, DATETIME):
        from notedex.vault.properties import datetime_key

        tests.append(f"(p.kind IN ('date', 'datetime') AND p.fold {sql_op} ?)")
        params.append(datetime_key(c.operand))
    if c.kind == CHECKBOX and sql_op == "=" and declared in (None, CHECKBOX):
        is_checkbox = "p.kind = 'checkbox'"
        if declared == CHECKBOX:  # SEMANTICS 14.4: the text true/false is a checkbox then
            is_checkbox = (
                "(p.kind = 'checkbox' OR (p.kind = 'text' AND p.fold IN ('true', 'false')))"
            )
        tests.append(f"({is_checkbox} AND p.fold = ?)")
        params.append(c.operand.lower())
    if declared in (None, TEXT):
        # SEMANTICS 14.5: a text property compares as text whatever the operand looks like.
        is_text = "p.kind = 'text'" if declared is None else "p.kind NOT IN ('null', 'object')"
        if declared == TEXT and sql_op != "=":
            is_text = "p.kind = 'text'"
        if sql_op == "=" or c.kind == TEXT:
            tests.append(f"({is_text} AND p.fold {sql_op} ?)")
            params.append(_text_key(c.operand))
    return " OR ".join(tests) or "0"


def _text_key(text: str) -> str:
    return fold_text(text)


def order_by(
    conn: "sqlite3.Connection", nf: "NoteFilter", params: "list[Any]", default: str = "f.path"
) -> str:
    """The ORDER BY of a listing (SEMANTICS 14.7): ``nf.sort`` (path order breaks ties, notes
    without the property last), else ``default``; ``nf.reverse`` turns it round."""
    direction = " DESC" if nf.reverse else ""
    sort = nf.sort
    if sort is None:
        return f"f.path{direction}" if default == "f.path" else default
    if sort == "path":
        return f"f.path{direction}"
    if sort == "modified":
        return f"f.mtime_ns{direction}, f.path"
    if sort == "created":
        return f"f.ctime_ns{direction}, f.path"
    if sort == "title":
        from notedex.store.read import register_fold
        from notedex.store.schema import NOTE_TITLE

        register_fold(conn)
        return f"nx_fold({NOTE_TITLE}){direction}, f.path"
    # numbers before text (SQLite's order of types), then the notes without it
    value = (
        "(SELECT coalesce(p.num, p.fold) FROM properties p WHERE p.file_id = n.file_id "
        "AND p.key = ? AND p.kind NOT IN ('null', 'object') ORDER BY p.position LIMIT 1)"
    )
    params += [sort, sort]
    return f"{value} IS NULL, {value}{direction}, f.path"


# -- `properties`: the table read back ---------------------------------------------------


def _listed(conn: "sqlite3.Connection", nf: "NoteFilter | None", params: "list[Any]") -> str:
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
    kept = _listed(conn, nf, params)
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
    kept = _listed(conn, nf, params)
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
    kept = _listed(conn, nf, params)
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

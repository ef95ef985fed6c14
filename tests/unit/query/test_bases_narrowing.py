"""query.bases.run: the top-level ``file.inFolder``/``file.hasTag`` conditions narrow the rows in
SQL and are then not evaluated again per row (no tag read for them); the answer equals every
filter evaluated in Python over every file (issue 32's base budget)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from notedex.query.bases.rows import Vault
from notedex.query.bases.run import Base, _answer, _filter_tree, run
from notedex.store import bases as store
from notedex.store.connect import connect_readonly
from tests.helpers import cli_json, write

NOW = dt.datetime(2026, 3, 10, 15, 4, 5)
NOTES = {
    "A/in.md": "---\nstatus: draft\n---\n#project #common\n",
    "A/deep/nested.md": "---\nstatus: done\n---\n#project/x #Project\n",
    "A/other.md": "#projects #project0 #projectx\n",
    "A/upper.md": "---\nstatus: draft\n---\n#PROJECT/Big\n",
    "A/none.md": "no tag\n",
    "A b/near.md": "#project\n",
    "A0/near.md": "#project\n",
    "A.md": "#project\n",
    "B/out.md": "---\nstatus: draft\n---\n#Project #book/fav\n",
    "B/book.md": "#book\n",
}
BASES = [
    {"filters": {"and": ['file.inFolder("A")', 'file.hasTag("project")']}},
    {"filters": {"and": ['file.inFolder("/A/")', 'file.hasTag("#Project", "book")']}},
    {"filters": 'file.hasTag("project")'},
    {"filters": 'file.inFolder("A")'},
    {"filters": {"and": ['file.inFolder("A")', 'file.inFolder("A/deep")']}},
    {"filters": {"and": ['file.inFolder("")', 'file.hasTag("book")']}},
    {"filters": {"or": ['file.inFolder("A")', 'file.hasTag("book")']}},
    {"filters": {"not": ['file.hasTag("project")']}},
    {
        "filters": {"and": ['file.hasTag("project")', {"and": ['file.inFolder("A")']}]},
        "views": [{"type": "table", "filters": {"and": ['status != "done"']}}],
    },
    {
        "filters": {"and": ['file.inFolder("A")']},
        "views": [{"type": "table", "filters": 'file.hasTag("project")', "order": ["file.tags"]}],
    },
]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("basenarrow")
    vault, db = root / "vault", root / "index.db"
    write(vault / ".obsidian" / "app.json", "{}")
    for rel, text in NOTES.items():
        write(vault / rel, text)
    write(vault / "A" / "pic.png", "not a note")
    cli_json(vault, db, "status")  # builds the index
    return db


@pytest.fixture
def conn(db: Path) -> Iterator[Any]:
    connection = connect_readonly(db)
    try:
        yield connection
    finally:
        connection.close()


def _every_filter_in_python(conn: Any, base: Base) -> dict[str, Any]:
    """The answer with no narrowing: every file, every filter evaluated per row."""
    view = base.view(None)
    filters = (base.filters, _filter_tree(view.get("filters"), base.source))
    return _answer(base, view, filters, Vault(conn, store.file_rows(conn)), None, NOW)


@pytest.mark.parametrize("data", BASES, ids=range(len(BASES)))
def test_the_narrowed_answer_is_every_filter_evaluated(conn: Any, data: dict[str, Any]) -> None:
    base = Base(data, "t.base")
    assert run(conn, base, None, now=NOW) == _every_filter_in_python(conn, base)


def test_narrowed_conditions_read_no_tags(conn: Any) -> None:
    """``file.hasTag`` decided by the narrowing is not evaluated per row: no tag is read."""
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    base = Base(BASES[0] | {"formulas": {"s": "file.size + 1"}}, "t.base")
    answer = run(conn, base, None, now=NOW)
    conn.set_trace_callback(None)
    assert [row["path"] for row in answer["rows"]] == ["A/deep/nested.md", "A/in.md", "A/upper.md"]
    assert len(statements) == 1, statements  # the rows' one SELECT, no tags_of_files
    tagged = Base(BASES[9], "t.base")  # file.tags shown: the tags are read, once
    statements.clear()
    conn.set_trace_callback(statements.append)
    rows = run(conn, tagged, None, now=NOW)["rows"]
    conn.set_trace_callback(None)
    assert rows[0] == {"path": "A/deep/nested.md", "file.tags": ["project/x", "Project"]}
    assert len(statements) == 2 and "json_each" in statements[1], statements

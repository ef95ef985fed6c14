"""`quote` and `quote_check` in-process (query/quote.py), over a real vault and a real index."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from notedex.error_kinds import NoteNotFound
from notedex.errors import UsageError
from notedex.query.quote import load_quotes, quote, quote_check
from notedex.store.connect import connect_readonly
from tests.helpers import run_inprocess, write
from tests.indexcheck import age


@pytest.fixture
def indexed(vault: Path, db_path: Path) -> tuple[Path, Path]:
    write(vault / "n.md", "---\ntitle: N\n---\nSome *emphasised* words\nand a [[Other|link]].\n")
    age(vault)
    assert run_inprocess("index", "--vault", vault, "--db", db_path).code == 0
    return vault, db_path


def test_quote_finds_a_passage_and_keeps_its_key_order(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        data = quote(conn, vault, "n", "emphasised words and a link")
    assert list(data) == ["path", "quote", "found", "match", "closest", "modified"]
    assert list(data["match"]) == [
        "line", "column", "firstLine", "lastLine", "cite", "text", "similarity",
    ]  # fmt: skip
    assert data["match"]["cite"] == "n.md:4-5"
    assert data["match"]["text"] == "emphasised* words\nand a [[Other|link"


def test_quote_of_a_missing_note_raises_and_check_reports_it(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    conn = connect_readonly(db)
    with conn:
        with pytest.raises(NoteNotFound):
            quote(conn, vault, "missing", "x")
        report = quote_check(
            conn, vault, [{"path": "missing", "text": "x"}, {"path": "n.md", "text": "Some"}]
        )
    assert (report["total"], report["found"], report["notFound"]) == (2, 1, 1)
    assert report["results"][0]["error"].startswith("no note matches 'missing'")
    assert report["results"][1]["error"] is None


def test_load_quotes_accepts_a_list_or_an_object(tmp_path: Path) -> None:
    items = [{"path": "a.md", "text": "t", "extra": 1}]
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps(items), encoding="utf-8")
    wrapped = tmp_path / "wrapped.json"
    wrapped.write_text(json.dumps({"quotes": items}), encoding="utf-8")
    assert load_quotes(str(listed)) == load_quotes(str(wrapped)) == [{"path": "a.md", "text": "t"}]
    overlong = tmp_path / "long.json"
    overlong.write_text(json.dumps([{"path": "a.md", "text": "x" * 5001}]), encoding="utf-8")
    with pytest.raises(UsageError, match="too long"):
        load_quotes(str(overlong))

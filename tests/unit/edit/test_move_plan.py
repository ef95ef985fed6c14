"""edit/move.py: the plan of `mv` reads the files of the names it resolves, not every path."""

from __future__ import annotations

from pathlib import Path

import pytest

import notedex.edit.move as move
from notedex.indexing.reconcile import reconcile
from notedex.store.connect import connect_readonly
from notedex.store.writer import IndexWriter
from tests.helpers import write
from tests.indexcheck import make_vault


def _plan(
    tmp_path: Path, others: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[int, list[tuple[str, str, int]]]:
    """Calls of ``file_keys`` by the plan of moving ``a/`` (one note linked by a path and one
    by a shared name), in a vault of ``others`` more notes; and the plan's rewrites."""
    vault = make_vault(tmp_path / "v", {})
    write(vault / "a" / "S.md", "# S\n[[b/T]] [[Same]]\n")
    write(vault / "a" / "Same.md", "# Same in a\n")
    write(vault / "b" / "T.md", "# T\n[[a/S]] [[Same]]\n")
    write(vault / "c" / "Same.md", "# Same in c\n")
    for i in range(others):
        write(vault / f"f{i % 10}" / f"Other {i}.md", f"# Other {i}\n[[Other {i + 1}]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
    calls = 0
    real = move.file_keys

    def counted(path: str) -> tuple[str, str | None]:
        nonlocal calls
        calls += 1
        return real(path)

    monkeypatch.setattr(move, "file_keys", counted)
    conn = connect_readonly(tmp_path / "i.db")
    try:
        plan = move.plan_move(conn, str(vault), "a", "z/a")
    finally:
        conn.close()
    return calls, sorted((r.source, r.new_text, r.links) for r in plan.rewrites)


def test_the_plan_keys_the_files_of_its_names_not_every_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 33: the plan folded every path of the vault (0.7 s of a folder `mv` at 100k
    notes); it reads the files filed under the names it resolves by the index files_name_key.
    Ten times the notes, the same keys folded, and the same rewrites."""
    small_calls, small_plan = _plan(tmp_path / "small", 30, monkeypatch)
    large_calls, large_plan = _plan(tmp_path / "large", 300, monkeypatch)
    assert large_calls == small_calls, (small_calls, large_calls)
    assert large_plan == small_plan
    assert [source for source, _text, _links in small_plan] == ["b/T.md"]
    assert small_plan[0][1] == "# T\n[[a/S]] [[z/a/Same|Same]]\n"

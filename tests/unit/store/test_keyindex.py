"""store/keyindex.py: the hash -> id index the writer finds link candidates with; a colliding hash never changes a resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.indexing.reconcile import reconcile
from notedex.store import keyindex
from notedex.store.keyindex import FileKeyIndex
from notedex.store.writer import IndexWriter
from notedex.vault.resolve import file_keys
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


def test_key_index_files_names_and_note_stems() -> None:
    index = FileKeyIndex([(1, "A/Foo.md"), (2, "img/foo.png"), (3, "B/foo.md")])
    assert sorted(index.ids("foo")) == [1, 3]
    assert sorted(index.ids("foo.md")) == [1, 3]
    assert list(index.ids("foo.png")) == [2]
    assert list(index.ids("bar")) == []
    index.add([(4, "C/FOO")])  # no extension: a name key only
    assert sorted(index.ids("foo")) == [1, 3, 4]
    index.remove(1, "A/Foo.md")
    assert sorted(index.ids("foo")) == [3, 4]
    assert sorted(index.ids("foo.md")) == [3]
    index.add([(10 + i, f"n/{i}.md") for i in range(keyindex.REBUILD_AT + 1)])  # re-sorted
    assert list(index.ids("7")) == [17]
    assert sorted(index.ids("foo")) == [3, 4]
    assert len(index) == 2 + 1 + 1 + 2 * (keyindex.REBUILD_AT + 1)


def test_key_index_keys_are_the_resolver_keys() -> None:
    index = FileKeyIndex([(1, "Λόγος.md")])
    name_key, stem_key = file_keys("Λόγος.md")
    assert list(index.ids(name_key)) == [1] and list(index.ids(stem_key or "")) == [1]


def test_colliding_key_hashes_never_change_a_resolution(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every key hashes alike: every file is a candidate of every link, yet each link still
    resolves exactly as SEMANTICS 7 says (the candidates are re-filed by their real keys)."""
    monkeypatch.setattr(keyindex, "hash", lambda key: 42, raising=False)
    files = {
        "Note.md": "[[Dup]] [[pic.png]] [[pic]] [[v1.2]] [[A/B/Dup]] [[nope]]\n",
        "A/Start.md": "[[Dup]] [[note]]\n",
        "A/B/Dup.md": "",
        "C/Dup.md": "[[Dup]] [[../Note]]\n",
        "img/pic.png": "",
        "v1.2.md": "",
    }
    vault = make_vault(tmp_path / "v", files)
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
        write(vault / "Dup.md", "now a unique bare name?\n")
        (vault / "C" / "Dup.md").unlink()
        reconcile(writer)
    monkeypatch.undo()
    assert dump_index(db) == fresh_full_index(vault, tmp_path)

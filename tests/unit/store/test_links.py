"""store/links.py: the link candidates' look-ups."""

from __future__ import annotations

from pathlib import Path

from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import write
from tests.indexcheck import make_vault


def test_files_named_at_once_are_the_files_named_one_by_one(tmp_path: Path) -> None:
    """``files_named_many`` (a refresh's suggestions, read in one statement) gives each key
    what ``files_named`` gives it: notes by name and stem, attachments, case, no file."""
    vault = make_vault(tmp_path / "v", {})
    for path in ("a/Dup.md", "b/dup.md", "c/Dup.md", "pic.png", "x/pic.png", "Solo.md", "raw"):
        write(vault / path, "# x\n" if path.endswith(".md") else "bytes")
    keys = ["dup", "dup.md", "pic.png", "solo", "solo.md", "raw", "nothing", "pic"]
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        at_once = writer.links.files_named_many(keys)
        assert at_once == {key: writer.links.files_named(key) for key in keys}
        assert at_once["dup"] == ["a/Dup.md", "b/dup.md", "c/Dup.md"]
        assert at_once["nothing"] == []

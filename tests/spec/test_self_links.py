"""Issue 33: the `self-link` finding, declared in notedex.codes and kept by the generic upkeep
(store/linkfindings.py): a note that links to itself by name or path, without a heading or
block. Obsidian resolves such a link (it is not broken): a warning-level finding that never
changes the exit code. Kept exact on edits, moves and deletions (incremental = fresh)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from tests.helpers import SpecVault, dump_index, fresh_full_index


def self_links(v: SpecVault) -> list[tuple[str, int, int, str]]:
    data = v.health()
    assert data["selfLinkCount"] == len(data["selfLinks"]) == data["counts"]["self-link"]
    return [(f["source"], f["line"], f["column"], f["text"]) for f in data["selfLinks"]]


def same_as_fresh(v: SpecVault, tmp_path: Path) -> None:
    now = dump_index(v.db)
    fresh = fresh_full_index(v.root, tmp_path)
    assert now["link_findings"] == fresh["link_findings"]
    assert now == fresh


def test_a_link_to_itself_by_name_or_path_is_a_self_link(v: SpecVault) -> None:
    v.write("A/Me.md", "[[Me]] [[#Top]] [[Me#Top]] [[A/Me]] ![[Me.md]]\n[x](Me.md)\n# Top\n")
    v.write("Other.md", "[[Me]]\n")
    assert self_links(v) == [
        ("A/Me.md", 1, 1, "[[Me]]"),
        ("A/Me.md", 1, 28, "[[A/Me]]"),
        ("A/Me.md", 1, 37, "![[Me.md]]"),
        ("A/Me.md", 2, 1, "[x](Me.md)"),
    ]
    data = v.health()
    assert data["brokenLinks"] == []  # Obsidian resolves it: not broken
    assert v.run("health").code == 0  # a warning: the exit code stays 0


def test_an_excluded_note_reports_no_self_link(v: SpecVault) -> None:
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Hidden/"]}')
    v.write("Hidden/Me.md", "[[Me]]\n")
    v.write("Seen.md", "[[Seen]]\n")
    assert [s[0] for s in self_links(v)] == ["Seen.md"]


def test_self_links_follow_edits_moves_and_deletions(v: SpecVault, tmp_path: Path) -> None:
    v.write("Me.md", "[[Me]]\n")
    v.write("You.md", "[[Me]]\n")
    assert [s[0] for s in self_links(v)] == ["Me.md"]
    same_as_fresh(v, tmp_path)
    v.write("You.md", "[[You]] and [[Me]]\n")  # an edit adds one
    assert [s[0] for s in self_links(v)] == ["Me.md", "You.md"]
    same_as_fresh(v, tmp_path)
    (v.root / "Sub").mkdir()
    (v.root / "Me.md").rename(v.root / "Sub" / "Me.md")  # a move keeps it, under the new path
    assert [s[0] for s in self_links(v)] == ["Sub/Me.md", "You.md"]
    same_as_fresh(v, tmp_path)
    (v.root / "Sub" / "Me.md").rename(v.root / "Sub" / "Renamed.md")  # renamed: [[Me]] breaks
    assert [s[0] for s in self_links(v)] == ["You.md"]
    assert [b["source"] for b in v.health()["brokenLinks"]] == ["Sub/Renamed.md", "You.md"]
    same_as_fresh(v, tmp_path)
    v.write("Sub/Me.md", "a new Me: the link resolves to it\n")
    assert [s[0] for s in self_links(v)] == ["You.md"]
    same_as_fresh(v, tmp_path)
    shutil.move(v.root / "Sub", v.root / "Moved")  # a folder rename
    (v.root / "You.md").unlink()  # a deletion takes its finding with it
    assert self_links(v) == []
    same_as_fresh(v, tmp_path)


def test_a_self_link_in_a_comment_is_still_one(v: SpecVault, tmp_path: Path) -> None:
    v.write("Me.md", "%% [[Me]] %%\n")
    data: Any = v.health()
    assert [f["source"] for f in data["selfLinks"]] == ["Me.md"]
    same_as_fresh(v, tmp_path)

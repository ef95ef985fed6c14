"""SEMANTICS 8: reports (orphans, unlinked notes, dead ends, unused attachments, broken links,
warnings, graph, status).

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import (
    SpecVault,
    broken,
    cli_json,
    dump_index,
    fresh_full_index,
    paths_of,
    warned_paths,
    write,
)
from tests.indexcheck import age


def test_orphans_and_unlinked(v: SpecVault) -> None:
    v.write("Self.md", "# H\n[[Self]] [[#H]] [[#^id]] ![[Self#H]]\n")
    v.write("BrokenOnly.md", "[[Nowhere]]\n")
    v.write("Embedder.md", "![[Embedded]]\n")
    v.write("Embedded.md", "")
    v.write("Fm.md", '---\nrel: "[[FmTarget]]"\n---\n')
    v.write("FmTarget.md", "")
    v.write("ToAttachment.md", "![[pic.png]]\n")
    v.write_bytes("pic.png", b"x")
    v.write("Lonely.md", "nothing here #tag\n")
    v.write("Empty.md", "")
    h = v.health()
    assert paths_of(h["orphanNotes"]) == ["Empty.md", "Lonely.md", "Self.md"]
    assert paths_of(h["unlinkedNotes"]) == [
        "BrokenOnly.md",
        "Embedder.md",
        "Fm.md",
        "ToAttachment.md",
    ]
    assert h["orphanCount"] == 3
    g = v.graph()
    assert all(e["source"] != e["target"] for e in g["edges"])
    ids = {n["id"] for n in g["nodes"]}
    assert "" not in ids and "#H" not in ids and "Self" not in ids
    assert {lk["key"] for lk in v.show("Self.md")["links"]} == {None}
    assert all(not lk["broken"] for lk in v.show("Self.md")["links"])


def test_graph_counts_every_occurrence_and_skips_self_links(v: SpecVault) -> None:
    v.write(
        "One.md",
        "# Head\n[[Two]] [[Two]] [t](Two.md) [[One]] [[#Head]] [[#^id]] ![[pic.png]] [[Missing]]\n",
    )
    v.write("Two.md", "![[One]]\n")
    v.write_bytes("pic.png", b"x")
    v.write_bytes("unused.png", b"x")
    g = v.graph()
    nodes = {n["id"]: (n["label"], n["kind"]) for n in g["nodes"]}
    assert nodes["One.md"] == ("One", "note")
    assert nodes["Two.md"] == ("Two", "note")
    assert nodes["pic.png"][1] == "attachment"
    assert nodes["Missing"] == ("Missing", "unresolved")
    assert set(nodes) <= {"One.md", "Two.md", "pic.png", "Missing", "unused.png"}
    edges = sorted((e["source"], e["target"], e["count"]) for e in g["edges"])
    assert edges == [
        ("One.md", "Missing", 1),
        ("One.md", "Two.md", 3),
        ("One.md", "pic.png", 1),
        ("Two.md", "One.md", 1),
    ]


def test_warnings_for_ignored_properties(v: SpecVault) -> None:
    v.write("Clean.md", "---\ntags: [fine]\naliases: [Fine]\n---\n")
    v.write("Tag.md", "---\ntag: x\n---\n")
    v.write("Alias.md", "---\nalias: x\n---\n")
    v.write("Space.md", "---\ntags: [has space]\n---\n")
    v.write("NonStr.md", "---\naliases: [1, ok]\n---\n")
    h = v.health()
    assert warned_paths(h) == {"Tag.md", "Alias.md", "Space.md", "NonStr.md"}
    assert all(w["message"] for w in h["warnings"])
    assert v.note("NonStr.md")["aliases"] == ["ok"]


def test_status_counts_agree_with_health(v: SpecVault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Start.md", "[[Dup]] [[Gone]]\n")
    v.write("Space.md", "---\ntags: a, b\n---\n")
    h = v.health()
    counts = v.json("status")["counts"]
    assert counts["brokenLinks"] == h["brokenLinkCount"] == 1
    assert counts["warnings"] == len(h["warnings"]) == 2


def test_status_note_count_agrees_with_scan_and_names_the_excluded(v: SpecVault) -> None:
    """SEMANTICS 1: Excluded files stay out of reports; status counts them apart."""
    v.write("Keep.md", "[[Old]]\n")
    v.write("Archive/Old.md", "")
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Archive/"]}')
    scan = v.json("scan")
    counts = v.json("status")["counts"]
    assert counts["notes"] == scan["noteCount"] == 1
    assert counts["excludedNotes"] == 1


def test_deleted_notes_leave_the_reports(v: SpecVault) -> None:
    # (a scan that finds no file at all keeps the index, by design: ARCHITECTURE "Freshness")
    v.write("A.md", "[[B]]\n")
    v.write("B.md", "")
    v.write("C.md", "[[B]]\n")
    age(v.root)
    assert v.paths() == ["A.md", "B.md", "C.md"]
    (v.root / "A.md").unlink()
    (v.root / "B.md").unlink()
    assert v.paths() == ["C.md"]
    assert v.targets("C.md") == ["BROKEN:B"]
    assert v.run("show", "A.md").code == 2


def test_graph_keeps_an_unresolved_key_apart_from_a_file_with_that_path(v: SpecVault) -> None:
    v.write("Gone.md", "")
    v.write("S.md", "[[Gone.md.md]]\n")
    assert broken(v.health()) == [("S.md", 1, 1, "[[Gone.md.md]]", "Gone.md")]
    g = v.graph()
    assert sorted((n["id"], n["kind"]) for n in g["nodes"]).count(("Gone.md", "note")) == 1
    unresolved = {n["id"] for n in g["nodes"] if n["kind"] == "unresolved"}
    assert len(unresolved) == 1
    assert [(e["source"], e["target"] in unresolved, e["count"]) for e in g["edges"]] == [
        ("S.md", True, 1)
    ]


def test_s8_note_reached_only_through_a_linked_image_is_not_an_orphan(tmp_path: Path) -> None:
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", "{}")
    write(vault / "Target.md", "target\n")
    write(vault / "Readme.md", "[![build](img/badge.png)](Target.md)\n")
    (vault / "img").mkdir()
    (vault / "img" / "badge.png").write_bytes(b"\x89PNG")
    health = cli_json(vault, db, "health")
    assert health["orphanNotes"] == []
    assert [n["path"] for n in health["unlinkedNotes"]] == ["Readme.md"]
    shown = cli_json(vault, db, "show", "Readme.md")
    assert [(lk["target"], lk["broken"]) for lk in shown["links"]] == [
        ("Target.md", False),
        ("img/badge.png", False),
    ]


# --- SEMANTICS 1 + 8: excluded files are "left out of reports" -----------------------------


def test_s8_a_link_from_an_excluded_note_does_not_save_a_note_from_the_orphan_list(
    tmp_path: Path,
) -> None:
    # Obsidian's graph (whose "Orphans" SEMANTICS 8 follows) hides excluded files and their
    # edges; notedex's own graph leaves them out too, so health must agree with it.
    vault, db = tmp_path / "v", tmp_path / "db.sqlite"
    write(vault / ".obsidian" / "app.json", '{"userIgnoreFilters": ["Archive/"]}')
    write(vault / "Archive" / "Old.md", "[[Target]] [[Linker]]\n")
    write(vault / "Target.md", "no links\n")
    write(vault / "Linker.md", "[[Elsewhere]]\n")
    health = cli_json(vault, db, "health", ok=(1,))
    assert [n["path"] for n in health["orphanNotes"]] == ["Target.md"]
    assert [n["path"] for n in health["unlinkedNotes"]] == ["Linker.md"]
    graph = cli_json(vault, db, "graph")
    assert all(edge["target"] != "Target.md" for edge in graph["edges"])
    # the link still resolves and is still a backlink of the note itself
    shown = cli_json(vault, db, "show", "Target.md")
    assert [b["source"] for b in shown["backlinks"]] == ["Archive/Old.md"]


def test_dead_ends_are_notes_with_no_link_out(v: SpecVault) -> None:
    """SEMANTICS 8.8: self-links do not count; a broken link or an embed does."""
    v.write("Self.md", "# H\n[[Self]] [[#H]]\n")
    v.write("Linked.md", "nothing out\n")
    v.write("Hub.md", "[[Linked]] [[Self]]\n")
    v.write("Broken.md", "[[Nowhere]]\n")
    v.write("Embeds.md", "![[pic.png]]\n")
    v.write_bytes("pic.png", b"x")
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Archive/"]}')
    v.write("Archive/Old.md", "")
    data = v.health()
    assert data["deadEnds"] == [
        {"path": "Linked.md", "title": "Linked"},
        {"path": "Self.md", "title": "Self"},
    ]
    assert data["deadEndCount"] == 2
    v.write("Linked.md", "now [[Hub]]\n")
    v.write("Hub.md", "")
    assert [d["path"] for d in v.health()["deadEnds"]] == ["Hub.md", "Self.md"]


def test_unused_attachments_are_linked_or_embedded_by_no_note(v: SpecVault, tmp_path: Path) -> None:
    """SEMANTICS 8.9: any kind of link from any note uses an attachment."""
    v.write_bytes("img/used.png", b"x")
    v.write_bytes("img/md.png", b"x")
    v.write_bytes("img/unused.png", b"x")
    v.write_bytes("doc.pdf", b"x")
    v.write("A.md", "![[used.png]] ![alt](img/md.png) [[doc.pdf#page=2]]\n")
    data = v.health()
    assert data["unusedAttachments"] == [{"path": "img/unused.png"}]
    assert data["unusedAttachmentCount"] == 1
    v.write("A.md", "![[unused.png]]\n")  # links change
    v.write_bytes("new.canvas", b"{}")  # a new attachment
    (v.root / "doc.pdf").rename(v.root / "img" / "doc.pdf")  # a move: still unused
    (v.root / "img" / "used.png").unlink()
    assert [a["path"] for a in v.health()["unusedAttachments"]] == [
        "img/doc.pdf",
        "img/md.png",
        "new.canvas",
    ]
    assert dump_index(v.db) == fresh_full_index(v.root, tmp_path)

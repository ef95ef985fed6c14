"""SEMANTICS 7: resolving a link to a file, and re-resolution after vault changes.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

import unicodedata
from pathlib import Path

import pytest

from tests.helpers import (
    SpecVault,
    paths_of,
    warned_paths,
    write,
)
from tests.indexcheck import age


def test_bare_ambiguous_link_from_vault_root(v: SpecVault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Root.md", "[[Dup]]\n")
    # every candidate is inside the root folder: shortest path wins
    assert v.targets("Root.md") == ["C/Dup.md"]
    assert "Root.md" in warned_paths(v.health())


def test_relative_and_absolute_wikilinks(v: SpecVault) -> None:
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    v.write("Note.md", "")
    v.write(
        "A/B/Src.md",
        "[[./Dup]]\n[[../../C/Dup]]\n[[/C/Dup]]\n[[/Dup]]\n[[./Missing]]\n[[/Note]]\n[[../Dup]]\n",
    )
    assert v.targets("A/B/Src.md") == [
        "A/B/Dup.md",
        "C/Dup.md",
        "C/Dup.md",
        "BROKEN:/Dup",
        "BROKEN:./Missing",
        "Note.md",
        "BROKEN:../Dup",
    ]


def test_wrong_folder_is_broken_even_for_a_unique_name(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("S.md", "[[wrong/Note]] [[ote]] [[Not]]\n")
    assert v.targets("S.md") == ["BROKEN:wrong/Note", "BROKEN:ote", "BROKEN:Not"]


def test_upper_case_attachment_and_note_extensions(v: SpecVault) -> None:
    v.write_bytes("pic.PNG", b"\x89PNG")
    v.write("S.md", "[[pic.png]] ![[PIC.png]]\n")
    assert v.targets("S.md") == ["pic.PNG", "pic.PNG"]


def test_a_folder_named_like_a_note_is_not_a_note(v: SpecVault) -> None:
    v.write("x.md/inner.md", "[[x]]\n")
    v.write("S.md", "[[inner]] [[x.md/inner]]\n")
    assert v.paths() == ["S.md", "x.md/inner.md"]
    assert v.targets("S.md") == ["x.md/inner.md", "x.md/inner.md"]
    assert v.targets("x.md/inner.md") == ["BROKEN:x"]


def test_dotted_stems_and_extension_retry(v: SpecVault) -> None:
    v.write("v1.2.md", "")
    v.write("archive.tar.md", "")
    v.write_bytes("archive.tar.gz", b"x")
    v.write("S.md", "[[v1.2]] [[V1.2.md]] [[archive.tar]] [[archive.tar.gz]] [[v1]]\n")
    assert v.targets("S.md") == [
        "v1.2.md",
        "v1.2.md",
        "archive.tar.md",
        "archive.tar.gz",
        "BROKEN:v1",
    ]


@pytest.mark.slow
def test_links_re_resolve_when_the_target_is_created_deleted_renamed(v: SpecVault) -> None:
    v.write("Src.md", "[[Target]] ![[later.png]]\n")
    age(v.root)
    assert v.targets("Src.md") == ["BROKEN:Target", "BROKEN:later.png"]
    assert v.run("health").code == 1

    v.write("Target.md", "")
    v.write_bytes("later.png", b"x")
    assert v.targets("Src.md") == ["Target.md", "later.png"]
    assert v.health()["brokenLinks"] == []
    assert v.run("health").code == 0
    assert [b["source"] for b in v.show("Target.md")["backlinks"]] == ["Src.md"]

    (v.root / "Target.md").rename(v.root / "Renamed.md")
    assert v.targets("Src.md") == ["BROKEN:Target", "later.png"]
    assert paths_of(v.health()["orphanNotes"]) == ["Renamed.md"]

    (v.root / "sub").mkdir()
    (v.root / "Renamed.md").rename(v.root / "sub" / "target.md")
    assert v.targets("Src.md") == ["sub/target.md", "later.png"]

    (v.root / "sub" / "target.md").unlink()
    (v.root / "later.png").unlink()
    assert v.targets("Src.md") == ["BROKEN:Target", "BROKEN:later.png"]
    assert v.run("health").code == 1


def test_a_new_closer_candidate_takes_over_an_ambiguous_link(v: SpecVault) -> None:
    v.write("A/Start.md", "[[Gamma]] [[Dup]]\n")
    v.write("C/Gamma.md", "")
    v.write("A/B/Dup.md", "")
    age(v.root)
    assert v.targets("A/Start.md") == ["C/Gamma.md", "A/B/Dup.md"]
    v.write("A/Gamma.md", "")
    v.write("A/Dup.md", "")
    assert v.targets("A/Start.md") == ["A/Gamma.md", "A/Dup.md"]
    (v.root / "A" / "Gamma.md").unlink()
    (v.root / "A" / "Dup.md").unlink()
    assert v.targets("A/Start.md") == ["C/Gamma.md", "A/B/Dup.md"]


def test_folder_rename_re_resolves_path_links(v: SpecVault) -> None:
    v.write("Src.md", "[[Old/Note]] [[Note]]\n")
    v.write("Old/Note.md", "")
    age(v.root)
    assert v.targets("Src.md") == ["Old/Note.md", "Old/Note.md"]
    (v.root / "Old").rename(v.root / "New")
    assert v.targets("Src.md") == ["BROKEN:Old/Note", "New/Note.md"]
    assert v.paths() == ["New/Note.md", "Src.md"]


def test_links_can_not_leave_the_vault(v: SpecVault, tmp_path: Path) -> None:
    write(tmp_path / "outside.md", "secret")
    v.write("S.md", "[[../outside]] [t](../outside.md) [t](../../../etc/passwd) [[/../outside]]\n")
    shown = v.show("S.md")
    assert [lk["broken"] for lk in shown["links"]] == [True, True, True, True]
    assert v.run("show", "../outside").code == 2
    assert v.run("show", str(tmp_path / "outside.md")).code == 2


def test_folders_and_hidden_files_are_not_link_targets(v: SpecVault) -> None:
    v.write("A/x.md", "")
    v.write(".trash/Gone.md", "")
    v.write("S.md", "[[A]] [[Gone]] [t](A/)\n")
    assert [lk["broken"] for lk in v.show("S.md")["links"]] == [True, True, True]
    assert v.run("show", ".trash/Gone.md").code == 2


def test_tie_break_folder_test_respects_segment_boundaries(v: SpecVault) -> None:
    v.write("A/Src.md", "[[Dup]]\n")
    v.write("AA/Dup.md", "")
    v.write("Z/Dup.md", "")
    # neither candidate is inside A/: the shortest path wins
    assert v.targets("A/Src.md") == ["Z/Dup.md"]


def test_tie_break_prefers_same_folder_over_shorter_path(v: SpecVault) -> None:
    v.write("Deep/er/Src.md", "[[Dup]]\n")
    v.write("Deep/er/Dup.md", "")
    v.write("Dup.md", "")
    v.write("X/Dup.md", "")
    assert v.targets("Deep/er/Src.md") == ["Deep/er/Dup.md"]


def test_nfd_target_created_later_resolves_nfc_link(v: SpecVault) -> None:
    v.write("S.md", "[[été]]\n")
    age(v.root)
    assert v.targets("S.md") == ["BROKEN:été"]
    v.write(unicodedata.normalize("NFD", "été") + ".md", "")
    assert v.targets("S.md") == ["été.md"]
    assert v.health()["brokenLinks"] == []


def test_editing_a_link_re_resolves_and_updates_backlinks(v: SpecVault) -> None:
    v.write("S.md", "[[A]]\n")
    v.write("A.md", "")
    v.write("B.md", "")
    age(v.root)
    assert [b["source"] for b in v.show("A.md")["backlinks"]] == ["S.md"]
    v.write("S.md", "[[B]] and more text\n")
    assert v.show("A.md")["backlinks"] == []
    assert [b["source"] for b in v.show("B.md")["backlinks"]] == ["S.md"]
    assert paths_of(v.health()["orphanNotes"]) == ["A.md"]


def test_case_only_twins_resolve_deterministically_with_a_warning(v: SpecVault) -> None:
    v.write("Note.md", "")
    v.write("note.md", "")
    v.write("S.md", "[[NOTE]]\n")
    first = v.targets("S.md")
    assert first[0] in ("Note.md", "note.md")
    # a second index built from scratch picks the same twin
    assert SpecVault(v.root, v.db.with_name("other.db")).targets("S.md") == first
    assert "S.md" in warned_paths(v.health())


def test_re_resolution_for_every_link_shape(v: SpecVault) -> None:
    v.write(
        "S.md",
        "[[foo]] [[New.md]] [[Sub/Deep]] [t](Sub/New%20File.md) ![[late.PDF]] [[été]]\n",
    )
    age(v.root)
    assert v.targets("S.md") == [
        "BROKEN:foo",
        "BROKEN:New",
        "BROKEN:Sub/Deep",
        "BROKEN:Sub/New File",
        "BROKEN:late.PDF",
        "BROKEN:été",
    ]
    v.write("FOO.md", "")
    v.write("New.md", "")
    v.write("Sub/Deep.md", "")
    v.write("Sub/New File.md", "")
    v.write_bytes("x/late.pdf", b"%PDF")
    v.write(unicodedata.normalize("NFD", "ÉTÉ") + ".md", "")
    assert v.targets("S.md") == [
        "FOO.md",
        "New.md",
        "Sub/Deep.md",
        "Sub/New File.md",
        "x/late.pdf",
        "ÉTÉ.md",
    ]
    assert v.json("health", ok=(0,))["brokenLinks"] == []


def test_moving_the_source_note_re_resolves_its_relative_and_tie_break_links(v: SpecVault) -> None:
    v.write("A/Src.md", "[[./Dup]] [[Dup]]\n")
    v.write("A/Dup.md", "")
    v.write("C/Dup.md", "")
    age(v.root)
    assert v.targets("A/Src.md") == ["A/Dup.md", "A/Dup.md"]
    (v.root / "A" / "Src.md").rename(v.root / "C" / "Src.md")
    assert v.targets("C/Src.md") == ["C/Dup.md", "C/Dup.md"]


def test_ambiguity_warning_goes_away_with_the_second_candidate(v: SpecVault) -> None:
    v.write("A/Start.md", "[[Dup]]\n")
    v.write("A/B/Dup.md", "")
    v.write("C/Dup.md", "")
    age(v.root)
    assert warned_paths(v.health()) == {"A/Start.md"}
    (v.root / "C" / "Dup.md").unlink()
    assert v.health()["warnings"] == []
    v.write("C/Dup.md", "")
    assert warned_paths(v.health()) == {"A/Start.md"}


def test_hidden_target_created_later_stays_broken(v: SpecVault) -> None:
    v.write("S.md", "[[Secret]]\n")
    age(v.root)
    v.write(".trash/Secret.md", "")
    v.write(".Secret.md", "")
    assert v.targets("S.md") == ["BROKEN:Secret"]


def test_path_suffix_match_is_a_plain_string_suffix(v: SpecVault) -> None:
    v.write("sub/Note.md", "")
    v.write("S.md", "[[ub/Note]]\n")
    assert v.targets("S.md") == ["sub/Note.md"]

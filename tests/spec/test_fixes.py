"""SEMANTICS 8.3: fix suggestions for broken links (`alias`, `folder`), through `health --json`,
kept up to date as the vault changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import SpecVault, dump_index, fresh_full_index


def fixes(v: SpecVault) -> list[tuple[str, str | None, str | None]]:
    return [(b["text"], b["suggestion"], b["reason"]) for b in v.health()["brokenLinks"]]


def test_alias_suggests_the_real_name_with_the_alias_as_display(v: SpecVault) -> None:
    v.write("Areas/Golang.md", "---\naliases: [Go notes]\n---\n")
    v.write("Src.md", "[[go NOTES]] [[Nothing]]\n")
    assert (
        fixes(v)
        == [
            ("[[Nothing]]", None, None),
            ("[[go NOTES]]", "[[Golang|go NOTES]]", "alias"),
        ][::-1]
    )


def test_folder_suggests_the_link_obsidian_would_write(v: SpecVault) -> None:
    v.write("Archive/Plan.md", "")
    v.write("Areas/Dup.md", "")
    v.write("Archive/Dup.md", "")
    v.write_bytes("img/pic.png", b"x")
    v.write(
        "Src.md", "[[Projects/Plan|the plan]] [[Old/Dup]] ![[media/pic.png]] [x](Else/Plan.md)\n"
    )
    assert fixes(v) == [
        ("[[Projects/Plan|the plan]]", "[[Plan|the plan]]", "folder"),
        ("[[Old/Dup]]", None, None),  # two Dup notes: the first by path would be a guess
        ("![[media/pic.png]]", "[[pic.png]]", "folder"),
        ("[x](Else/Plan.md)", "[[Plan|x]]", "folder"),
    ]


def test_an_alias_or_a_name_several_files_share_is_no_suggestion(
    v: SpecVault, tmp_path: Path
) -> None:
    """Issue 33's review: on a 10k vault `[[AI]]` was offered one of 46 notes with the alias
    `AI` (confidence 0.9), `[[x/Index 3]]` one of two `Index 3` notes: the first by path, a
    guess. With one candidate left the suggestion comes back, as the vault changes."""
    v.write("A/Golang.md", "---\naliases: [AI]\n---\n")
    v.write("B/Learning.md", "---\naliases: [ai]\n---\n")
    v.write("A/Index 3.md", "")
    v.write("B/Index 3.md", "")
    v.write("Src.md", "[[AI]] [[zz/Index 3|idx]]\n")
    assert fixes(v) == [("[[AI]]", None, None), ("[[zz/Index 3|idx]]", None, None)]
    v.write("B/Learning.md", "no alias now\n")
    (v.root / "B/Index 3.md").unlink()
    assert fixes(v) == [
        ("[[AI]]", "[[Golang|AI]]", "alias"),
        ("[[zz/Index 3|idx]]", "[[Index 3|idx]]", "folder"),
    ]
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]


def test_a_typo_keeps_the_numbers_and_never_replaces_a_name_that_exists(
    v: SpecVault, tmp_path: Path
) -> None:
    """Issue 33's review on a 10k vault: `[[x/Index 3]]` (two `Index 3` notes) was offered
    `Index 7`, `[[x/Plan 10]]` `Plan 12`: numbered notes of a series, not typos. A name that
    exists as written (several files, or an alias) gets no `typo` fix; a typo that keeps the
    numbers still does."""
    v.write("A/Index 3.md", "")
    v.write("B/Index 3.md", "")
    v.write("Index 7.md", "")
    v.write("Plan 12.md", "")
    v.write("2023-05-26.md", "")
    v.write("Report 2024.md", "")
    v.write("X.md", "---\naliases: [Roadmaps]\n---\n")
    v.write("Y.md", "---\naliases: [Roadmaps]\n---\n")
    v.write("Roadmap.md", "")
    v.write(
        "Src.md",
        "[[x/Index 3]] [[x/Plan 10]] [[2023-05-25]] [[Reprt 2024]] [[Roadmaps]] [[Road map]]\n",
    )
    assert fixes(v) == [
        ("[[x/Index 3]]", None, None),
        ("[[x/Plan 10]]", None, None),
        ("[[2023-05-25]]", None, None),
        ("[[Reprt 2024]]", "[[Report 2024]]", "typo"),
        ("[[Roadmaps]]", None, None),  # an alias of two notes, not a typo of `Roadmap`
        ("[[Road map]]", "[[Roadmap]]", "typo"),
    ]
    (v.root / "B/Index 3.md").unlink()
    assert fixes(v)[0] == ("[[x/Index 3]]", "[[Index 3]]", "folder")
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]


def test_a_note_is_not_its_own_alias_fix(v: SpecVault) -> None:
    v.write("Src.md", "---\naliases: [Elsewhere]\n---\n[[Elsewhere]]\n")
    assert fixes(v) == [("[[Elsewhere]]", None, None)]


@pytest.mark.slow
def test_suggestions_follow_new_aliases_and_files(v: SpecVault, tmp_path: Path) -> None:
    v.write("Src.md", "[[Go notes]] [[Old/Plan]]\n")
    assert fixes(v) == [("[[Go notes]]", None, None), ("[[Old/Plan]]", None, None)]
    v.write("Golang.md", "---\naliases: [Go notes]\n---\n")  # an alias appears elsewhere
    v.write("New/Plan.md", "")  # a file of that name appears in another folder
    assert fixes(v) == [
        ("[[Go notes]]", "[[Golang|Go notes]]", "alias"),
        ("[[Old/Plan]]", "[[Plan]]", "folder"),
    ]
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]
    v.write("Other/Plan.md", "")  # now two: either would be a guess
    v.write("Golang.md", "no aliases now\n")
    assert fixes(v) == [("[[Go notes]]", None, None), ("[[Old/Plan]]", None, None)]
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]
    (v.root / "New" / "Plan.md").unlink()
    (v.root / "Other" / "Plan.md").unlink()
    assert fixes(v) == [("[[Go notes]]", None, None), ("[[Old/Plan]]", None, None)]


@pytest.mark.slow
def test_renamed_suggests_the_new_name_after_a_move(v: SpecVault, tmp_path: Path) -> None:
    v.write("Projects/Old plan.md", "the plan\n")
    v.write("Src.md", "[[Old plan]] [[Projects/Old plan|see]]\n")
    assert fixes(v) == []
    (v.root / "Archive").mkdir()
    (v.root / "Projects" / "Old plan.md").rename(v.root / "Archive" / "Roadmap.md")
    assert fixes(v) == [
        ("[[Old plan]]", "[[Roadmap]]", "renamed"),
        ("[[Projects/Old plan|see]]", "[[Roadmap|see]]", "renamed"),
    ]
    # Moved again: the suggestion follows the file; deleted: no suggestion.
    (v.root / "Archive" / "Roadmap.md").rename(v.root / "Archive" / "Roadmap 2026.md")
    assert fixes(v)[0] == ("[[Old plan]]", "[[Roadmap 2026]]", "renamed")
    (v.root / "Archive" / "Roadmap 2026.md").unlink()
    assert fixes(v) == [("[[Old plan]]", None, None), ("[[Projects/Old plan|see]]", None, None)]
    # What a fresh index has apart from the history is the same (tests.helpers.dump_index).
    assert dump_index(v.db) == fresh_full_index(v.root, tmp_path)


def test_renamed_pairs_a_delete_and_a_create_of_the_same_content(v: SpecVault) -> None:
    v.write("Meeting notes.md", "agenda\n- one\n")
    v.write("Src.md", "[[Meeting notes]]\n")
    assert fixes(v) == []
    (v.root / "Meeting notes.md").unlink()  # a sync tool: a new file (new inode), same bytes
    v.write("2026-12 Meeting.md", "agenda\n- one\n")
    assert fixes(v) == [("[[Meeting notes]]", "[[2026-12 Meeting]]", "renamed")]


def test_renamed_needs_one_note_of_that_content_on_each_side(v: SpecVault) -> None:
    v.write("A one.md", "same\n")
    v.write("Src.md", "[[A one]]\n")
    assert fixes(v) == []
    (v.root / "A one.md").unlink()
    v.write("B two.md", "same\n")
    v.write("C three.md", "same\n")  # two candidates: no guess
    assert fixes(v) == [("[[A one]]", None, None)]


@pytest.mark.slow
def test_typo_suggests_a_note_one_edit_away(v: SpecVault, tmp_path: Path) -> None:
    v.write("Roadmap.md", "")
    v.write("Areas/Kubernetes.md", "")
    v.write("Src.md", "[[Raodmap]] [[Kubernete|k8s]] [[Roadmapp.md]] [[Rdmp]] [[Map]]\n")
    assert fixes(v) == [
        ("[[Raodmap]]", "[[Roadmap]]", "typo"),  # two letters swapped
        ("[[Kubernete|k8s]]", "[[Kubernetes|k8s]]", "typo"),  # one dropped
        ("[[Roadmapp.md]]", "[[Roadmap]]", "typo"),  # one added
        ("[[Rdmp]]", None, None),  # three edits
        ("[[Map]]", None, None),  # too short to guess
    ]
    # The suggestions follow the vault both ways.
    (v.root / "Roadmap.md").unlink()
    v.write("Kubernetes.md", "")  # a second Kubernetes: the link names its folder
    assert fixes(v)[:3] == [
        ("[[Raodmap]]", None, None),
        ("[[Kubernete|k8s]]", "[[Areas/Kubernetes|k8s]]", "typo"),
        ("[[Roadmapp.md]]", None, None),
    ]
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]
    v.write("Archive/Roadmap.md", "")  # created again elsewhere
    assert fixes(v)[0] == ("[[Raodmap]]", "[[Roadmap]]", "typo")
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]


def test_reasons_are_tried_alias_folder_renamed_typo(v: SpecVault) -> None:
    v.write("Golang.md", "---\naliases: [Plans]\n---\n")
    v.write("Plan.md", "")
    v.write("Src.md", "[[Plans]]\n")
    assert fixes(v) == [("[[Plans]]", "[[Golang|Plans]]", "alias")]  # not the typo `Plan`


def test_alias_keeps_the_display_text_the_reader_sees(v: SpecVault) -> None:
    """Issue 33: `[[Go notes|my go]]` was offered `[[Golang|Go notes]]`, which changes what the
    reader sees; the display text stays, and without one the alias as written does."""
    v.write("Golang.md", "---\naliases: [Go notes]\n---\n")
    v.write("Src.md", "[[Go notes|my go]] [[Go notes]]\n")
    assert fixes(v) == [
        ("[[Go notes|my go]]", "[[Golang|my go]]", "alias"),
        ("[[Go notes]]", "[[Golang|Go notes]]", "alias"),
    ]


def test_one_edit_on_four_letters_is_below_the_threshold(v: SpecVault) -> None:
    """SEMANTICS 8.10: `(placeholder/link)` was offered `ink` (issue 33); one edit on a name of
    five characters (confidence 0.6) is still offered."""
    v.write("ink.md", "")
    v.write("Sigma.md", "")
    v.write("Src.md", "[a](placeholder/link) [[Sigms]]\n")
    assert fixes(v) == [
        ("[a](placeholder/link)", None, None),
        ("[[Sigms]]", "[[Sigma]]", "typo"),
    ]

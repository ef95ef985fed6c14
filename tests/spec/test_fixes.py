"""SEMANTICS 8.3: fix suggestions for broken links (`alias`, `folder`), through `health --json`,
kept up to date as the vault changes."""

from __future__ import annotations

from pathlib import Path

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
        ("[[Old/Dup]]", "[[Archive/Dup]]", "folder"),  # two Dup notes: the path
        ("![[media/pic.png]]", "[[pic.png]]", "folder"),
        ("[x](Else/Plan.md)", "[[Plan|x]]", "folder"),
    ]


def test_a_note_is_not_its_own_alias_fix(v: SpecVault) -> None:
    v.write("Src.md", "---\naliases: [Elsewhere]\n---\n[[Elsewhere]]\n")
    assert fixes(v) == [("[[Elsewhere]]", None, None)]


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
    v.write("Other/Plan.md", "")  # now two: the path
    v.write("Golang.md", "no aliases now\n")
    assert fixes(v) == [("[[Go notes]]", None, None), ("[[Old/Plan]]", "[[New/Plan]]", "folder")]
    assert dump_index(v.db)["broken_links"] == fresh_full_index(v.root, tmp_path)["broken_links"]
    (v.root / "New" / "Plan.md").unlink()
    (v.root / "Other" / "Plan.md").unlink()
    assert fixes(v) == [("[[Go notes]]", None, None), ("[[Old/Plan]]", None, None)]

"""SEMANTICS 1: which files are in the vault, Excluded files, and file-system oddities.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

import json
import os
import unicodedata
from pathlib import Path

import pytest

from tests.helpers import (
    SpecVault,
    paths_of,
    pure_json,
    run_inprocess,
    write,
)
from tests.indexcheck import age


@pytest.mark.slow
def test_hidden_paths_never_appear_and_do_not_resolve(v: SpecVault) -> None:
    v.write("Main.md", "[[secret]] [[Trashed]] [[.hidden]] [[cfg]] #main\n")
    v.write(".obsidian/cfg.md", "[[Main]]\n")
    v.write(".trash/Trashed.md", "[[Main]] #trash\n")
    v.write(".hidden.md", "[[Main]]\n")
    v.write("sub/.git/secret.md", "[[Main]]\n")
    v.write("sub/.private/deep/secret.md", "[[Main]]\n")
    assert v.paths() == ["Main.md"]
    h = v.health()
    assert sorted(b["target"] for b in h["brokenLinks"]) == [".hidden", "Trashed", "cfg", "secret"]
    # no hidden note ever linked to Main.md: it is unlinked, not linked-in
    assert paths_of(h["unlinkedNotes"]) == ["Main.md"]
    g = v.graph()
    assert not any(
        "." in n["id"].split("/")[0][:1] for n in g["nodes"] if n["kind"] != "unresolved"
    )
    assert v.show("Main.md")["backlinks"] == []


def test_attachments_of_every_kind_are_link_targets_not_notes(v: SpecVault) -> None:
    v.write("Main.md", "[[doc.pdf#page=3]] [[board.canvas]] ![a](files/style.css) [[Pic.PNG]]\n")
    v.write_bytes("files/doc.pdf", b"%PDF-1.4")
    v.write("board.canvas", "{}")
    v.write("files/style.css", "body{}")
    v.write_bytes("pic.png", b"\x89PNG")
    assert v.paths() == ["Main.md"]
    assert v.targets("Main.md") == ["files/doc.pdf", "board.canvas", "files/style.css", "pic.png"]
    kinds = {n["id"]: n["kind"] for n in v.graph()["nodes"]}
    assert kinds == {
        "Main.md": "note",
        "files/doc.pdf": "attachment",
        "board.canvas": "attachment",
        "files/style.css": "attachment",
        "pic.png": "attachment",
    }


@pytest.mark.slow
def test_nfd_file_names_are_reported_nfc_and_resolve(v: SpecVault) -> None:
    nfd = unicodedata.normalize("NFD", "été")
    assert nfd != "été"
    v.write(f"{nfd}.md", "#été\n")
    v.write(f"Caf{unicodedata.normalize('NFD', 'é')}/x.md", "")
    v.write("Links.md", "[[été]]\n[[ÉTÉ]]\n[[" + nfd + "]]\n[t](%C3%A9t%C3%A9.md)\n[[Café/x]]\n")
    assert v.paths() == ["Café/x.md", "Links.md", "été.md"]
    assert v.targets("Links.md") == ["été.md", "été.md", "été.md", "été.md", "Café/x.md"]
    assert v.show("été.md")["path"] == "été.md"
    assert v.show("été")["title"] == "été"
    ids = {n["id"] for n in v.graph()["nodes"]}
    assert "été.md" in ids and "Café/x.md" in ids
    assert v.health()["brokenLinks"] == []


def _excluded_vault(v: SpecVault, filters: list[str]) -> None:
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": filters}))
    v.write("Main.md", "[[Old]] [[Archived thing]]\n")
    v.write("Archive/Old.md", "---\ntags: [ancient]\n---\n# Old\n[[Nowhere]]\n")
    v.write("Archive/Archived thing.md", "")


@pytest.mark.slow
def test_excluded_files_resolve_links_but_are_left_out_of_reports(v: SpecVault) -> None:
    _excluded_vault(v, ["Archive/"])
    assert v.targets("Main.md") == ["Archive/Old.md", "Archive/Archived thing.md"]
    assert v.paths() == ["Main.md"]
    h = v.health()
    # the excluded note's own broken link and its orphan-ness are not reported
    assert h["brokenLinks"] == []
    assert v.run("health").code == 0
    assert h["orphanNotes"] == []
    assert paths_of(h["unlinkedNotes"]) == ["Main.md"]
    assert v.scan("--tag", "ancient")["notes"] == []
    assert v.json("lookup", "ancient")["candidates"] == []


def test_excluded_files_do_not_seed_lookup(v: SpecVault) -> None:
    _excluded_vault(v, ["Archive/"])
    v.write("Archive/Linker.md", "[[Main]] [[Quuxlink]]\n")
    for query in ("Old", "Quuxlink"):
        lookup = v.json("lookup", query)
        assert "Archive/" not in json.dumps(lookup), query
    # only the excluded Linker's text holds `quuxlink`: its body answers nothing either
    assert v.json("lookup", "Quuxlink")["candidates"] == []
    # `old` is in Main's own text (its link [[Old]]): the body stage (issue 30) may show Main,
    # never the excluded note nor a seed of it
    lookup = v.json("lookup", "Old")
    assert [(c["path"], c["via"]["stage"]) for c in lookup["candidates"]] == [("Main.md", "body")]


def test_excluded_files_filter_without_trailing_slash(v: SpecVault) -> None:
    _excluded_vault(v, ["Archive"])
    assert v.targets("Main.md") == ["Archive/Old.md", "Archive/Archived thing.md"]
    assert v.paths() == ["Main.md"]


def test_special_characters_in_stems(v: SpecVault) -> None:
    v.write("C# Notes.md", "")
    v.write("a^b.md", "")
    v.write("x|y.md", "")
    v.write("semi;colon & more (1).md", "")
    v.write("emoji 🎉.md", "")
    v.write("S.md", "[[semi;colon & more (1)]] [[emoji 🎉]] [t](emoji%20%F0%9F%8E%89.md)\n")
    assert v.paths() == sorted(
        ["C# Notes.md", "a^b.md", "x|y.md", "semi;colon & more (1).md", "emoji 🎉.md", "S.md"]
    )
    assert v.targets("S.md") == ["semi;colon & more (1).md", "emoji 🎉.md", "emoji 🎉.md"]
    for name in ("C# Notes.md", "a^b.md", "x|y.md"):
        assert v.show(name)["path"] == name


def test_zero_byte_note(v: SpecVault) -> None:
    v.write("Zero.md", "")
    assert v.scan() == {
        "notes": [
            {
                "id": None,
                "title": "Zero",
                "type": None,
                "status": None,
                "path": "Zero.md",
                "tags": [],
                "aliases": [],
            }
        ],
        "errors": [],
        "noteCount": 1,
        "errorCount": 0,
    }
    assert paths_of(v.health()["orphanNotes"]) == ["Zero.md"]


def test_fifo_and_symlink_loop_do_not_hang_or_crash(v: SpecVault) -> None:
    v.write("Main.md", "[[Note]]\n")
    v.write("Note.md", "")
    os.mkfifo(v.root / "pipe.md")
    (v.root / "loop").symlink_to(v.root, target_is_directory=True)
    (v.root / "sub").mkdir()
    (v.root / "sub" / "up").symlink_to("..", target_is_directory=True)
    scan = v.scan()
    paths = [n["path"] for n in scan["notes"]]
    assert "Main.md" in paths and "Note.md" in paths
    assert not any(p.count("/") > 3 for p in paths), paths
    assert "pipe.md" not in paths
    assert v.targets("Main.md")[0] in {"Note.md"}
    v.health()


def test_invalid_utf8_name_and_content_are_errors_not_crashes(v: SpecVault) -> None:
    v.write("Good.md", "[[Good]]\n")
    bad_name = os.fsencode(v.root) + b"/bad\xff.md"
    with open(bad_name, "wb") as fh:
        fh.write(b"hello\n")
    v.write_bytes("Latin1.md", b"caf\xe9 #ok [[Good]]\n")
    v.write_bytes("Binary.md", b"\x00\x01\x02\xff" * 100)
    scan = v.scan()
    assert "Good.md" in [n["path"] for n in scan["notes"]]
    assert sorted(e["path"] for e in scan["errors"]) == ["Binary.md", "Latin1.md", "bad\ufffd.md"]
    assert scan["errorCount"] == 3
    assert v.note("Latin1.md")["tags"] == ["ok"]
    v.health()
    v.graph()


def test_nfc_and_nfd_twins_on_disk_do_not_crash(v: SpecVault) -> None:
    v.write("été.md", "")
    v.write(unicodedata.normalize("NFD", "été") + ".md", "")
    v.write("S.md", "[[été]]\n")
    scan = v.scan()
    assert sorted(n["path"] for n in scan["notes"]) == ["S.md", "été.md"]
    assert [e["path"] for e in scan["errors"]] == ["été.md"]
    assert v.targets("S.md") == ["été.md"]


@pytest.mark.slow
def test_vault_path_with_trailing_slash_or_through_a_symlink(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    real = SpecVault(root, tmp_path / "state" / "index.db")
    real.write("A/Note.md", "[[B]]\n")
    real.write("B.md", "")
    expected = real.paths()
    assert expected == ["A/Note.md", "B.md"]
    data = pure_json(run_inprocess("scan", "--vault", str(root) + "/", "--db", real.db, "--json"))
    assert sorted(n["path"] for n in data["notes"]) == expected
    assert data["noteCount"] == 2
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    for db in (real.db, tmp_path / "state" / "other.db"):
        data = pure_json(run_inprocess("scan", "--vault", link, "--db", db, "--json"))
        assert sorted(n["path"] for n in data["notes"]) == expected
        shown = pure_json(run_inprocess("show", "A/Note.md", "--vault", link, "--db", db, "--json"))
        assert shown["links"][0]["target"] == "B.md"


def test_db_inside_the_vault_through_a_symlinked_vault_path_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    (root / ".obsidian").mkdir(parents=True)
    write(root / "N.md", "")
    link = tmp_path / "link"
    link.symlink_to(root, target_is_directory=True)
    result = run_inprocess("scan", "--vault", link, "--db", root / "idx.db", "--json")
    assert (result.code, result.stdout) == (2, "")
    assert not (root / "idx.db").exists()


@pytest.mark.slow
def test_excluded_single_file_and_live_filter_change(v: SpecVault) -> None:
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": ["Drafts/Secret.md"]}))
    v.write("Drafts/Secret.md", "")
    v.write("Drafts/Public.md", "")
    v.write("S.md", "[[Secret]] [[Public]]\n")
    age(v.root)
    assert v.paths() == ["Drafts/Public.md", "S.md"]
    assert v.targets("S.md") == ["Drafts/Secret.md", "Drafts/Public.md"]
    # the user adds a folder to "Excluded files": the next report must honour it
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": ["Drafts/"]}))
    assert v.paths() == ["S.md"]
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": []}))
    assert v.paths() == ["Drafts/Public.md", "Drafts/Secret.md", "S.md"]


def test_malformed_app_json_does_not_break_anything(v: SpecVault) -> None:
    v.write(".obsidian/app.json", "{not json")
    v.write("S.md", "")
    assert v.paths() == ["S.md"]
    v.write(".obsidian/app.json", json.dumps({"userIgnoreFilters": "Drafts/"}))
    assert v.paths() == ["S.md"]


def test_excluded_notes_are_not_exported(v: SpecVault) -> None:
    _excluded_vault(v, ["Archive/"])
    data = v.json("export", "--format", "connector-v1")
    assert [r["sourceMetadata"]["relativePath"] for r in data["records"]] == ["Main.md"]
    (main,) = data["records"]
    assert "link:Archive/Old.md" in main["tags"]


def test_vault_below_a_hidden_folder_still_has_notes(tmp_path: Path) -> None:
    vault = SpecVault(tmp_path / ".config" / "vault", tmp_path / "state" / "i.db")
    vault.write("Note.md", "[[Other]]\n")
    vault.write("Other.md", "")
    assert vault.paths() == ["Note.md", "Other.md"]
    assert vault.targets("Note.md") == ["Other.md"]


def test_vault_folder_name_in_nfd(tmp_path: Path) -> None:
    vault = SpecVault(
        tmp_path / unicodedata.normalize("NFD", "Été vault"), tmp_path / "state" / "i.db"
    )
    vault.write("Note.md", "[[Other]] #x\n")
    vault.write("Other.md", "")
    assert vault.paths() == ["Note.md", "Other.md"]
    assert vault.targets("Note.md") == ["Other.md"]
    assert vault.show("Note.md")["tags"] == ["x"]


def test_relative_vault_path(tmp_path: Path) -> None:
    root = tmp_path / "vault"
    write(root / ".obsidian" / "app.json", "{}")
    write(root / "Note.md", "")
    result = run_inprocess("scan", "--vault", "vault", "--db", "i.db", "--json", cwd=tmp_path)
    assert result.code == 0, result.stderr
    assert [n["path"] for n in json.loads(result.stdout)["notes"]] == ["Note.md"]


def test_backslash_and_newline_in_file_names(v: SpecVault) -> None:
    v.write("a\\b.md", "")
    v.write("line\nbreak.md", "")
    v.write("S.md", "[[a\\b]]\n")
    assert v.paths() == ["S.md", "a\\b.md", "line\nbreak.md"]
    assert v.targets("S.md") == ["a\\b.md"]
    assert v.show("line\nbreak.md")["title"] == "line\nbreak"

"""The commands' contract on real vaults: exit codes, one JSON document on stdout, what `show`, `lookup` and `export` answer.

All in-process: the CLI through ``notedex.cli.main`` (`run_inprocess`) on a real vault under
``tmp_path`` with a real index, checked on its exact ``--json`` answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import (
    SpecVault,
    pure_json,
    run_inprocess,
    write,
)


def test_health_exit_code_is_1_with_broken_links_in_both_modes(v: SpecVault) -> None:
    v.write("S.md", "[[Gone]]\n")
    assert pure_json(v.run("health"), ok=(1,))["brokenLinkCount"] == 1
    text = run_inprocess("health", "--vault", v.root, "--db", v.db)
    assert text.code == 1 and "Gone" in text.stdout
    v.write("Gone.md", "")
    assert v.run("health").code == 0
    assert run_inprocess("health", "--vault", v.root, "--db", v.db).code == 0


@pytest.mark.parametrize(
    "args",
    [
        ("health", "--bogus"),
        ("scan", "--vault", "{missing}"),
        ("scan", "--vault", "{file}"),
        ("scan", "--db", "{vault}/idx.db"),
        ("scan", "--db", "{vault}/deep/er/idx.db"),
        ("show",),
        ("lookup", "x", "--limit", "abc"),
        ("frobnicate",),
    ],
)
def test_bad_usage_is_exit_2_with_empty_stdout(tmp_path: Path, args: tuple[str, ...]) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "N.md", "")
    write(tmp_path / "file.txt", "")
    subst = {"missing": tmp_path / "nope", "file": tmp_path / "file.txt", "vault": vault}
    argv = [a.format(**subst) for a in args]
    if "--vault" not in argv:
        argv += ["--vault", str(vault)]
    if "--db" not in argv:
        argv += ["--db", str(tmp_path / "state" / "i.db")]
    result = run_inprocess(*argv, "--json")
    assert result.code == 2, (result.code, result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.strip() and "Traceback" not in result.stderr
    assert not list(vault.rglob("*.db"))


@pytest.mark.slow
def test_every_command_prints_exactly_one_json_document(v: SpecVault) -> None:
    v.write("Note.md", "# Note\n[[Gone]] #t body words\n")
    # the very first command builds the index: progress must stay on stderr
    for args in (
        ("scan",),
        ("health",),
        ("graph",),
        ("show", "Note"),
        ("lookup", "note"),
        ("lookup", "zzzz-nothing"),
        ("status",),
        ("search", "body"),
        ("index",),
        ("index", "--full"),
        ("export", "--format", "connector-v1"),
    ):
        result = v.run(*args)
        pure_json(result, ok=(0, 1))


def test_show_finds_notes_by_title_and_path_without_extension(v: SpecVault) -> None:
    v.write("Dir/Custom.md", "---\ntitle: Zebra Quartz\n---\n")
    assert v.show("Zebra Quartz")["path"] == "Dir/Custom.md"
    assert v.show("Dir/Custom")["path"] == "Dir/Custom.md"
    assert v.show("Dir/Custom.md")["path"] == "Dir/Custom.md"


def test_export_links_and_tags(v: SpecVault) -> None:
    v.write("Dir/S.md", "---\ntags: [fm]\n---\n[[Note]] [[Gone]] #inline\n")
    v.write("Note.md", "")
    data = v.json("export", "--format", "connector-v1")
    rec = {r["sourceMetadata"]["relativePath"]: r for r in data["records"]}["Dir/S.md"]
    assert rec["id"] == "obsidian:Dir/S.md"
    assert rec["title"] == "S"
    assert sorted(rec["tags"]) == sorted(
        ["fm", "inline", "link:Note.md", "link:Gone", "folder:Dir"]
    )


def test_show_finds_a_note_with_a_backslash_in_its_name(v: SpecVault) -> None:
    v.write("a\\b.md", "")
    assert v.show("a\\b.md")["path"] == "a\\b.md"
    assert v.show("a\\b")["path"] == "a\\b.md"


def test_lookup_finds_tags_and_hides_hidden_files(v: SpecVault) -> None:
    v.write("Go.md", "#golang\n")
    v.write(".trash/Golang.md", "")
    v.write("Nested.md", "#lang/golang\n")
    found = [c["path"] for c in v.json("lookup", "golang")["candidates"]]
    assert sorted(found) == ["Go.md", "Nested.md"]


def test_scan_and_show_agree(v: SpecVault) -> None:
    v.write(
        "A.md", "---\ntitle: T\nid: 1\ntype: x\nstatus: y\ntags: [b, A]\naliases: [Al]\n---\n#c\n"
    )
    v.write("B/C.md", "#Z #z [[A]]\n")
    v.write("Bad.md", "---\n- x\n---\n#tag\n")
    for entry in v.scan()["notes"]:
        shown = v.show(entry["path"])
        assert {k: shown[k] for k in entry} == entry

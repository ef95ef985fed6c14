"""Failure classes found by asking Obsidian's help vault (bench/realvault, issue 30), rebuilt
on a small vault under ``tmp_path`` and asked through the CLI as a subprocess."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import pure_json, run_cli, write


def lookup(vault: Path, db: Path, question: str) -> dict:
    return pure_json(run_cli("lookup", question, "--vault", vault, "--db", db, "--json"))


def order(data: dict) -> list[str]:
    return [c["path"] for c in data["candidates"]]


def help_vault(vault: Path) -> None:
    for name in (
        "Linking/Aliases",
        "Linking/Internal links",
        "Plugins/Canvas",
        "Plugins/Command palette",
        "Plugins/Slash commands",
        "Extending/Obsidian CLI",
        "Extending/Obsidian URI",
        "Sync/Version history",
        "Sync/Plans and storage limits",
        "Sync/Sync limitations",
        "Plugins/Word count",
        "Plugins/Workspaces",
    ):
        write(vault / f"{name}.md", "How this part of the app works.\n")


def test_a_word_finds_the_name_that_holds_its_plural(vault: Path, db_path: Path) -> None:
    # Porter stems `alias` to `alia` but `aliases` to `alias`: they missed each other, and the
    # question came back "no note mentions alias"
    help_vault(vault)
    data = lookup(vault, db_path, "how do I add an alias to a note")
    assert order(data)[0] == "Linking/Aliases.md"
    assert data["stage"] == "title_tags"
    assert {"term": "alias", "as": "aliases", "how": "plural"} in data["rewritten"]
    data = lookup(vault, db_path, "canvases")  # and the other way round
    assert order(data) == ["Plugins/Canvas.md"]
    assert data["rewritten"] == [{"term": "canvases", "as": "canvas", "how": "plural"}]


def test_words_that_spell_an_acronym_find_the_name_in_capitals(vault: Path, db_path: Path) -> None:
    help_vault(vault)
    data = lookup(vault, db_path, "command line interface")
    assert order(data)[0] == "Extending/Obsidian CLI.md"
    assert data["rewritten"] == [{"term": "command line interface", "as": "cli", "how": "acronym"}]
    # initials that no name writes in capitals are no acronym: the words stay
    write(vault / "Notes/cps.md", "x\n")
    data = lookup(vault, db_path, "command palette shortcuts")
    assert data["rewritten"] == []
    assert order(data)[0] == "Plugins/Command palette.md"


def test_a_question_whose_words_mostly_occur_nowhere_is_answered_empty(
    vault: Path, db_path: Path
) -> None:
    help_vault(vault)
    for question, missing in (
        ("volcano eruption history", ["volcano", "eruption"]),  # not "Version history"
        ("how does a jet engine work?", ["jet", "engine"]),  # not "Workspaces"
        ("photosynthesis in plants", ["photosynthesis", "plants"]),  # not "Plans" (one edit)
        ("football world cup winners", ["football", "cup", "winners", "world"]),  # not "Word"
    ):
        data = lookup(vault, db_path, question)
        assert (data["stage"], data["candidates"]) == ("none", []), question
        assert data["missing"] == missing, question
        assert data["rewritten"] == [], question  # no guess stands for an absent subject
        assert data["message"].startswith("no note mentions "), question
    # the word the vault holds is listed apart, never as a candidate
    assert lookup(vault, db_path, "volcano eruption history")["partial"] == [
        "Sync/Version history.md"
    ]


def test_one_missing_word_beside_a_distinctive_one_still_answers(
    vault: Path, db_path: Path
) -> None:
    help_vault(vault)
    data = lookup(vault, db_path, "version history retention")
    assert order(data)[0] == "Sync/Version history.md"
    data = lookup(vault, db_path, "smyth word count")  # a one-edit guess is not a missing word
    assert order(data)[0] == "Plugins/Word count.md"


def test_the_name_that_says_least_beyond_the_question_comes_first(
    vault: Path, db_path: Path
) -> None:
    # "Obsidian" and "Introduction" are in many names: they say nothing the question left out,
    # while "Troubleshoot" and "selective" do. BM25 put the shortest title first.
    for product in ("Publish", "Sync", "Web Clipper", "Bases", "Canvas", "Licenses"):
        folder = product.replace(" ", "")
        write(vault / f"{folder}/Introduction to Obsidian {product}.md", "x\n")
    write(vault / "WebClipper/Troubleshoot Web Clipper.md", "x\n")
    write(vault / "WebClipper/Clip web pages.md", "x\n")
    write(vault / "Sync/Set up Obsidian Sync.md", "x\n")
    write(vault / "Sync/Sync settings and selective syncing.md", "x\n")
    data = lookup(vault, db_path, "web clipper")
    assert order(data)[:2] == [
        "WebClipper/Introduction to Obsidian Web Clipper.md",
        "WebClipper/Troubleshoot Web Clipper.md",
    ]
    data = lookup(vault, db_path, "set up sync")
    assert order(data)[:2] == [
        "Sync/Set up Obsidian Sync.md",
        "Sync/Sync settings and selective syncing.md",
    ]
    # a distinctive word asked for still decides: the note that holds it is first
    assert order(lookup(vault, db_path, "troubleshoot web clipper"))[0] == (
        "WebClipper/Troubleshoot Web Clipper.md"
    )


def test_a_notes_tool_word_in_the_title_counts_as_a_name_field(vault: Path, db_path: Path) -> None:
    # `file` is no term beside `formats`, but a title that says it too is the closer name;
    # "Advanced formatting syntax" hit `formats` in its title and its folder
    write(vault / "Editing and formatting/Advanced formatting syntax.md", "x\n")
    write(vault / "Editing and formatting/Basic formatting syntax.md", "x\n")
    write(vault / "Plugins/Format converter.md", "x\n")
    write(vault / "Files and folders/Accepted file formats.md", "x\n")
    data = lookup(vault, db_path, "file formats")
    assert data["terms"] == ["formats"]
    assert order(data)[0] == "Files and folders/Accepted file formats.md"
    # without the notes-tool word, the folder still counts as before
    assert (
        order(lookup(vault, db_path, "formats"))[0] != "Files and folders/Accepted file formats.md"
    )


def test_between_equal_names_the_note_whose_text_says_the_missed_word_comes_first(
    vault: Path, db_path: Path
) -> None:
    # the names of both notes hit `troubleshoot` only; one says `synchronisation` in its text
    write(vault / "Publish/Troubleshoot Publish.md", "Pages that fail to publish.\n")
    write(
        vault / "Cloud/Troubleshoot the cloud service.md",
        "When synchronisation stops between devices.\n",
    )
    write(vault / "Cloud/Synchronisation settings.md", "x\n")
    data = lookup(vault, db_path, "synchronisation troubleshoot")
    paths = order(data)
    assert paths.index("Cloud/Troubleshoot the cloud service.md") < paths.index(
        "Publish/Troubleshoot Publish.md"
    )
    # without the word in any text, the shorter name says less beyond the question
    paths = order(lookup(vault, db_path, "troubleshoot"))
    assert paths[0] == "Publish/Troubleshoot Publish.md"

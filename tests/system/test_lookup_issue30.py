"""Lookup finds the note a person means, and says so when nothing fits (issue 30).

Each failure class of the issue, rebuilt on a small vault under ``tmp_path`` and asked through
the CLI's ``main`` in this process (``run_inprocess``: the answers are the subject here; lookup
as a child process, its exit codes and stdout, is test_cli_conventions.py's), with the order or
the empty answer the issue expects.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import pure_json, run_inprocess, write


def lookup(vault: Path, db: Path, question: str, *args: str) -> dict:
    return pure_json(
        run_inprocess("lookup", question, "--vault", vault, "--db", db, "--json", *args)
    )


def order(data: dict) -> list[str]:
    return [c["path"] for c in data["candidates"]]


# -- question words ------------------------------------------------------------------------


def test_question_words_never_become_terms(vault: Path, db_path: Path) -> None:
    write(vault / "Kubernetes.md", "x\n")
    write(vault / "Talks and slides.md", "x\n")
    write(vault / "Mean time to repair.md", "x\n")
    write(vault / "Cover letters.md", "x\n")
    for question in (
        "which notes talk about kubernetes",
        "what's kubernetes",
        "what does kubernetes mean",
        "do my notes cover kubernetes",
    ):
        data = lookup(vault, db_path, question)
        assert data["terms"] == ["kubernetes"], question
        assert order(data) == ["Kubernetes.md"], question


def test_cjk_question_words_never_become_terms(vault: Path, db_path: Path) -> None:
    write(vault / "Docker.md", "x\n")
    assert lookup(vault, db_path, "有沒有談到 Docker 的筆記")["terms"] == ["Docker"]
    assert lookup(vault, db_path, "Docker 是什么意思")["terms"] == ["Docker"]


# -- loose matches -------------------------------------------------------------------------


def test_a_loose_match_uses_the_typed_word_never_a_stem_prefix(vault: Path, db_path: Path) -> None:
    write(vault / "Happily ever after.md", "x\n")
    write(vault / "Code generators.md", "x\n")
    write(vault / "Hub.md", "[[Happily ever after]] [[Code generators]]\n")
    # `happiness` stems to `happi`: as a prefix it matched "Happily" (`happili`)
    data = lookup(vault, db_path, "happiness")
    assert (data["stage"], data["candidates"]) == ("none", [])
    # the typed word inside a longer title word is still a loose match
    data = lookup(vault, db_path, "enerator")
    assert data["stage"] == "graph_expansion"
    assert order(data)[0] == "Code generators.md"
    assert data["candidates"][0]["via"]["matched"] == ["title (loose)"]


def test_a_loose_match_needs_four_typed_characters(vault: Path, db_path: Path) -> None:
    write(vault / "Genome notes.md", "x\n")
    write(vault / "Hub.md", "[[Genome notes]]\n")
    data = lookup(vault, db_path, "eno")
    assert (data["stage"], data["candidates"]) == ("none", [])


# -- tier 1: a name equal to the question --------------------------------------------------


def test_a_title_equal_to_the_question_with_its_stop_words_is_first(
    vault: Path, db_path: Path
) -> None:
    for name in ("Rename a tag", "Rename a note", "Renaming notes in bulk", "Note history"):
        write(vault / f"{name}.md", "x\n")
    for question in ("rename a note", "how do I rename a note?"):
        data = lookup(vault, db_path, question)
        assert order(data)[0] == "Rename a note.md", question
        assert data["candidates"][0]["via"] == {"stage": "title_tags", "matched": ["title"]}


def test_a_cjk_title_ending_in_a_stop_word_is_first(vault: Path, db_path: Path) -> None:
    for name in ("整理.md", "整理笔记.md", "房间整理.md", "资料整理术.md"):
        write(vault / name, "x\n")
    for question in ("整理笔记", "有哪些整理笔记"):
        data = lookup(vault, db_path, question)
        assert order(data)[0] == "整理笔记.md", question
        assert data["candidates"][0]["via"]["matched"] == ["title"]


# -- honest empty answers ------------------------------------------------------------------


def _writing_vault(vault: Path) -> None:
    for name in ("Work log", "Working hours", "Work in progress", "How things work", "Work plan"):
        write(vault / f"{name}.md", "x\n")
    for i in range(26):
        write(vault / f"Chapter {i:02}.md", f"draft {i} of the novel\n")
    write(vault / "Engines of fiction.md", "what drives a plot\n")


def test_a_question_whose_subject_occurs_nowhere_gets_nothing(vault: Path, db_path: Path) -> None:
    _writing_vault(vault)
    result = run_inprocess(
        "lookup", "how does a jet work?", "--vault", vault, "--db", db_path, "--json"
    )
    data = pure_json(result)
    assert (data["stage"], data["candidates"], data["total"]) == ("none", [], 0)
    assert data["missing"] == ["jet"]
    assert "no note mentions jet" in data["message"]
    # the generic word's notes are disclosed apart, never as candidates
    assert "Work log.md" in data["partial"]
    text = run_inprocess("lookup", "how does a jet work?", "--vault", vault, "--db", db_path)
    assert text.code == 0
    assert "no note mentions jet" in text.stdout


def test_a_distinctive_word_left_still_answers(vault: Path, db_path: Path) -> None:
    _writing_vault(vault)
    # `engine` is in one name of 32: not generic, so its note is an answer
    data = lookup(vault, db_path, "how does a jet engine work?")
    assert data["stage"] == "title_tags"
    assert order(data)[0] == "Engines of fiction.md"
    assert data["missing"] == ["jet"]


def test_a_word_in_a_body_is_not_missing(vault: Path, db_path: Path) -> None:
    _writing_vault(vault)
    # `novel` occurs in bodies only: the vault does mention it, so the absent rule does not
    # answer; `work` is generic, so the body stage does (the chapters, never "Work log")
    data = lookup(vault, db_path, "novel work")
    assert data["missing"] == []
    assert data["stage"] == "body"
    assert all(path.startswith("Chapter ") for path in order(data))


# -- the ranking model: rarity, aliases as names -------------------------------------------


def test_the_rare_word_outweighs_the_common_one(vault: Path, db_path: Path) -> None:
    """The issue's `kanban board`. (Of one term each, BM25's IDF already put the rare one
    first; this pins it under the weighted coverage. The next test is the one that changed.)"""
    for name in ("Board", "Board games", "Board meeting", "Boards and panels"):
        write(vault / f"{name}.md", "x\n")
    write(
        vault / "plugins/obsidian-kanban-plugin-by-mgmeyers.md",
        "---\naliases: [Kanban, Markdown-backed task lists, Trello-like lanes]\n"
        "tags: [plugin, community, tasks, views, lanes, cards, planning, markdown]\n---\n"
        "# Kanban\nx\n",
    )
    for i in range(20):
        write(vault / f"misc/Filler {i:02}.md", "x\n")
    data = lookup(vault, db_path, "kanban board")
    assert order(data)[0] == "plugins/obsidian-kanban-plugin-by-mgmeyers.md"
    assert set(order(data)[1:5]) == {
        "Board.md",
        "Board games.md",
        "Board meeting.md",
        "Boards and panels.md",
    }


def test_the_rarest_term_beats_two_common_ones(vault: Path, db_path: Path) -> None:
    for i in range(10):
        write(vault / f"sync/Sync conflict {i}.md", "x\n")
        write(vault / f"sync/Sync setup {i}.md", "x\n")
    write(vault / "Resolver.md", "x\n")
    for i in range(19):
        write(vault / f"misc/Filler {i:02}.md", "x\n")
    data = lookup(vault, db_path, "sync conflict resolver")
    assert order(data)[0] == "Resolver.md"
    assert all(path.startswith("sync/Sync conflict") for path in order(data)[1:10])


def test_a_partial_alias_inside_a_longer_question_is_a_name(vault: Path, db_path: Path) -> None:
    write(vault / "people/jdoe42.md", "---\naliases: [Jane Doe Smith]\n---\nbio\n")
    write(vault / "Pricing.md", "x\n")
    write(vault / "Pricing tiers.md", "x\n")
    write(vault / "Meeting notes.md", "met [[jdoe42]] about [[Pricing]]\n")
    write(vault / "Jane Austen reading list.md", "x\n")
    for question in ("what did jane doe smith say about pricing", "jane doe"):
        data = lookup(vault, db_path, question)
        assert data["stage"] == "title_tags", question
        assert order(data)[0] == "people/jdoe42.md", question
        first = data["candidates"][0]
        assert first["via"] == {"stage": "title_tags", "matched": ["alias"]}, question
        assert first["hits"] and all(fields == ["alias"] for fields in first["hits"].values())
    # a term found in aliases alone still seeds stage 2, which expands one hop
    data = lookup(vault, db_path, "smith")
    assert data["stage"] == "graph_expansion"
    assert order(data)[0] == "people/jdoe42.md"
    assert "Meeting notes.md" in order(data)


# -- near misses, disclosed ----------------------------------------------------------------


def test_a_compound_written_apart_is_joined(vault: Path, db_path: Path) -> None:
    write(vault / "Template setup.md", "x\n")
    write(vault / "Templates.md", "x\n")
    write(vault / "Settings.md", "x\n")
    write(vault / "Template gallery.md", "x\n")
    data = lookup(vault, db_path, "how do I set up templates")
    assert data["terms"] == ["setup", "templates"]
    assert data["rewritten"] == [{"term": "set up", "as": "setup", "how": "joined"}]
    assert order(data)[0] == "Template setup.md"
    assert "Settings.md" not in order(data)


def test_a_compound_written_together_is_split(vault: Path, db_path: Path) -> None:
    write(vault / "Dark-mode themes.md", "x\n")
    write(vault / "Themes.md", "x\n")
    data = lookup(vault, db_path, "darkmode themes")
    assert data["rewritten"] == [{"term": "darkmode", "as": "dark-mode", "how": "split"}]
    assert order(data)[0] == "Dark-mode themes.md"
    # written apart, the two words already meet the hyphenated title
    assert order(lookup(vault, db_path, "dark mode"))[0] == "Dark-mode themes.md"


def test_a_one_edit_variant_of_a_name_is_tried_when_nothing_matches(
    vault: Path, db_path: Path
) -> None:
    write(vault / "people/p-0042.md", "---\naliases: [John Smith]\n---\n# John Smith\nbio\n")
    write(vault / "people/p-0043.md", "---\naliases: [Mary Jones]\n---\n# Mary Jones\nbio\n")
    write(vault / "Meeting.md", "with [[p-0042]]\n")
    data = lookup(vault, db_path, "Smyth")
    assert data["rewritten"] == [{"term": "Smyth", "as": "smith", "how": "one edit"}]
    assert order(data)[0] == "people/p-0042.md"
    # a word that matches something is never rewritten
    assert lookup(vault, db_path, "Jones")["rewritten"] == []


def test_a_word_some_note_text_holds_is_no_misspelling(vault: Path, db_path: Path) -> None:
    """Issue 30's speed budget: the one-edit guess (an OR of every one-edit spelling) is tried
    only for a word that no note's text holds either; a word the vault writes is its own."""
    write(vault / "people/p-0042.md", "---\naliases: [John Smith]\n---\n# John Smith\nbio\n")
    write(vault / "Genealogy.md", "# Family tree\nThe Smyth branch came from Leeds.\n")
    data = lookup(vault, db_path, "Smyth")
    assert data["rewritten"] == []
    assert (data["stage"], order(data)) == ("body", ["Genealogy.md"])


def test_every_term_missing_gets_nothing_not_a_loose_match(vault: Path, db_path: Path) -> None:
    write(vault / "Smart breadcrumbs.md", "x\n")
    write(vault / "Hub.md", "[[Smart breadcrumbs]]\n")
    data = lookup(vault, db_path, "sourdough bread recipe")
    assert (data["stage"], data["candidates"]) == ("none", [])
    assert data["missing"] == ["sourdough", "bread", "recipe"]


def test_a_generic_word_is_no_near_miss(vault: Path, db_path: Path) -> None:
    for i in range(6):
        write(vault / f"Word count {i}.md", "x\n")
    data = lookup(vault, db_path, "who won the world cup")
    assert data["rewritten"] == []
    assert (data["stage"], data["candidates"]) == ("none", [])


def test_a_body_only_word_left_is_no_answer(vault: Path, db_path: Path) -> None:
    _writing_vault(vault)
    (vault / "Engines of fiction.md").unlink()
    write(vault / "Mechanics.md", "the engine of the story\n")
    # `engine` only in a body: no name can answer it; `work` is generic; `jet` is absent
    data = lookup(vault, db_path, "how does a jet engine work?")
    assert (data["stage"], data["candidates"]) == ("none", [])


def test_a_porter_stem_collision_is_no_hit(vault: Path, db_path: Path) -> None:
    """`generator` and `general` share the stem `gener`: the typed word decides."""
    write(vault / "General settings.md", "x\n")
    write(vault / "Text generator.md", "x\n")
    write(vault / "Generators of ideas.md", "x\n")
    data = lookup(vault, db_path, "generator")
    assert set(order(data)) == {"Text generator.md", "Generators of ideas.md"}
    assert data["total"] == 2
    # inflections still meet: the plural, and the question's own plural
    assert "General settings.md" in order(lookup(vault, db_path, "generals"))
    assert "Text generator.md" in order(lookup(vault, db_path, "generators"))


# -- folder names, several name fields -------------------------------------------------------


def test_a_folder_name_is_a_name(vault: Path, db_path: Path) -> None:
    """`sync resolver` finds "Sync/Resolver.md": the folder names the note too."""
    write(vault / "Sync/Resolver.md", "x\n")
    write(vault / "Notes/Conflict resolver for sync.md", "x\n")
    for name in ("Sync settings", "Sync log", "Sync history", "Daily log"):
        write(vault / f"Notes/{name}.md", "x\n")
    data = lookup(vault, db_path, "sync resolver")
    assert order(data)[:2] == ["Sync/Resolver.md", "Notes/Conflict resolver for sync.md"]
    assert data["candidates"][0]["hits"] == {"sync": ["folder"], "resolver": ["title"]}
    assert data["candidates"][0]["score"] == 2  # distinct terms hit, the folder's counted
    # a folder word is the typed word inflected, never a Porter stem collision
    write(vault / "Generals/Text generator.md", "x\n")
    data = lookup(vault, db_path, "generator")
    assert data["candidates"][0]["hits"] == {"generator": ["title"]}


def test_a_note_hitting_the_same_terms_in_more_name_fields_is_first(
    vault: Path, db_path: Path
) -> None:
    """`calendar plugin`: the plugin named Calendar (title, alias, tags, folder) above an index
    page with both words in its title; of notes hitting different terms, stage 1's order
    stays."""
    write(
        vault / "Plugins/calendar.md",
        "---\naliases: [Calendar]\ntags: [plugin, calendar]\n---\nx\n",
    )
    write(vault / "MOCs/Plugins - Calendar and dates.md", "---\ntags: [plugin]\n---\nx\n")
    for name in ("Dataview", "Templater", "Kanban", "Outliner"):
        write(vault / f"Plugins/{name}.md", "---\ntags: [plugin]\n---\nx\n")
    data = lookup(vault, db_path, "calendar plugin")
    assert order(data)[:2] == ["Plugins/calendar.md", "MOCs/Plugins - Calendar and dates.md"]
    # two notes hitting different words of equal weight: the title hit decides, not the fields
    write(vault / "PARA.md", "---\naliases: [PARA method]\n---\n# PARA method\n")
    write(vault / "Zettelkasten.md", "x\n")
    for i in range(4):
        write(vault / f"Other {i}.md", "x\n")
    data = lookup(vault, db_path, "What is the Zettelkasten method?")
    assert order(data)[0] == "Zettelkasten.md"


# -- the body stage: words only in note text -----------------------------------------------


def _plugins_vault(vault: Path) -> None:
    for name in ("Sync settings", "Selective sync", "Sync conflict"):
        write(vault / f"Sync/{name}.md", "---\ntags: [sync]\n---\nHow sync works.\n")
    write(
        vault / "Plugins/livesync.md",
        "---\naliases: [LiveSync]\ntags: [plugin]\n---\n# LiveSync\n\n"
        "Live sync through your own CouchDB server.\n",
    )
    write(
        vault / "Plugins/placeholder.md",
        "---\ntags: [plugin]\n---\n# Placeholder\n\nFills a note with lorem ipsum.\n",
    )
    write(
        vault / "Plugins/homepage.md",
        "---\ntags: [plugin]\n---\n# Homepage\n\nOpens a chosen note when the app starts.\n",
    )
    write(vault / "Plugins/tidy.md", "---\ntags: [plugin]\n---\n# Tidy\n\nKeeps lists tidy.\n")


def test_words_only_in_note_text_are_answered_from_the_bodies(vault: Path, db_path: Path) -> None:
    """No name holds `lorem` or `ipsum`: stages 1 and 2 find nothing, the body index does, and
    the answer says so (the lead's decision on issue 30)."""
    _plugins_vault(vault)
    data = lookup(vault, db_path, "lorem ipsum")
    assert (data["stage"], order(data)) == ("body", ["Plugins/placeholder.md"])
    assert data["candidates"][0]["via"] == {"stage": "body", "matched": ["body"]}
    assert data["candidates"][0]["hits"] == {"lorem": ["body"], "ipsum": ["body"]}
    assert "note text only" in data["message"]
    # one term, only in a body: both stages find nothing, the body stage answers
    assert order(lookup(vault, db_path, "couchdb")) == ["Plugins/livesync.md"]
    text = run_inprocess("lookup", "lorem ipsum", "--vault", vault, "--db", db_path)
    assert text.code == 0
    assert "note text only" in text.stdout and "Plugins/placeholder.md" in text.stdout
    # filters hold in the body stage too
    data = lookup(vault, db_path, "lorem ipsum", "--tag", "sync")
    assert (data["stage"], data["candidates"]) == ("none", [])
    # honest empty still: a distinctive word that occurs nowhere
    data = lookup(vault, db_path, "lorem ipsum zyzzogeton")
    assert (data["stage"], data["candidates"]) == ("none", [])


def test_a_word_only_in_note_text_decides_over_a_name_word(vault: Path, db_path: Path) -> None:
    """`couchdb sync`: `sync` names three notes, `couchdb` only the plugin's text, which holds
    both: the note a person means is the one whose text has both, not the ones named sync."""
    _plugins_vault(vault)
    data = lookup(vault, db_path, "couchdb sync")
    assert data["stage"] == "body"
    assert order(data) == ["Plugins/livesync.md"]
    # no body holds both words: the name word answers as before
    data = lookup(vault, db_path, "lorem sync")
    assert data["stage"] == "title_tags"
    assert order(data)[0].startswith("Sync/")


def test_a_compound_that_occurs_nowhere_is_cut_before_its_particle(
    vault: Path, db_path: Path
) -> None:
    """`startup` occurs nowhere; `start up` would be the keyword `start`, which a body holds."""
    _plugins_vault(vault)
    data = lookup(vault, db_path, "open a note on startup")
    assert data["rewritten"] == [{"term": "startup", "as": "start", "how": "split"}]
    assert data["terms"] == ["open", "start"]
    assert (data["stage"], order(data)[0]) == ("body", "Plugins/homepage.md")
    # a word that merely ends like a particle is no compound: `lesson` stays, and is missing
    write(vault / "Notes/Less is more.md", "less\n")
    data = lookup(vault, db_path, "lesson plugin")
    assert data["rewritten"] == [] and data["missing"] == ["lesson"]


# -- tier 1: names read as questions are read (schema 22) ----------------------------------


def test_a_name_less_its_stop_words_equals_the_question(vault: Path, db_path: Path) -> None:
    """`rename note` is the title "Rename a note": the stop words go on both sides."""
    for name in ("Rename a note", "Note: rename", "Renaming notes in bulk", "Rename a tag"):
        write(vault / f"{name}.md", "x\n")
    data = lookup(vault, db_path, "rename note")
    assert order(data)[0] == "Rename a note.md"
    assert data["candidates"][0]["via"] == {"stage": "title_tags", "matched": ["title"]}


def test_a_compound_written_apart_in_a_name_equals_it_joined(vault: Path, db_path: Path) -> None:
    """`how do I backup my vault` is the title "Back up your vault": the name is read with its
    word and particle joined, as the question writes them; written apart, as before."""
    write(vault / "Guides/Back up your vault.md", "---\ntags: [backup]\n---\nx\n")
    for name in ("Auto backups", "Backup scheduler", "Easy backups"):
        write(vault / f"Plugins/{name}.md", "---\ntags: [backup]\n---\nx\n")
    for question in ("how do I backup my vault", "how do I back up my vault"):
        data = lookup(vault, db_path, question)
        assert order(data)[0] == "Guides/Back up your vault.md", question
        assert data["candidates"][0]["via"]["matched"] == ["title"], question


def test_a_hub_name_equals_a_question_about_its_subject(vault: Path, db_path: Path) -> None:
    """`list of all plugins` is "Plugins MOC": the question less its tool and stop words, the
    name less its hub word. A category page named "Plugins - Files" is no hub."""
    write(vault / "MOCs/Plugins MOC.md", "[[Plugins - Files]] [[Plugins - Editing]]\n")
    for name in ("Plugins - Files", "Plugins - Editing", "Plugins - Search"):
        write(vault / f"MOCs/{name}.md", "---\ntags: [plugins]\n---\nx\n")
    write(vault / "Glossary/MOC.md", "---\ntags: [glossary]\n---\nx\n")
    write(vault / "Glossary/Backlink.md", "---\ntags: [glossary]\n---\nx\n")
    data = lookup(vault, db_path, "list of all plugins")
    assert order(data)[0] == "MOCs/Plugins MOC.md"
    assert data["candidates"][0]["via"]["matched"] == ["title"]
    # a hub word the question says is a term as before
    assert order(lookup(vault, db_path, "MOC glossary"))[0] == "Glossary/MOC.md"


def test_a_named_note_whose_text_holds_the_word_comes_first(vault: Path, db_path: Path) -> None:
    """With a distinctive name word, stage 1 answers, and of its notes the one whose text holds
    the word only note text holds comes first (its hit shown as `body`); a word many bodies
    hold (`made`) is no such word."""
    for name in ("Weekly review", "Weekly planning", "Weekly goals"):
        write(vault / f"{name}.md", "Made with care.\n")
    write(vault / "Weekly sync.md", "Made on Sundays, with the kanban board.\n")
    for i in range(4):
        write(vault / f"Other {i}.md", "Made by hand.\n")
    data = lookup(vault, db_path, "kanban weekly")
    assert data["stage"] == "title_tags"
    assert order(data)[0] == "Weekly sync.md"
    assert data["candidates"][0]["hits"] == {"weekly": ["title"], "kanban": ["body"]}
    data = lookup(vault, db_path, "made weekly goals")
    assert order(data)[0] == "Weekly goals.md"

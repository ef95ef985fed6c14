"""Lookup's order (issue 11): ranking tiers, notes-tool words, exact aliases, stage 2 damping.

Each case is a defect found on a real vault, rebuilt here on a vault made in the test and run
through the CLI in-process, with the order the issue expects.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.query.lookup import extract_terms
from notedex.vault.text import match_key
from tests.helpers import run_inprocess, write


def lookup(vault: Path, db: Path, question: str) -> dict:
    result = run_inprocess("lookup", question, "--vault", vault, "--db", db, "--json")
    assert result.code == 0, result.stderr
    return result.json()


def order(data: dict) -> list[str]:
    return [c["path"] for c in data["candidates"]]


def test_a_well_linked_note_is_not_pushed_down_by_its_backlinks(vault: Path, db_path: Path) -> None:
    write(vault / "Internal links.md", "how to link\n")
    write(vault / "Symbolic links and junctions.md", "x\n")
    write(vault / "Link to blocks.md", "x\n")
    for i in range(30):
        write(vault / f"user/Page {i:02}.md", "see [[Internal links|how internal links work]]\n")
    data = lookup(vault, db_path, "links")
    assert data["stage"] == "title_tags"
    assert order(data)[0] == "Internal links.md"


def test_an_exact_title_ranks_above_longer_titles(vault: Path, db_path: Path) -> None:
    write(vault / "Tags.md", "x\n")
    write(vault / "Tags view.md", "x\n")
    write(vault / "Nested tags.md", "x\n")
    for i in range(10):
        write(vault / f"u/Use {i}.md", "[[Tags|tagging notes with tags]]\n")
    data = lookup(vault, db_path, "tags")
    assert order(data)[0] == "Tags.md"
    assert data["candidates"][0]["via"] == {"stage": "title_tags", "matched": ["title"]}
    assert data["candidates"][1]["via"] == {"stage": "title_tags"}


def test_a_notes_tool_word_in_the_title_makes_it_exact(vault: Path, db_path: Path) -> None:
    for name in ("Board view", "Table view", "List view", "Views"):
        write(vault / f"{name}.md", "x\n")
    for i in range(5):
        write(vault / f"u/Board {i}.md", "[[Board view]] [[Table view]]\n")
    data = lookup(vault, db_path, "list view")
    assert data["terms"] == ["view"]
    assert order(data)[0] == "List view.md"
    assert data["total"] == 4  # the tool word ranks; it does not narrow


@pytest.mark.slow
def test_notes_tool_words_count_when_they_are_the_subject(vault: Path, db_path: Path) -> None:
    write(vault / "Manage plugins.md", "x\n")
    write(vault / "Manage attachments.md", "x\n")
    write(vault / "Manage vaults.md", "x\n")
    write(vault / "Create a vault.md", "x\n")
    write(vault / "Show command.md", "x\n")
    for question in ("vault", "what is a vault"):
        data = lookup(vault, db_path, question)
        assert data["terms"] == ["vault"], question
        assert set(order(data)) == {"Manage vaults.md", "Create a vault.md"}, question
    assert order(lookup(vault, db_path, "show")) == ["Show command.md"]
    data = lookup(vault, db_path, "manage vaults")
    assert data["terms"] == ["manage"]
    assert order(data)[0] == "Manage vaults.md"


def test_notes_tool_words_are_dropped_when_other_keywords_remain() -> None:
    assert extract_terms("which notes in my vault mention kubernetes") == ["kubernetes"]
    assert extract_terms("show me the notes") == ["show", "notes"]
    assert extract_terms("What is a vault?") == ["vault"]


def test_an_alias_equal_to_the_keywords_joins_stage_one(vault: Path, db_path: Path) -> None:
    write(vault / "Basic formatting syntax.md", "---\naliases: [Markdown]\n---\n")
    write(vault / "Markdown tables.md", "x\n")
    write(vault / "Markdown links and embeds.md", "x\n")
    write(vault / "Unrelated.md", "---\naliases: [Markdown cheatsheet]\n---\n")
    data = lookup(vault, db_path, "markdown")
    assert data["stage"] == "title_tags"
    first = data["candidates"][0]
    assert first["path"] == "Basic formatting syntax.md"
    assert first["via"] == {"stage": "title_tags", "matched": ["alias"]}
    assert first["hits"] == {"markdown": ["alias"]}
    # A keyword that is part of an alias brings the note into stage 1 too (issue 30: aliases
    # are names in every tier), after the titles that hold it.
    assert order(data)[1:3] == ["Markdown tables.md", "Markdown links and embeds.md"] or order(
        data
    )[1:3] == ["Markdown links and embeds.md", "Markdown tables.md"]
    assert order(data)[3:] == ["Unrelated.md"]
    assert data["candidates"][3]["hits"] == {"markdown": ["alias"]}


def test_one_latin_character_is_never_a_loose_title_match(vault: Path, db_path: Path) -> None:
    names = ["Canvas", "Core plugins", "Community plugins", "Command palette"]
    for name in names:
        write(vault / f"{name}.md", "x\n")
    write(vault / "Settings.md", " ".join(f"[[{n}]]" for n in names) + "\n")
    write(vault / "Languages.md", "x\n")
    write(vault / "Compilers.md", "we compile [[Languages|C++]] here\n")
    data = lookup(vault, db_path, "C++")
    assert data["stage"] == "graph_expansion"
    assert order(data) == ["Languages.md", "Compilers.md"]  # the seed (link text), its neighbour


def test_seeds_rank_above_neighbours_and_hubs_are_damped(vault: Path, db_path: Path) -> None:
    for name in ("A", "B", "C"):
        write(vault / f"{name}.md", "---\naliases: [zephyr " + name + "]\n---\n")
    others = " ".join(f"[[Other {i}]]" for i in range(20))
    write(vault / "Hub.md", f"[[A]] [[B]] [[C]] {others}\n")
    for i in range(20):
        write(vault / f"Other {i}.md", "x\n")
    write(vault / "Pair.md", "[[A]] [[B]] [[C]]\n")
    write(vault / "Single.md", "[[A]]\n")
    data = lookup(vault, db_path, "zephyr")
    assert data["stage"] == "graph_expansion"
    ranked = order(data)
    assert set(ranked[:3]) == {"A.md", "B.md", "C.md"}
    # Pair links with all three seeds and nothing else; the hub links with them and 20 more.
    assert ranked[3:] == ["Pair.md", "Single.md", "Hub.md"]
    scores = [c["score"] for c in data["candidates"]]
    assert scores == sorted(scores, reverse=True)


def test_the_canonical_cobra_note_is_first(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    result = run_inprocess(
        "lookup", "cobra", "--vault", vault, "--db", db, "--json", "--no-refresh"
    )
    assert order(result.json())[0] == "Projects/Cobra CLI 框架.md"


def test_match_key_folds_case_width_and_plurals() -> None:
    assert match_key("Manage Vaults") == match_key("manage vault") == ("manage", "vault")
    assert match_key("ＴＡＧＳ") == match_key("tag")
    assert match_key("Cobra CLI 框架") == ("cobra", "cli", "框架")
    assert match_key("class") == ("class",)  # not a plural
    assert match_key("Queries") == ("query",)


def test_japanese_questions_give_clean_terms(vault: Path, db_path: Path) -> None:
    write(vault / "内部リンク.md", "x\n")
    write(vault / "Obsidianについて.md", "x\n")
    write(vault / "ノートの書き方.md", "x\n")
    data = lookup(vault, db_path, "内部リンクについてのノートはどれ？")
    assert data["terms"] == ["内部リンク"]
    assert order(data) == ["内部リンク.md"]
    assert extract_terms("タグの使い方を教えてください") == ["タグ"]
    assert extract_terms("猫について") == ["猫"]  # a one-character subject is kept when alone


def test_korean_particles_and_endings_are_stripped(vault: Path, db_path: Path) -> None:
    write(vault / "볼트 만들기.md", "x\n")
    write(vault / "볼트 설정.md", "x\n")
    write(vault / "테스트를 위한 노트.md", "x\n")
    write(vault / "플러그인.md", "[[볼트 만들기]] [[테스트를 위한 노트]]\n")
    data = lookup(vault, db_path, "볼트를 만드는 방법")
    assert data["terms"] == ["볼트", "만드"]
    assert set(order(data)) == {"볼트 만들기.md", "볼트 설정.md"}
    assert extract_terms("플러그인을 설치하는 방법") == ["플러그인", "설치"]


def test_stop_lists_are_data_files_one_word_a_line() -> None:
    from notedex.query import terms as module

    assert "について" in module.STOP_WORDS_JA and "방법" in module.STOP_WORDS_KO
    assert "를" in module.ENDINGS_KO and "the" in module.STOP_WORDS_EN
    assert all(" " not in w for w in module.STOP_WORDS_JA | module.STOP_WORDS_KO)


def test_hiragana_content_words_are_kept(vault: Path, db_path: Path) -> None:
    # SEMANTICS 11.5: a one-kana particle inside a hiragana stretch is part of the word.
    write(vault / "ひらがなの練習.md", "x\n")
    write(vault / "ふりかえり.md", "---\naliases: [週次レビュー]\n---\nx\n")
    write(vault / "カタカナ.md", "x\n")
    data = lookup(vault, db_path, "ひらがなの練習について教えて")
    assert data["terms"] == ["ひらがな", "練習"]
    assert order(data) == ["ひらがなの練習.md"]
    assert order(lookup(vault, db_path, "ふりかえりのやり方は？")) == ["ふりかえり.md"]
    assert extract_terms("ひらがな") == ["ひらがな"]  # が and な are not particles here
    assert extract_terms("ひらがなですか") == ["ひらがな"]
    assert extract_terms("ひらがなとカタカナの違い") == ["ひらがな", "カタカナ"]
    assert extract_terms("たまごのレシピ") == ["たまご", "レシピ"]
    assert extract_terms("すしのつくりかた") == ["すし"]
    assert extract_terms("リンクのはなし") == ["リンク", "はなし"]  # one particle cut, not は
    assert extract_terms("ノートの書き方") == ["ノート"]  # okurigana and stop words only


def test_a_katakana_word_is_never_cut_into_pieces(vault: Path, db_path: Path) -> None:
    # SEMANTICS 11.4: 量子コンピュータ occurs nowhere; ュー (of レビュー) is no piece of it.
    write(vault / "週次レビュー.md", "x\n")
    write(vault / "量子.md", "x\n")
    data = lookup(vault, db_path, "量子コンピュータについてのノートはある？")
    assert data["terms"] == ["量子"]
    assert order(data) == ["量子.md"]
    data = lookup(vault, db_path, "量子レビュー")
    assert data["terms"] == ["量子", "レビュー"]  # cut where kanji meets katakana
    assert set(order(data)) == {"量子.md", "週次レビュー.md"}


def test_korean_stop_words_as_written_and_the_notes_tool_word(vault: Path, db_path: Path) -> None:
    # SEMANTICS 11.6: 있나요 is dropped before stripping, 하나요 -> 하 after; 노트 is a tool word.
    write(vault / "데일리 노트.md", "x\n")
    write(vault / "볼트 만들기.md", "x\n")
    assert extract_terms("볼트 백업은 어떻게 하나요?") == ["볼트", "백업"]
    assert extract_terms("하루 기록은 어디에 있나요?") == ["하루", "기록"]
    data = lookup(vault, db_path, "데일리 노트")
    assert data["terms"] == ["데일리"]
    assert data["candidates"][0]["via"] == {"stage": "title_tags", "matched": ["title"]}
    assert order(lookup(vault, db_path, "노트")) == ["데일리 노트.md"]


def test_every_exact_name_is_tier_one_however_many_notes_hold_the_word(
    vault: Path, db_path: Path
) -> None:
    """Tier 1 is every note whose title, first H1 or alias equals the keywords: an index seek
    (exact_names), not a check of the 50 best BM25 hits, which ranked a long file name whose H1
    or alias is the keyword below 60 short titles holding it, and lost it."""
    for i in range(60):
        write(vault / "p" / f"Python {i:02}.md", "x\n")
    write(vault / "A long file name about something else entirely.md", "# Python\n")
    write(vault / "Another long name with words.md", "---\naliases: [pythons]\n---\n")
    data = lookup(vault, db_path, "python")
    top = data["candidates"][:2]
    assert [c["path"] for c in top] == [
        "A long file name about something else entirely.md",
        "Another long name with words.md",
    ]
    assert [c["via"] for c in top] == [
        {"stage": "title_tags", "matched": ["title"]},
        {"stage": "title_tags", "matched": ["alias"]},
    ]
    assert data["total"] == 62  # 61 title hits and the note whose alias alone holds the word
    (vault / "A long file name about something else entirely.md").rename(vault / "Python.md")
    moved = lookup(vault, db_path, "python")
    assert moved["candidates"][0]["path"] == "Python.md"
    assert moved["candidates"][0]["via"] == {"stage": "title_tags", "matched": ["title"]}

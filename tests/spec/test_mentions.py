"""SEMANTICS 12: unlinked mentions through `notedex mentions --json` (in-process CLI)."""

from __future__ import annotations

from tests.helpers import SpecVault


def places(v: SpecVault, note: str) -> list[tuple[str, int, int, str]]:
    data = v.json("mentions", note)
    return [(m["source"], m["line"], m["column"], m["text"]) for m in data["mentions"]]


def test_title_and_aliases_as_phrases_with_line_and_column(v: SpecVault) -> None:
    v.write(
        "Projects/Road Map.md", "---\naliases: [RM plan]\ntitle: The Route\n---\nself Road Map\n"
    )
    v.write(
        "A.md",
        "---\nx: Road Map\n---\nWe follow the road  map. The rm PLAN too.\nroadmap is one word\n"
        "Road Maps is longer, the route differs\nthe route is the title\n",
    )
    data = v.json("mentions", "Road Map")
    assert data["note"] == "Projects/Road Map.md"
    assert data["names"] == ["Road Map", "The Route", "RM plan"]
    assert places(v, "Road Map") == [
        ("A.md", 4, 15, "road  map"),  # any blanks between the words; the frontmatter is no body
        ("A.md", 4, 30, "rm PLAN"),
        ("A.md", 6, 22, "the route"),  # `Road Maps` is not the phrase: a longer word
        ("A.md", 7, 1, "the route"),
    ]
    assert data["mentionCount"] == 4 and data["sourceCount"] == 1 and data["complete"] is True


def test_code_math_html_tags_and_links_are_not_mentions(v: SpecVault) -> None:
    v.write("Cobra.md", "")
    v.write(
        "B.md",
        "`Cobra` $Cobra$ [[Cobra]] [[Other|Cobra]] [Cobra](https://x) <b>Cobra</b> #Cobra\n"
        "```\nCobra\n```\n<div>\nCobra\n</div>\n\n![[pic.png|Cobra]] %%Cobra%% Cobra!\n",
    )
    # A %%comment%% is text, as its links are links (SEMANTICS 6.9).
    assert places(v, "Cobra") == [("B.md", 9, 22, "Cobra"), ("B.md", 9, 30, "Cobra")]


def test_a_link_code_math_or_html_between_the_words_breaks_the_phrase(v: SpecVault) -> None:
    # SEMANTICS 12.2: blanking what is excluded must not join the words around it.
    v.write("Road Map.md", "")
    v.write(
        "E.md",
        "road [[x]] map\nroad `x` map\nroad $x$ map\nroad <b>x</b> map\nroad [x](https://y) map\n"
        "road #x map\nroad ![[p.png]] map\nroad\t map\n",
    )
    v.write("F.md", "road [[x]] road map\n")  # a phrase starting inside a rejected match
    assert places(v, "Road Map") == [("E.md", 8, 1, "road\t map"), ("F.md", 1, 12, "road map")]


def test_cjk_names_match_inside_text_without_spaces(v: SpecVault) -> None:
    v.write("知識管理.md", "")
    v.write("C.md", "我在學習知識管理的方法\n")
    assert places(v, "知識管理") == [("C.md", 1, 5, "知識管理")]


def test_the_note_itself_and_excluded_notes_do_not_count(v: SpecVault) -> None:
    v.write(".obsidian/app.json", '{"userIgnoreFilters": ["Archive/"]}')
    v.write("Plan.md", "the Plan\n")
    v.write("Archive/Old.md", "the Plan\n")
    v.write("D.md", "a plan\n")
    assert places(v, "Plan") == [("D.md", 1, 3, "plan")]


def test_no_note_is_exit_2(v: SpecVault) -> None:
    v.write("A.md", "")
    assert v.run("mentions", "Nothing").code == 2

"""Two-stage lookup through the CLI in-process (issue 4), plus term extraction units."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from notedex.query.lookup import extract_terms
from tests.helpers import run_inprocess, write

COBRA_NOTES = {
    "Projects/Cobra CLI 框架.md",
    "Projects/ADR-001 選用 Cobra 作為 CLI 框架.md",
    "Projects/Cobra 子命令設計.md",
    "Projects/Cobra shell completion.md",
}
PARA = "Areas/PARA 方法.md"


def lookup(demo: tuple[Path, Path], *args: str) -> dict:
    vault, db = demo
    result = run_inprocess("lookup", *args, "--vault", vault, "--db", db, "--json", "--no-refresh")
    assert result.code == 0, result.stderr
    return result.json()


def paths(data: dict) -> set[str]:
    return {c["path"] for c in data["candidates"]}


def test_keyword_finds_exactly_the_four_cobra_notes(demo: tuple[Path, Path]) -> None:
    data = lookup(demo, "Cobra")
    assert data["stage"] == "title_tags"
    assert paths(data) == COBRA_NOTES
    assert PARA not in paths(data)
    assert data["total"] == data["shown"] == 4
    assert data["narrowed"] is False
    assert all(c["via"] == {"stage": "title_tags"} for c in data["candidates"])


def test_chinese_question_finds_the_same_four_notes(demo: tuple[Path, Path]) -> None:
    data = lookup(demo, "vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？")
    assert data["terms"] == ["Cobra", "CLI", "框架"]
    assert data["stage"] == "title_tags"
    assert paths(data) == COBRA_NOTES
    # The note whose title holds all three terms ranks above those holding two.
    top = data["candidates"][0]
    assert set(top["hits"]) == {"Cobra", "CLI", "框架"}
    assert top["score"] > data["candidates"][-1]["score"]


def test_alias_seeds_stage_two_and_expands_one_hop(demo: tuple[Path, Path]) -> None:
    data = lookup(demo, "spf13")
    assert data["stage"] == "graph_expansion"
    assert paths(data) == COBRA_NOTES
    by_path = {c["path"]: c for c in data["candidates"]}
    seed = by_path["Projects/Cobra CLI 框架.md"]
    assert seed["via"]["relation"] == "seed"
    assert seed["via"]["matched"] == ["alias"]
    assert seed["hits"] == {"spf13": ["alias"]}
    for path in COBRA_NOTES - {seed["path"]}:
        via = by_path[path]["via"]
        assert via["stage"] == "graph_expansion"
        assert via["seed"] == seed["path"]
        assert via["relation"] in {"links to seed", "linked from seed"}
    # The completion note is linked *from* the seed; the ADR links *to* it.
    assert by_path["Projects/Cobra shell completion.md"]["via"]["relation"] == "linked from seed"
    assert (
        by_path["Projects/ADR-001 選用 Cobra 作為 CLI 框架.md"]["via"]["relation"]
        == "links to seed"
    )


def test_stage_one_alone_cannot_find_spf13(demo: tuple[Path, Path]) -> None:
    """The alias is not a title or a tag: only stage 2 may find it (bodies are never read)."""
    vault, db = demo
    result = run_inprocess("scan", "--vault", vault, "--db", db, "--json", "--no-refresh")
    for note in result.json()["notes"]:
        assert "spf13" not in note["title"].lower()
        assert not any("spf13" in t.lower() for t in note["tags"])


def test_nothing_found_is_stage_none_and_exit_zero(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    question = "vault 裡有沒有討論量子糾纏演算法的筆記？"
    result = run_inprocess(
        "lookup", question, "--vault", vault, "--db", db, "--json", "--no-refresh"
    )
    assert result.code == 0
    data = result.json()
    assert data["stage"] == "none"
    assert data["candidates"] == []
    assert data["total"] == 0
    text = run_inprocess("lookup", question, "--vault", vault, "--db", db, "--no-refresh")
    assert text.code == 0
    assert "no matching notes" in text.stdout


def test_narrowing_is_disclosed_in_json_and_text(vault: Path, db_path: Path) -> None:
    for i in range(12):
        write(vault / "go" / f"Go topic {i:02}.md", f"---\ntags: [golang]\n---\nbody {i}\n")
    write(vault / "Other.md", "---\ntags: [python]\n---\n")
    data = run_inprocess(
        "lookup", "golang", "--limit", "5", "--vault", vault, "--db", db_path, "--json"
    )
    assert data.code == 0, data.stderr
    payload = data.json()
    assert (payload["shown"], payload["total"], payload["narrowed"]) == (5, 12, True)
    assert len(payload["candidates"]) == 5
    assert "narrowed to 5 of 12 candidates" in payload["message"]
    text = run_inprocess("lookup", "golang", "--limit", "5", "--vault", vault, "--db", db_path)
    assert "narrowed to 5 of 12 candidates" in text.stdout
    assert text.stdout.count("go/Go topic") == 5


def test_tag_and_type_filters_combine_with_lookup(demo: tuple[Path, Path]) -> None:
    data = lookup(demo, "Cobra", "--type", "adr")
    assert paths(data) == {"Projects/ADR-001 選用 Cobra 作為 CLI 框架.md"}
    data = lookup(demo, "Cobra", "--tag", "cli")
    # cli/design counts for cli (nested tags count for their parents).
    assert paths(data) == {
        "Projects/Cobra CLI 框架.md",
        "Projects/Cobra 子命令設計.md",
        "Projects/Cobra shell completion.md",
    }


@pytest.mark.slow
def test_english_inflections_match_through_stemming(vault: Path, db_path: Path) -> None:
    write(vault / "Internal links.md", "about links\n")
    write(vault / "Customize your site.md", "theme\n")
    write(vault / "Unrelated.md", "x\n")
    for term, expected in (
        ("link", "Internal links.md"),
        ("customize", "Customize your site.md"),
        ("customizing", "Customize your site.md"),
        ("linked", "Internal links.md"),
    ):
        data = run_inprocess("lookup", term, "--vault", vault, "--db", db_path, "--json").json()
        assert paths(data) == {expected}, term


@pytest.mark.parametrize(
    ("term", "expected"),
    [
        ("框", {"框架設計.md"}),  # one character, at the start of a run
        ("架", {"框架設計.md"}),  # one character, inside a run
        ("計", {"框架設計.md", "設計模式.md"}),  # one character: end of one run, inside another
        ("框架", {"框架設計.md"}),
        ("架設", {"框架設計.md"}),
        ("框架設計", {"框架設計.md"}),
        ("itgc", {"重跑gen-itgc后.md"}),
        ("gen-itgc", {"重跑gen-itgc后.md"}),
        ("重跑", {"重跑gen-itgc后.md"}),
        ("后", {"重跑gen-itgc后.md"}),
    ],
)
def test_cjk_terms_match_inside_longer_titles(
    vault: Path, db_path: Path, term: str, expected: set[str]
) -> None:
    write(vault / "框架設計.md", "x\n")
    write(vault / "重跑gen-itgc后.md", "x\n")
    write(vault / "設計模式.md", "x\n")
    write(vault / "Framework.md", "x\n")
    data = run_inprocess("lookup", term, "--vault", vault, "--db", db_path, "--json").json()
    assert paths(data) == expected
    assert data["stage"] == "title_tags"


def test_full_width_punctuation_separates_terms() -> None:
    assert extract_terms("Cobra，框架；PARA") == ["Cobra", "框架", "PARA"]
    assert extract_terms("（Cobra）「框架」") == ["Cobra", "框架"]


def test_stop_words_of_both_languages_and_scripts_are_dropped() -> None:
    assert extract_terms("What did I write about the PARA method in my notes?") == [
        "PARA",
        "method",
    ]
    assert extract_terms("vault 裡有哪些跟 Cobra 這個 CLI 框架相關的筆記？") == [
        "Cobra",
        "CLI",
        "框架",
    ]
    assert extract_terms("vault 里有哪些跟 Cobra 这个 CLI 框架相关的笔记？") == [
        "Cobra",
        "CLI",
        "框架",
    ]
    assert extract_terms("有沒有提到量子糾纏的筆記") == ["量子糾纏"]
    assert extract_terms("cobra Cobra COBRA") == ["cobra"]


HOSTILE = [
    '"',
    '""',
    "'",
    "AND",
    "OR",
    "NOT",
    "NEAR(",
    "NEAR(a b, 2)",
    "a AND OR b",
    "*",
    "cobra*",
    "^cobra",
    "title:cobra",
    "{title}: x",
    "-cobra",
    "(",
    ")",
    "((cobra",
    "[[cobra",
    "]]",
    "",
    "   ",
    "\\",
    "a:b:c",
    "x" * 10_000,
    "框架 AND 設計",
    "\x01\x7f",
    "'; DROP TABLE notes; --",
]


@pytest.mark.parametrize("question", HOSTILE, ids=range(len(HOSTILE)))
def test_fts_syntax_in_a_question_never_breaks_the_engine(
    demo: tuple[Path, Path], question: str
) -> None:
    vault, db = demo
    result = run_inprocess(
        "lookup", "--vault", vault, "--db", db, "--json", "--no-refresh", "--", question
    )
    assert "Traceback" not in result.stderr
    # The one query rule: exit 2, never cut; nothing to look for (no letter or digit) is exit 2.
    if not any(ch.isalnum() for ch in question) or len(question) > 2000:
        assert (result.code, result.stdout) == (2, "")
        assert any(
            words in result.stderr for words in ("is empty", "is too long", "nothing to search for")
        )
        return
    assert result.code == 0, result.stderr
    data = result.json()
    assert data["stage"] in {"title_tags", "graph_expansion", "body", "none"}
    assert isinstance(data["candidates"], list)


def test_quoted_fts_syntax_is_a_plain_word(demo: tuple[Path, Path]) -> None:
    """`cobra*` and `title:cobra` search the word cobra, not FTS prefix/column syntax."""
    assert paths(lookup(demo, "cobra*")) == COBRA_NOTES
    assert paths(lookup(demo, "title:cobra")) == COBRA_NOTES


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(question=st.text(max_size=200))
def test_arbitrary_unicode_never_raises(question: str) -> None:
    terms = extract_terms(question)
    assert len(terms) <= 16
    assert all(t.strip() for t in terms)


@settings(max_examples=60, deadline=None)
@given(
    question=st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=80)
)
def test_arbitrary_unicode_through_the_engine(question: str, demo_index: tuple[Path, Path]) -> None:
    """In-process (a subprocess per example would be slow): the query engine never raises."""
    from notedex.errors import UsageError
    from notedex.query.lookup import lookup as run_lookup
    from notedex.store.connect import connect_readonly

    conn = connect_readonly(demo_index[1])
    try:
        if not any(ch.isalnum() for ch in question):  # the one query rule: nothing to look for
            with pytest.raises(UsageError, match=r"is empty|nothing to search for"):
                run_lookup(conn, question)
            return
        data = run_lookup(conn, question)
    finally:
        conn.close()
    assert data["stage"] in {"title_tags", "graph_expansion", "body", "none"}


def test_no_seed_means_nothing_not_all_nodes(demo: tuple[Path, Path]) -> None:
    data = lookup(demo, "zzzz-no-such-thing")
    assert data["stage"] == "none"
    assert data["candidates"] == []


def test_unresolved_link_key_seeds_through_linking_notes(vault: Path, db_path: Path) -> None:
    write(vault / "Roadmap.md", "next: [[Quantum widgets]]\n")
    write(vault / "Side.md", "see [[Roadmap]]\n")
    write(vault / "Lonely.md", "nothing\n")
    data = run_inprocess("lookup", "widgets", "--vault", vault, "--db", db_path, "--json").json()
    assert data["stage"] == "graph_expansion"
    by_path = {c["path"]: c for c in data["candidates"]}
    assert set(by_path) == {"Roadmap.md", "Side.md"}
    assert by_path["Roadmap.md"]["via"]["matched"] == ["unresolved link"]
    assert by_path["Side.md"]["via"] == {
        "stage": "graph_expansion",
        "seed": "Roadmap.md",
        "relation": "links to seed",
    }


def test_link_anchor_text_seeds_the_target(vault: Path, db_path: Path) -> None:
    write(vault / "Kubernetes operators.md", "x\n")
    write(vault / "Ops.md", "we use [[Kubernetes operators|reconcilers]] everywhere\n")
    data = run_inprocess(
        "lookup", "reconcilers", "--vault", vault, "--db", db_path, "--json"
    ).json()
    assert data["stage"] == "graph_expansion"
    by_path = {c["path"]: c for c in data["candidates"]}
    assert by_path["Kubernetes operators.md"]["via"]["matched"] == ["link text"]
    assert by_path["Ops.md"]["via"]["relation"] == "links to seed"


def test_bodies_answer_only_in_the_disclosed_body_stage(vault: Path, db_path: Path) -> None:
    """No name holds `zebras`: the body index answers, as its own stage (issue 30, the lead's
    decision), never as a name hit."""
    write(vault / "Plain.md", "this body talks about zebras at length\n")
    data = run_inprocess("lookup", "zebras", "--vault", vault, "--db", db_path, "--json").json()
    assert data["stage"] == "body"
    assert [c["via"] for c in data["candidates"]] == [{"stage": "body", "matched": ["body"]}]


def test_lookup_text_output_lists_the_same_notes(demo: tuple[Path, Path]) -> None:
    vault, db = demo
    text = run_inprocess("lookup", "spf13", "--vault", vault, "--db", db, "--no-refresh")
    assert text.code == 0
    for path in COBRA_NOTES:
        assert path in text.stdout
    assert "graph_expansion" in text.stdout


def test_cjk_run_without_spaces_is_decomposed_into_known_pieces(vault: Path, db_path: Path) -> None:
    write(vault / "Inbox 整理流程.md", "x\n")
    write(vault / "演算法筆記.md", "x\n")
    write(vault / "Other.md", "x\n")
    data = run_inprocess(
        "lookup", "收件匣整理流程", "--vault", vault, "--db", db_path, "--json"
    ).json()
    assert data["terms"] == ["整理流程"]
    assert paths(data) == {"Inbox 整理流程.md"}
    # Pieces that occur are kept and reported; the rest of the run is dropped, never widened.
    data = run_inprocess(
        "lookup", "量子糾纏演算法", "--vault", vault, "--db", db_path, "--json"
    ).json()
    assert data["terms"] == ["演算法"]
    assert paths(data) == {"演算法筆記.md"}
    data = run_inprocess("lookup", "量子糾纏", "--vault", vault, "--db", db_path, "--json").json()
    assert (data["terms"], data["stage"], data["candidates"]) == ([], "none", [])


def test_loose_title_match_finds_a_substring_inside_a_word(vault: Path, db_path: Path) -> None:
    """Stage 2's loose title match: `itgc` inside `genitgc`, which no token prefix reaches."""
    write(vault / "Rerun genitgc nightly.md", "x\n")
    write(vault / "Other.md", "see [[Rerun genitgc nightly]]\n")
    write(vault / "Far.md", "x\n")
    data = run_inprocess("lookup", "itgc", "--vault", vault, "--db", db_path, "--json").json()
    assert data["stage"] == "graph_expansion"
    by_path = {c["path"]: c for c in data["candidates"]}
    assert set(by_path) == {"Rerun genitgc nightly.md", "Other.md"}
    assert by_path["Rerun genitgc nightly.md"]["via"]["matched"] == ["title (loose)"]
    # The trigram index follows edits: rename the note and the old title stops matching.
    (vault / "Rerun genitgc nightly.md").rename(vault / "Nightly.md")
    data = run_inprocess("lookup", "itgc", "--vault", vault, "--db", db_path, "--json").json()
    assert data["stage"] == "none"

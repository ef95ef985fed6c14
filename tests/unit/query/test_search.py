"""`notedex search` (issue 7): the CLI in-process, plus the query translation as units.

Positions are checked against the file on disk: the reported line and column must point at
the reported `match`, and the match must be what the query asked for.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.errors import UsageError
from notedex.query.search import (
    MAX_QUERY_CHARS,
    match_expression,
    parse_query,
    phrase_expression,
    segment_with_offsets,
)
from notedex.vault.text import nfc, segment
from tests.helpers import run_inprocess, write

NOTES = {
    "Shell.md": "# Shell\n\nThe shell completion works for bash.\n",
    "Scripts.md": "Shell scripts have no completion of their own.\n",
    "Completed.md": "The work was completed yesterday; compile later.\n",
    "Cobra.md": "---\ntags: [go]\n---\nCobra is a CLI library.\nIt generates shell completion.\n",
    "Links.md": "Internal links are useful. Linking notes helps.\n",
    "中文/框架.md": "這是Cobra CLI框架的說明，命令列工具很好用。\n第二行：錯誤處理。\n",
    "中文/單字.md": "共用的 flags\n",
}


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("search-corpus")
    vault = base / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    for rel, text in NOTES.items():
        write(vault / rel, text)
    # Positions must survive a BOM, CRLF line ends, frontmatter and NFD text before the hit.
    (vault / "Tricky.md").write_bytes(
        "\ufeff---\r\ntitle: Tricky\r\n---\r\nfirst line\r\n".encode()
        + unicodedata.normalize("NFD", "Café résumé — needle here\r\n").encode()
    )
    db = base / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db


def search(vault_db: tuple[Path, Path], *query: str, code: int = 0) -> dict:
    vault, db = vault_db
    result = run_inprocess("search", *query, "--vault", vault, "--db", db, "--json", "--no-refresh")
    assert result.code == code, result.stderr
    return result.json() if code == 0 else {"stderr": result.stderr, "stdout": result.stdout}


def assert_points_at_match(vault: Path, hit: dict) -> str:
    """The reported line/column hold exactly the reported match, in the file as it is."""
    text = (vault / hit["path"]).read_bytes().decode("utf-8").removeprefix("\ufeff")
    line = text.split("\n")[hit["line"] - 1]
    start = hit["column"] - 1
    assert line[start : start + len(hit["match"])] == hit["match"], (hit, line)
    assert hit["snippet"][hit["matchStart"] : hit["matchEnd"]] == hit["match"]
    return str(hit["match"])


def paths(data: dict) -> set[str]:
    return {h["path"] for h in data["hits"]}


# -- through the CLI ------------------------------------------------------------------------------


def test_word_hits_carry_path_title_line_column_and_snippet(demo: tuple[Path, Path]) -> None:
    data = search(demo, "cobra")
    assert data["total"] == len(data["hits"]) > 0
    for hit in data["hits"]:
        assert set(hit) >= {"path", "title", "line", "column", "match", "snippet", "score"}
        assert assert_points_at_match(demo[0], hit).lower() == "cobra"
    assert data["terms"] == [{"text": "cobra", "kind": "word", "exclude": False}]


def test_phrase_needs_the_words_next_to_each_other(corpus: tuple[Path, Path]) -> None:
    phrase = search(corpus, '"shell completion"')
    assert paths(phrase) == {"Shell.md", "Cobra.md"}
    words = search(corpus, "shell completion")
    assert paths(words) == {"Shell.md", "Cobra.md", "Scripts.md"}
    for hit in phrase["hits"]:
        assert assert_points_at_match(corpus[0], hit).lower() == "shell completion"


def test_prefix_matches_the_start_of_words(corpus: tuple[Path, Path]) -> None:
    data = search(corpus, "comple*")
    assert {"Completed.md", "Shell.md", "Scripts.md", "Cobra.md"} <= paths(data)
    for hit in data["hits"]:
        assert assert_points_at_match(corpus[0], hit).lower().startswith("comple")
    assert data["terms"][0]["kind"] == "prefix"


def test_minus_excludes_notes(corpus: tuple[Path, Path]) -> None:
    data = search(corpus, "completion -cobra")  # porter: "completed" shares the stem
    assert paths(data) == {"Shell.md", "Scripts.md", "Completed.md"}
    excluded = search(corpus, 'completion -"shell completion"')
    assert paths(excluded) == {"Scripts.md", "Completed.md"}


def test_stemmed_match_points_at_the_word_that_matched(corpus: tuple[Path, Path]) -> None:
    data = search(corpus, "linking")
    (hit,) = data["hits"]
    assert hit["path"] == "Links.md"
    assert assert_points_at_match(corpus[0], hit) == "links"  # porter: linking ~ links


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("框架", "框架"),
        ("框", "框"),
        ("架的說", "架的說"),
        ("錯誤處理", "錯誤處理"),
        ("CLI框架", "CLI框架"),
    ],
)
def test_cjk_inside_a_longer_run(corpus: tuple[Path, Path], query: str, expected: str) -> None:
    data = search(corpus, query)
    assert "中文/框架.md" in paths(data)
    hit = next(h for h in data["hits"] if h["path"] == "中文/框架.md")
    assert assert_points_at_match(corpus[0], hit).startswith(expected)


def test_single_cjk_character_at_the_end_of_a_run(corpus: tuple[Path, Path]) -> None:
    data = search(corpus, "的")
    hit = next(h for h in data["hits"] if h["path"] == "中文/單字.md")
    assert assert_points_at_match(corpus[0], hit) == "的"
    assert hit["line"] == 1 and hit["column"] == 3


def test_positions_count_bom_crlf_frontmatter_and_nfd(corpus: tuple[Path, Path]) -> None:
    (hit,) = search(corpus, "needle")["hits"]
    assert hit["path"] == "Tricky.md"
    assert hit["line"] == 5
    raw_line = (corpus[0] / "Tricky.md").read_bytes().decode().split("\n")[4]
    assert hit["column"] == raw_line.index("needle") + 1  # columns count the NFD characters
    assert hit["match"] == "needle"
    (accent,) = search(corpus, "resume")["hits"]  # diacritics folded, like lookup
    assert nfc(assert_points_at_match(corpus[0], accent)) == "résumé"


def test_a_note_changed_after_indexing_is_located_in_its_current_text(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Moving.md", "alpha target\n")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    write(vault / "Moving.md", "new first line\n\n    and the target moved\n")
    (hit,) = search((vault, db), "target")["hits"]
    assert (hit["line"], hit["column"]) == (3, 13)
    assert_points_at_match(vault, hit)
    write(vault / "Moving.md", "nothing left\n")
    (gone,) = search((vault, db), "target")["hits"]  # the stale index still lists it...
    assert gone["line"] is None and gone["column"] is None  # ...but never with a wrong position


def test_stop_words_must_match_but_are_never_the_hit_shown(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "Headings.md", "To start, write a title.\nYou can link to a heading.\n")
    write(vault / "Other.md", "a link to nothing\n")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    data = search((vault, db), "link to a heading")
    (hit,) = data["hits"]  # every word still has to match
    assert hit["match"] == "link" and (hit["line"], hit["column"]) == (2, 9)
    assert_points_at_match(vault, hit)
    (start,) = search((vault, db), "to start")["hits"]
    assert start["match"] == "start"  # "To" comes first but is a stop word
    (only,) = search((vault, db), "you can")["hits"]  # stop words only: they are the hit
    assert only["match"] == "You"
    write(vault / "Headings.md", "To start: a heading, then a link to it.\n")  # changed on disk
    (moved,) = search((vault, db), "link to a heading")["hits"]
    assert moved["match"] == "heading" and moved["line"] == 1


def test_limit_and_total(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    for i in range(25):
        write(vault / f"n{i:02}.md", f"alpha number {i}\n")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    data = search((vault, db), "alpha")
    assert (data["total"], data["shown"], data["limit"]) == (25, 20, 20)
    five = search((vault, db), "alpha", "--limit", "5")
    assert (five["total"], five["shown"]) == (25, 5)
    assert "1-5 of 25" in five["message"]


def test_no_match_is_not_an_error(demo: tuple[Path, Path]) -> None:
    data = search(demo, "zzzyzzy")
    assert data["hits"] == [] and data["total"] == 0
    assert data["message"].startswith("no matching notes")


def test_text_output_shows_position_and_marks_the_hit(corpus: tuple[Path, Path]) -> None:
    vault, db = corpus
    result = run_inprocess("search", "needle", "--vault", vault, "--db", db, "--no-refresh")
    assert result.code == 0, result.stderr
    assert "Tricky.md:5:" in result.stdout
    assert "«needle»" in result.stdout


HOSTILE = [
    '"', '""', '"unbalanced', 'a"b', "'", "\\", "AND", "OR", "NOT", "a AND b", "a OR b", "NOT a",
    "NEAR(a b)", "NEAR(", "NEAR(a b, 2)", "*", "**", "a*", "*a", "^a", "a^", "title:cobra",
    "body:cobra", ":", "-", "--", "-cobra", "(", ")", "(a", "a)", "((((", "{a b}", "[a]",
    '-"cobra', 'cobra -', '"cobra"*', "a + b", "rowid", "rank", "😀", "a\tb", "x" * 10_000,
    "cobra " * 2_000, "a " * 40, "",
]  # fmt: skip


@pytest.mark.parametrize(
    "query", HOSTILE, ids=lambda q: repr(q[:20]) + (f"+{len(q)}" if len(q) > 20 else "")
)
def test_hostile_input_gives_a_result_or_a_clear_usage_error(
    demo: tuple[Path, Path], query: str
) -> None:
    vault, db = demo
    result = run_inprocess("search", query, "--vault", vault, "--db", db, "--json", "--no-refresh")
    assert result.code in (0, 2), result.stderr
    assert "Traceback" not in result.stderr
    lowered = result.stderr.lower()
    assert "sqlite" not in lowered and "fts5" not in lowered and "syntax error" not in lowered
    if result.code == 0:
        data = json.loads(result.stdout)
        assert isinstance(data["hits"], list)
    else:
        assert result.stdout == ""
        # ours: one line; argparse's (a query that looks like an option): usage + one line
        last = result.stderr.strip().splitlines()[-1]
        assert last.startswith(("notedex: error:", "notedex search: error:")), result.stderr
        if not query.startswith("-"):
            assert result.stderr.count("\n") == 1


def test_empty_and_exclusion_only_queries_exit_2(demo: tuple[Path, Path]) -> None:
    assert "the search text is empty" in search(demo, "", code=2)["stderr"]  # one query rule
    assert "at least one word" in search(demo, "-cobra -go", code=2)["stderr"]
    vault, db = demo
    dashed = run_inprocess("search", "--vault", vault, "--db", db, "--no-refresh", "--", "-cobra")
    assert dashed.code == 2 and "at least one word" in dashed.stderr
    assert search(demo, "go -cobra")["total"] >= 1  # one argument with a space is never an option
    assert "too long" in search(demo, "x" * (MAX_QUERY_CHARS + 1), code=2)["stderr"]


# -- units: the translation is safe and agrees with the index -------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("cobra", '"cobra"'),
        ("gen-itgc", '"gen itgc"'),
        ("NEAR(", '"NEAR"'),
        ('a"b', '"a b"'),
        ("框架", '"框架"'),
        ("框架設計", '"框架 架設 設計"'),
        ("框", '"框" *'),
        ("框架 設計", '"框架 架 設計"'),
        ("Go 的", '"Go 的" *'),
        ("CLI框架", '"CLI 框架"'),
        ("***", None),
        ("^:()", None),
    ],
)
def test_phrase_expression(text: str, expected: str | None) -> None:
    assert phrase_expression(text) == expected


def test_match_expression_quotes_every_term() -> None:
    terms = parse_query('cobra "shell completion" comp* -zsh -"fish shell" OR NOT')
    assert [t.kind for t in terms] == ["word", "phrase", "prefix", "word", "phrase", "word", "word"]
    assert match_expression(terms) == (
        '("cobra" AND "shell completion" AND "comp" * AND "OR" AND "NOT") NOT ("zsh" OR "fish shell")'
    )


def test_parse_query_rejects_nothing_to_search() -> None:
    for query in ("", "   ", "*", '""', "-", "^^^"):
        with pytest.raises(UsageError):
            parse_query(query)


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("ab 框架的說明。\n\t-_,.CLI中e\u0301é\u3000")), max_size=40
    )
)
def test_segment_with_offsets_agrees_with_segment(text: str) -> None:
    ntext = nfc(text)
    seg, offsets = segment_with_offsets(ntext)
    assert seg == segment(text)
    assert len(offsets) == len(seg)
    for i, ch in enumerate(seg):
        if offsets[i] >= 0:
            assert ntext[offsets[i]] == ch
        else:
            assert ch == " "

"""Answers an agent can cite (issue 16), through the CLI: `show --lines`, the line at which
`--body` starts, and `quote` with its exit codes, its JSON and its closest passage. In-process
(``run_inprocess``: the same ``main`` and exit codes), but for `quote --check -`, whose items
and exit code go through a child process's stdin and stdout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import Result, run_cli, run_inprocess, write
from tests.indexcheck import age

FRONTMATTER = "---\ntitle: Fronted\ntags: [a]\n---\n"  # lines 1-4; the body starts on line 5
BODY = "".join(f"line {n} of the body\n" for n in range(1, 11))
PROSE = (
    "# Prose\n"
    "\n"
    "The daemon watches the vault and\n"
    "re-indexes only what **changed**, then the CLI\n"
    "answers from the index; see [[Fronted|the fronted note]] for more.\n"
    "“Curly quotes” are quoted straight.\n"
)
CJK = "# 中文筆記\n\nCobra 是 Go 生態系最常用的\nCLI 框架：子命令、\n旗標與說明文字。\n"


@pytest.fixture(scope="module")
def indexed(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("citations")
    vault = base / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    write(vault / "fronted.md", FRONTMATTER + BODY)
    write(vault / "plain.md", BODY)
    (vault / "crlf.md").write_bytes((FRONTMATTER + BODY).replace("\n", "\r\n").encode())
    write(vault / "prose.md", PROSE)
    write(vault / "cjk.md", "---\nid: x\n---\n" + CJK)
    age(vault)
    db = base / "index.db"
    result = run_inprocess("index", "--vault", vault, "--db", db)
    assert result.code == 0, result.stderr
    return vault, db


def cli(indexed: tuple[Path, Path], *args: str) -> Result:
    vault, db = indexed
    return run_inprocess(*args, "--vault", vault, "--db", db, "--no-refresh")


def json_of(result: Result, code: int = 0) -> Any:
    assert result.code == code, result.stderr
    assert result.stdout.endswith("\n") and result.stdout.count("\n") == 1
    return json.loads(result.stdout)


def lines_of(indexed: tuple[Path, Path], note: str, wanted: str) -> list[tuple[int, str]]:
    data = json_of(cli(indexed, "show", note, "--lines", wanted, "--json"))
    return [(item["line"], item["text"]) for item in data["lines"]]


# -- show --lines ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "wanted", "expected"),
    [
        ("fronted.md", "5-6", [(5, "line 1 of the body"), (6, "line 2 of the body")]),
        ("fronted.md", "9-10", [(9, "line 5 of the body"), (10, "line 6 of the body")]),
        ("fronted.md", "13-14", [(13, "line 9 of the body"), (14, "line 10 of the body")]),
        ("fronted.md", "14", [(14, "line 10 of the body")]),
        ("fronted.md", "13-", [(13, "line 9 of the body"), (14, "line 10 of the body")]),
        ("fronted.md", "1-5", [(5, "line 1 of the body")]),  # frontmatter lines are left out
        ("plain.md", "1-2", [(1, "line 1 of the body"), (2, "line 2 of the body")]),
        ("plain.md", "10", [(10, "line 10 of the body")]),
        ("crlf.md", "5-6", [(5, "line 1 of the body"), (6, "line 2 of the body")]),
        ("cjk.md", "7-8", [(7, "CLI 框架：子命令、"), (8, "旗標與說明文字。")]),
    ],
)
def test_show_lines_are_numbered_as_in_the_file(
    indexed: tuple[Path, Path], note: str, wanted: str, expected: list[tuple[int, str]]
) -> None:
    assert lines_of(indexed, note, wanted) == expected


def test_a_range_past_the_end_gives_the_lines_up_to_the_end(indexed: tuple[Path, Path]) -> None:
    data = json_of(cli(indexed, "show", "fronted.md", "--lines", "13-99", "--json"))
    assert [item["line"] for item in data["lines"]] == [13, 14]
    assert (data["lineCount"], data["bodyStartLine"]) == (14, 5)
    beyond = json_of(cli(indexed, "show", "fronted.md", "--lines", "50-60", "--json"))
    assert beyond["lines"] == [] and beyond["lineCount"] == 14


def test_show_lines_keeps_the_note_document_and_its_modified_time(
    indexed: tuple[Path, Path],
) -> None:
    data = json_of(cli(indexed, "show", "Prose", "--lines", "3", "--json"))  # by its title
    assert data["path"] == "prose.md" and data["modified"].endswith("+00:00")
    assert data["lines"] == [{"line": 3, "text": "The daemon watches the vault and"}]
    assert list(data)[-3:] == ["bodyStartLine", "lineCount", "lines"]
    assert "body" not in data


@pytest.mark.parametrize(("note", "start"), [("fronted.md", 5), ("plain.md", 1), ("crlf.md", 5)])
def test_body_json_gives_the_line_the_body_starts_on(
    indexed: tuple[Path, Path], note: str, start: int
) -> None:
    data = json_of(cli(indexed, "show", note, "--body", "--json"))
    assert data["bodyStartLine"] == start
    first = data["body"].splitlines()[0]
    assert first == "line 1 of the body"
    assert lines_of(indexed, note, str(start)) == [(start, first)]


def test_show_lines_text_output_numbers_each_line(indexed: tuple[Path, Path]) -> None:
    result = cli(indexed, "show", "fronted.md", "--lines", "9-10")
    assert result.code == 0, result.stderr
    assert " 9  line 5 of the body\n" in result.stdout
    assert "10  line 6 of the body\n" in result.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "fronted.md", "--lines", "5-2"), "the last line 2 is before the first 5"),
        (("show", "fronted.md", "--lines", "x"), "bad line range 'x'"),
        (("show", "fronted.md", "--lines", "0-3"), "lines start at 1"),
        (("show", "fronted.md", "--lines", "-3"), "bad line range '-3'"),
        (("show", "no such note", "--lines", "1-2"), "no note matches 'no such note'"),
        (("quote", "no such note", "text"), "no note matches 'no such note'"),
        (("quote", "fronted.md", ""), "the quote is empty"),
        (("quote", "fronted.md", "  ** "), "the quote is empty"),
        (("quote", "fronted.md"), "quote needs a NOTE and the TEXT"),
        (("quote", "fronted.md", "x", "--check", "f.json"), "not both"),
        (("quote", "--check", "missing.json"), "cannot read missing.json"),
    ],
)
def test_bad_input_is_exit_2_with_a_clear_message_and_no_stdout(
    indexed: tuple[Path, Path], args: tuple[str, ...], message: str
) -> None:
    result = cli(indexed, *args, "--json")
    assert result.code == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.startswith("notedex: error: ") and message in result.stderr
    assert "Traceback" not in result.stderr


# -- quote ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("note", "text", "where", "passage"),
    [
        (
            "prose.md",
            "watches the vault and re-indexes",
            (3, 12, 4),
            "watches the vault and\nre-indexes",
        ),
        ("prose.md", "only what changed, then", (4, 12, 4), "only what **changed**, then"),
        (
            "prose.md",
            "see the fronted note for more",
            (5, 25, 5),
            "see [[Fronted|the fronted note]] for more",
        ),
        ("prose.md", '"Curly quotes" are', (6, 1, 6), "“Curly quotes” are"),
        (
            "cjk.md",
            "最常用的CLI 框架：子命令、旗標",
            (6, 15, 8),
            "最常用的\nCLI 框架：子命令、\n旗標",
        ),
        ("crlf.md", "line 2 of the body line 3", (6, 1, 7), "line 2 of the body\r\nline 3"),
    ],
)
def test_a_quote_is_found_with_its_line_column_and_lines(
    indexed: tuple[Path, Path],
    note: str,
    text: str,
    where: tuple[int, int, int],
    passage: str,
) -> None:
    data = json_of(cli(indexed, "quote", note, text, "--json"))
    assert data["found"] is True and data["closest"] is None
    match = data["match"]
    assert (match["line"], match["column"], match["lastLine"]) == where
    assert match["firstLine"] == match["line"] and match["similarity"] == 1.0
    assert match["text"] == passage
    first, last = where[0], where[2]
    assert match["cite"] == (f"{note}:{first}" if first == last else f"{note}:{first}-{last}")


def test_a_changed_word_is_not_found_and_the_closest_passage_is_reported(
    indexed: tuple[Path, Path],
) -> None:
    data = json_of(cli(indexed, "quote", "prose.md", "re-indexes only what moved", "--json"), 1)
    assert data["found"] is False and data["match"] is None
    closest = data["closest"]
    assert closest["line"] == 4 and closest["text"].startswith("re-indexes only what **")
    assert 0.7 < closest["similarity"] < 1.0
    text = cli(indexed, "quote", "prose.md", "re-indexes only what moved")
    assert text.code == 1 and text.stdout.startswith("not found in prose.md\nclosest  prose.md:4:1")


def test_the_quote_of_a_frontmatter_value_is_not_in_the_body(indexed: tuple[Path, Path]) -> None:
    data = json_of(cli(indexed, "quote", "fronted.md", "title: Fronted", "--json"), 1)
    assert data["found"] is False


def test_check_reports_every_quote_and_exits_1_when_one_fails(
    indexed: tuple[Path, Path], tmp_path: Path
) -> None:
    items = [
        {"path": "prose.md", "text": "answers from the index"},
        {"path": "cjk.md", "text": "旗標與說明文字"},
        {"path": "prose.md", "text": "answers from the database"},
        {"path": "gone.md", "text": "anything"},
    ]
    check = tmp_path / "quotes.json"
    check.write_text(json.dumps(items), encoding="utf-8")
    data = json_of(cli(indexed, "quote", "--check", str(check), "--json"), 1)
    assert (data["total"], data["found"], data["notFound"]) == (4, 2, 2)
    assert [r["found"] for r in data["results"]] == [True, True, False, False]
    assert data["results"][2]["closest"]["line"] == 5
    assert data["results"][3]["error"].startswith("no note matches 'gone.md'")
    assert all(set(r) == set(data["results"][0]) for r in data["results"])
    check.write_text(json.dumps({"quotes": items[:2]}), encoding="utf-8")
    assert json_of(cli(indexed, "quote", "--check", str(check), "--json"))["notFound"] == 0


def test_check_reads_standard_input(indexed: tuple[Path, Path]) -> None:
    vault, db = indexed
    items = json.dumps([{"path": "plain.md", "text": "line 3 of the body"}])
    result = run_cli("quote", "--check", "-", "--vault", vault, "--db", db, "--json", input=items)
    assert json_of(result)["results"][0]["match"]["cite"] == "plain.md:3"


@pytest.mark.parametrize(
    "content",
    ["not json", "[]", '[{"path": "a.md"}]', '[{"path": "a.md", "text": ""}]', '{"x": 1}'],
)
def test_a_malformed_check_file_is_exit_2(
    indexed: tuple[Path, Path], tmp_path: Path, content: str
) -> None:
    check = tmp_path / "bad.json"
    check.write_text(content, encoding="utf-8")
    result = cli(indexed, "quote", "--check", str(check), "--json")
    assert (result.code, result.stdout) == (2, "")
    assert result.stderr.startswith(f"notedex: error: {check}")

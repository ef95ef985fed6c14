"""The vault's file rules (vault/files.py), and that the indexer, `show`, `search` and `export`
all follow them: one frontmatter locator, one reader with size cap and FIFO guard."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from notedex.vault import files
from notedex.vault.files import (
    DEFAULT_MAX_BYTES,
    NotARegularFile,
    body_start_line,
    excluded_filters_key,
    file_lines,
    frontmatter_bounds,
    is_hidden_path,
    is_note_name,
    looks_binary,
    note_stem,
    note_text,
    read_capped,
    strip_frontmatter,
)
from notedex.vault.parse import parse_note
from tests.helpers import run_inprocess, write

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this platform")


def reference_body(text: str) -> str:
    """SEMANTICS 2, written independently: ``---`` + newline at offset 0, closed by the next
    line that is exactly ``---`` (CRLF accepted)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0] not in ("---\n", "---\r\n"):
        return text
    for index, line in enumerate(lines[1:], 1):
        if line in ("---", "---\n", "---\r", "---\r\n"):
            return "".join(lines[index + 1 :])
    return text


# --- names -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("a.md", True),
        ("A.MD", True),
        ("x.Md", True),
        (".md", True),
        ("a.mdx", False),
        ("md", False),
    ],
)
def test_note_names_end_in_md_in_any_case(name: str, expected: bool) -> None:
    assert is_note_name(name) is expected


@pytest.mark.parametrize(
    ("path", "stem"), [("A/B/Dup.md", "Dup"), ("x.MD", "x"), ("img/pic.png", "pic.png")]
)
def test_note_stem(path: str, stem: str) -> None:
    assert note_stem(path) == stem


@pytest.mark.parametrize(
    ("path", "hidden"),
    [
        (".obsidian/app.json", True),
        ("a/.trash/x.md", True),
        (".hidden.md", True),
        ("a/b.c/x.md", False),
        ("a/x.md", False),
        ("a..b/x.md", False),
    ],
)
def test_hidden_paths_have_a_dot_segment(path: str, hidden: bool) -> None:
    assert is_hidden_path(path) is hidden


# --- the frontmatter locator -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "body"),
    [
        ("---\na: 1\n---\nbody", "body"),
        ("---\r\na: 1\r\n---\r\nbody", "body"),
        ("---\n---\nbody", "body"),
        ("---\na: 1\n---", ""),
        ("---\na: 1\n---\r", ""),
        ("---\na: 1\n--- \n[[B]]\n---\nrest", "rest"),  # `--- ` does not close the block
        ("---\na: 1\n----\nx\n---\nrest", "rest"),
        ("---\na: 1\n--- \nno close", "---\na: 1\n--- \nno close"),
        (" ---\na: 1\n---\nx", " ---\na: 1\n---\nx"),
        ("---a\n---\nx", "---a\n---\nx"),
    ],
)
def test_frontmatter_closes_at_a_line_that_is_exactly_three_dashes(text: str, body: str) -> None:
    assert strip_frontmatter(text) == body
    assert reference_body(text) == body


def test_frontmatter_bounds_give_the_yaml_and_the_body() -> None:
    text = "---\r\ntitle: x\r\n---\r\nbody"
    yaml_start, yaml_end, body_start = frontmatter_bounds(text) or (0, 0, 0)
    assert text[yaml_start:yaml_end] == "title: x\r\n"
    assert text[body_start:] == "body"
    assert frontmatter_bounds("no block") is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["---", "--- ", "----", "a: 1", "[[B]]", "", " ---", "---\t", "x---"]),
        max_size=6,
    ),
    st.sampled_from(["\n", "\r\n"]),
    st.booleans(),
)
def test_locator_agrees_with_the_spec_reference(lines: list[str], eol: str, final: bool) -> None:
    text = eol.join(lines) + (eol if final else "")
    assert strip_frontmatter(text) == reference_body(text)


# --- reading a vault file --------------------------------------------------------------------


def test_read_capped_reads_one_byte_past_the_cap_and_no_more(tmp_path: Path) -> None:
    path = tmp_path / "big.md"
    path.write_bytes(b"x" * 1000)
    data, info = read_capped(path, 100)
    assert len(data) == 101 and info.st_size == 1000
    data, _info = read_capped(path, 1000)
    assert data == b"x" * 1000


@pytest.mark.parametrize("size", [0, 1, 99, 100, 101, 102, 1000, 70_000, 200_000])
@pytest.mark.parametrize("cap", [0, 1, 100, 65_536, 150_000, DEFAULT_MAX_BYTES])
def test_read_capped_reads_what_a_buffered_read_of_the_cap_reads(
    tmp_path: Path, size: int, cap: int
) -> None:
    """The reads sized by fstat give the bytes ``open(...).read(cap + 1)`` gives."""
    path = tmp_path / "n.md"
    path.write_bytes(bytes(range(256)) * (size // 256) + b"z" * (size % 256))
    with open(path, "rb") as handle:
        expected = handle.read(cap + 1)
    data, info = read_capped(path, cap)
    assert data == expected and info.st_size == size


@pytest.mark.parametrize("said", [0, 10, 999])
def test_read_capped_reads_past_a_size_that_is_out_of_date(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, said: int
) -> None:
    """A file that grew after its fstat (or one whose size says 0) is read on to the cap."""
    path = tmp_path / "n.md"
    path.write_bytes(b"y" * 150_000)
    real_fstat = os.fstat

    def stale_fstat(fd: int) -> os.stat_result:
        info = list(real_fstat(fd))
        info[6] = said  # st_size
        return os.stat_result(info)

    monkeypatch.setattr(files.os, "fstat", stale_fstat)
    assert read_capped(path, 200_000)[0] == b"y" * 150_000
    assert read_capped(path, 100_000)[0] == b"y" * 100_001
    assert read_capped(path, 5)[0] == b"y" * 6


def test_read_capped_refuses_a_folder(tmp_path: Path) -> None:
    with pytest.raises(NotARegularFile) as caught:
        read_capped(tmp_path, 100)
    assert caught.value.what == "a directory"


@needs_fifo
def test_read_capped_does_not_block_on_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "x.md"
    os.mkfifo(fifo)
    with pytest.raises(NotARegularFile) as caught:
        read_capped(fifo, 100)  # a blocking open would hang here: nobody writes to it
    assert caught.value.what == "not a regular file"


def test_read_capped_raises_oserror_for_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        read_capped(tmp_path / "gone.md", 100)


def test_binary_sniff_looks_at_the_first_8_kb() -> None:
    assert looks_binary(b"PNG\0...")
    assert not looks_binary(b"x" * 8192 + b"\0")


# --- one rule for the indexer, `show`, `search` and `export` ---------------------------------

# The closing line `--- ` (trailing space) does not close the block (SEMANTICS 2): the next
# exact `---` does, so `[[B]] tail` is inside the frontmatter, and only `tail end` is body.
TRAILING_SPACE = "---\ntitle: T\n--- \n[[B]] tail\n---\ntail end\n"


@pytest.fixture(scope="module")
def drift_vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    base = tmp_path_factory.mktemp("drift")
    vault = base / "vault"
    write(vault / "A.md", TRAILING_SPACE)
    write(vault / "B.md", "b\n")
    db = base / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


def cli(drift_vault: tuple[Path, Path], *args: str) -> dict:
    vault, db = drift_vault
    result = run_inprocess(*args, "--vault", vault, "--db", db, "--no-refresh", timeout=60)
    assert result.code in (0, 1), result.stderr
    return json.loads(result.stdout)


def test_the_indexer_ends_frontmatter_at_the_exact_line() -> None:
    note = parse_note(TRAILING_SPACE.encode(), "A.md")
    assert note.body == "tail end\n"
    assert note.links == ()


def test_show_body_is_the_indexed_body(drift_vault: tuple[Path, Path]) -> None:
    data = cli(drift_vault, "show", "A", "--body", "--json")
    assert data["body"] == "tail end\n"
    assert data["links"] == []  # the index saw no [[B]], and show now agrees


def test_search_positions_count_only_the_body(drift_vault: tuple[Path, Path]) -> None:
    data = cli(drift_vault, "search", "tail", "--json")
    (hit,) = data["hits"]
    # The first `tail` in the file is in the frontmatter, where the index never saw it.
    assert (hit["line"], hit["column"]) == (6, 1)


def test_export_text_is_the_indexed_body(drift_vault: tuple[Path, Path]) -> None:
    vault, db = drift_vault
    result = run_inprocess(
        "export", "--format", "connector-v1", "--vault", vault, "--db", db, "--no-refresh"
    )
    assert result.code == 0, result.stderr
    (record,) = [r for r in json.loads(result.stdout)["records"] if r["title"] == "A"]
    assert record["text"] == "tail end\n"


# --- `show --body` reads as the indexer reads ------------------------------------------------


@pytest.fixture
def indexed_note(tmp_path: Path) -> tuple[Path, Path]:
    vault = tmp_path / "vault"
    write(vault / "x.md", "# x\n")
    db = tmp_path / "index.db"
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    return vault, db


@needs_fifo
@pytest.mark.skipif(sys.platform == "win32", reason="POSIX FIFOs")
def test_show_body_does_not_hang_on_a_fifo(indexed_note: tuple[Path, Path]) -> None:
    vault, db = indexed_note
    (vault / "x.md").unlink()
    os.mkfifo(vault / "x.md")  # replaced after indexing; nobody will ever write to it
    result = run_inprocess(
        "show", "x", "--body", "--json", "--vault", vault, "--db", db, "--no-refresh", timeout=30
    )
    assert result.code != 0
    assert "cannot read x.md: not a regular file" in result.stderr


def test_show_body_refuses_a_note_over_the_size_cap(indexed_note: tuple[Path, Path]) -> None:
    vault, db = indexed_note
    (vault / "x.md").write_bytes(b"# x\n" + b"y" * DEFAULT_MAX_BYTES)
    result = run_inprocess(
        "show", "x", "--body", "--json", "--vault", vault, "--db", db, "--no-refresh", timeout=30
    )
    assert result.code != 0
    assert "cannot read x.md: file is 5.0 MB, over the 5.0 MB size cap" in result.stderr
    assert result.stdout == ""


def test_the_config_default_is_the_vault_default(tmp_path: Path) -> None:
    """config.py reads the vault's one constant when asked, so `lookup` need not import
    vault/files.py (issue 34: no second copy)."""
    from notedex import config

    assert not hasattr(config, "DEFAULT_MAX_BYTES")
    assert config.Config(tmp_path, tmp_path / "db").max_bytes == DEFAULT_MAX_BYTES
    assert config.Config(tmp_path, tmp_path / "db", max_bytes=7).max_bytes == 7


def test_show_body_applies_the_configured_size_cap(
    indexed_note: tuple[Path, Path], tmp_path: Path
) -> None:
    """`max_bytes` from the config file caps `show --body` too, not only the indexer."""
    vault, db = indexed_note
    (vault / "x.md").write_bytes(b"# x\n" + b"y" * 2000)
    config = tmp_path / "config.toml"
    config.write_text("max_bytes = 1000\n", encoding="utf-8")
    argv = ("show", "x", "--body", "--json", "--vault", vault, "--db", db, "--no-refresh")
    capped = run_inprocess(*argv, env={"NOTEDEX_CONFIG": str(config)}, timeout=30)
    assert capped.code == 2
    assert "cannot read x.md: file is 2.0 KB, over the 1.0 KB size cap" in capped.stderr
    assert run_inprocess(*argv, timeout=30).code == 0  # the default cap (5 MB) lets it through


# -- lines as numbered in the file -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "start"),
    [
        ("no frontmatter\n", 1),
        ("---\ntitle: x\n---\nbody\n", 4),
        ("---\r\ntitle: x\r\n---\r\nbody\r\n", 4),
        ("---\ntitle: x\n---", 4),  # closed at the end of the file: the body would follow
        ("---\nnot closed\n", 1),
        ("", 1),
    ],
)
def test_body_start_line_counts_the_frontmatter(text: str, start: int) -> None:
    assert body_start_line(text) == start


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a\nb\n", ["a", "b"]),
        ("a\nb", ["a", "b"]),
        ("a\r\nb\r\n", ["a", "b"]),
        ("a\n\nb\n\n", ["a", "", "b", ""]),
        ("", []),
        ("中文\n行", ["中文", "行"]),
    ],
)
def test_file_lines_numbers_lines_as_the_file_does(text: str, lines: list[str]) -> None:
    assert file_lines(text) == lines
    assert len(file_lines(text)) == len(text.splitlines())  # the same count as an editor's


def test_the_body_starts_on_the_line_after_the_closing_fence() -> None:
    text = "---\na: 1\n---\nfirst body line\n"
    assert file_lines(text)[body_start_line(text) - 1] == "first body line"
    assert strip_frontmatter(text).startswith("first body line")


def test_a_bom_is_dropped_by_every_reader(tmp_path: Path) -> None:
    """`note_text` is the one decoding rule: `show --body`, `search` and the indexer agree."""
    vault = tmp_path / "vault"
    (vault / ".obsidian").mkdir(parents=True)
    (vault / "b.md").write_bytes("\ufeff---\ntitle: Bee\n---\nbody [[x]] here\n".encode())
    db = tmp_path / "index.db"
    common = ("--vault", vault, "--db", db)
    shown = run_inprocess("show", "b", "--body", "--json", *common).json()
    assert shown["title"] == "Bee"  # the indexer saw the frontmatter
    assert shown["body"] == "body [[x]] here\n"  # and so does show: no frontmatter in the body
    hit = run_inprocess("search", "here", "--json", *common).json()["hits"][0]
    assert (hit["line"], hit["column"]) == (4, 12)
    assert note_text(b"\xef\xbb\xbfa\xff") == "a\ufffd"  # BOM dropped, bad UTF-8 replaced


# --- app.json without the json module (issue 15: the etag check imports neither json nor re) ---

_JSON_TEXTS = [
    "",
    "   ",
    "{}",
    ' \t\n{"userIgnoreFilters": ["a/", "b"]}\r\n',
    '{"userIgnoreFilters": ["caf\\u00e9", "\\ud83d\\ude00", "x\\"y"], "n": [1, -2.5e3, 1E2]}',
    '{"a": NaN, "b": Infinity, "c": -Infinity, "d": [true, false, null]}',
    '{"a": 1} {"b": 2}',
    '{"a": 1,}',
    '{"a" 1}',
    '{"a": "tab\there"}',
    '{"a": ',
    "[1, 2",
    "\ufeff{}",
    '"just a string"',
    "[" * 50 + "]" * 50,
    "12 ",
    "nul",
]


def _outcome(parse: Any, text: str) -> tuple[str, str]:
    try:
        return ("value", repr(parse(text)))
    except ValueError:
        return ("error", "")


@pytest.mark.parametrize("text", _JSON_TEXTS)
def test_app_json_is_read_as_json_loads_reads_it(text: str) -> None:
    assert _outcome(files._json_loads, text) == _outcome(json.loads, text)


@settings(max_examples=200, deadline=None)
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
        max_leaves=12,
    )
)
def test_any_json_document_reads_back_the_same(value: object) -> None:
    text = json.dumps(value, indent=1)
    assert repr(files._json_loads(text)) == repr(json.loads(text))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text()))
def test_the_stored_filters_key_is_json_dumps(filters: list[str]) -> None:
    assert excluded_filters_key(tuple(filters)) == json.dumps(filters)


def test_reading_app_json_imports_no_json(tmp_path: Path) -> None:
    write(tmp_path / ".obsidian/app.json", '{"userIgnoreFilters": ["Archive/", "", 3, "x"]}')
    code = (
        "import sys; from notedex.vault.files import load_excluded_filters, excluded_filters_key; "
        f"f = load_excluded_filters({str(tmp_path)!r}); print(excluded_filters_key(f)); "
        "print(sorted(m for m in ('json', 're') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-S", "-c", code],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.stdout.splitlines() == ['["Archive/", "x"]', "[]"], done.stderr

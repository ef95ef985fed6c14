"""What a lookup process imports of notedex (issue 30's speed budget: each module is instructions
of every lookup, counted against interpreter start-up)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from notedex.store import schema, schema_head
from tests.helpers import modules_after, run_inprocess
from tests.system.test_imports import LOOKUP_DESIGN, hot_path_list, imported_modules

QUESTIONS = (
    ("cobra",),  # a title: stage 1
    ("--json", "cli", "framework", "--limit", "3"),  # two words
    ("zyzzogeton",),  # a miss: stage 2, then the body stage
    ("how", "does", "a", "zyzzogeton", "cobra", "work"),  # an absent subject
)


@pytest.mark.parametrize("question", QUESTIONS, ids=" ".join)
def test_lookup_loads_neither_the_ddl_nor_the_codes(
    demo: tuple[Path, Path], question: tuple[str, ...]
) -> None:
    """The schema version and the title expression come from ``store.schema_head``: the DDL
    (``store.schema``) and health's codes (``notedex.codes``) are no import of a lookup."""
    vault, db = demo
    names = imported_modules("lookup", *question, "--vault", vault, "--db", db, "--no-refresh")
    assert "notedex.query.lookup" in names and "notedex.store.schema_head" in names
    assert sorted({"notedex.store.schema", "notedex.codes"} & names) == []


def test_health_still_loads_both(demo: tuple[Path, Path]) -> None:
    """The probe above sees these modules where a command needs them."""
    vault, db = demo
    names = imported_modules("health", "--json", "--vault", vault, "--db", db, "--no-refresh")
    assert {"notedex.store.schema", "notedex.codes"} <= names


def test_the_schema_constants_have_one_owner() -> None:
    """``store.schema`` re-exports ``store.schema_head``'s constants: one value, one place."""
    assert schema.SCHEMA_VERSION is schema_head.SCHEMA_VERSION
    assert schema.NOTE_TITLE is schema_head.NOTE_TITLE
    source = Path(schema.__file__).read_text(encoding="utf-8")
    assert "SCHEMA_VERSION = " not in source and "NOTE_TITLE = " not in source


def test_stage_2_and_the_body_stage_load_only_when_they_run(demo: tuple[Path, Path]) -> None:
    """A question a title answers loads neither stage 2's modules nor their SQL (the lookup
    budget's later list, docs/design/lookup.md); a miss, which runs stage 2 and the body stage,
    loads exactly those two beyond the hot path."""
    vault, db = demo
    later = hot_path_list("lookup-later-path", LOOKUP_DESIGN)
    assert len(later) == 2
    common = ("--vault", vault, "--db", db, "--no-refresh")
    named = imported_modules("lookup", "cobra", *common)
    missed = imported_modules("lookup", "zyzzogeton", *common)
    assert "notedex.query.lookup" in named
    assert sorted(later & named) == []
    assert sorted(later - missed) == []
    ours = {n for n in missed if n.startswith("notedex.")}
    assert sorted(ours - hot_path_list() - later) == []


def _modules_of_a_lookup(vault: Path, db: Path, question: str, read_back_rows: int) -> set[str]:
    """The notedex modules a fresh interpreter holds after one lookup, with ``READ_BACK_ROWS``
    set (the vaults here are small) and tier 1 ranked apart whenever it may be."""
    code = (
        "from notedex.store import lookup, lookup_terms\n"
        f"lookup_terms.READ_BACK_ROWS = {read_back_rows}\n"
        "lookup._COUNTED_COST = 0\n"  # ranked apart whenever it may be
        "import io, contextlib\n"
        "from notedex.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    code = main(['lookup', {question!r}, '--vault', {str(vault)!r}, '--db', {str(db)!r},"
        " '--no-refresh', '--json'])\n"
        "assert code == 0, code\n"
    )
    return {name for name in modules_after(code) if name.startswith("notedex.")}


def test_one_words_tier_one_loads_its_module_only_when_it_runs(tmp_path: Path) -> None:
    """``store.lookup_exact`` (docs/design/lookup.md, its list) is loaded by a one-word lookup
    with several exact names in a vault past ``READ_BACK_ROWS``, and by no other lookup."""
    vault, db = tmp_path / "v", tmp_path / "v.db"
    (vault / "Filler").mkdir(parents=True)
    for i in range(40):
        (vault / "Filler" / f"Kafka filler {i}.md").write_text("Text.\n", encoding="utf-8")
        for j in range(3):  # "kafka" in a quarter of the notes: its IDF is above its floor
            (vault / "Filler" / f"Other {i} {j}.md").write_text("Text.\n", encoding="utf-8")
    for i in range(3):
        (vault / f"Named {i}").mkdir()
        (vault / f"Named {i}" / "Kafka.md").write_text("# Kafka\n", encoding="utf-8")
    assert run_inprocess("index", "--vault", vault, "--db", db).code == 0
    exact = hot_path_list("lookup-exact-path", LOOKUP_DESIGN)
    assert exact == {"notedex.store.lookup_exact"}
    assert exact <= _modules_of_a_lookup(vault, db, "kafka", 0)
    assert not exact & _modules_of_a_lookup(vault, db, "kafka", 30_000)  # a small vault
    assert not exact & _modules_of_a_lookup(vault, db, "kafka filler", 0)  # two words
    assert not exact & _modules_of_a_lookup(vault, db, "zyzzogeton", 0)  # a miss


CLASSES_MADE = """
import sys
from notedex.cli import main
main(sys.argv[1:])
sys.stdout.flush()
for name, module in list(sys.modules.items()):
    if name.startswith("notedex"):
        for value in vars(module).values():
            if isinstance(value, type) and value.__module__ == name:
                print(f"made: {name}.{value.__qualname__}", file=sys.stderr)
"""


def classes_made(*args: str | Path) -> set[str]:
    """The classes of ours a query process has made when its command returns."""
    proc = subprocess.run(
        [sys.executable, "-c", CLASSES_MADE, *map(str, args)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    made = {line[6:] for line in proc.stderr.splitlines() if line.startswith("made: ")}
    assert "notedex.errors.NotedexError" in made, proc.stderr[-2000:]
    return made


@pytest.mark.parametrize(
    "command",
    [
        ("lookup", "cobra", "--no-refresh"),
        ("lookup", "--json", "zyzzogeton", "--no-refresh"),
        ("lookup", "cobra"),  # with the freshness check
        ("search", "cobra", "--no-refresh"),
        ("health", "--json", "--no-refresh"),
        ("show", "PARA 方法", "--json"),
    ],
    ids=lambda c: " ".join(c),
)
def test_a_query_makes_only_the_error_classes_it_needs_at_hand(
    demo: tuple[Path, Path], command: tuple[str, ...]
) -> None:
    """Making a class costs about 0.15M instructions of every query that loads it (an exception
    class more: its slots are looked up along its MRO). A query that does not fail makes the
    hierarchy's root and ``UsageError`` (``notedex.errors``) and no other error class
    (``notedex.error_kinds``, ``StdoutClosed`` included), nor the writer's lock
    (``store.writer_lock``); of the CLI's, only the command table's (the parsed command line is
    a ``types.SimpleNamespace``, made by the interpreter)."""
    vault, db = demo
    made = classes_made(*command, "--vault", vault, "--db", db)
    errors = {name for name in made if name.startswith("notedex.error")}
    assert sorted(errors) == ["notedex.errors.NotedexError", "notedex.errors.UsageError"]
    assert sorted(name for name in made if "WriterLock" in name) == []
    # The reader's module makes the lock record's class alone (read_transaction is a function).
    connect = {name for name in made if name.startswith("notedex.store.connect.")}
    assert connect <= {"notedex.store.connect.LockHolder"}
    cli = {name for name in made if name.startswith("notedex.cli.")}
    assert cli <= {"notedex.cli.commands.Option", "notedex.cli.commands.Command"}


def test_lookup_and_search_load_only_their_own_handlers(demo: tuple[Path, Path]) -> None:
    """A lookup unmarshals no code of search's and health's handlers (``cli.questions``), nor
    they lookup's (``cli.lookup``): each function a loaded module holds costs every run."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    looked_up = imported_modules("lookup", "cobra", *common)
    searched = imported_modules("search", "cobra", *common)
    assert "notedex.cli.lookup" in looked_up and "notedex.cli.questions" not in looked_up
    assert "notedex.cli.questions" in searched and "notedex.cli.lookup" not in searched


def test_only_a_question_with_kana_or_hangul_loads_their_rules(demo: tuple[Path, Path]) -> None:
    """Japanese and Korean keywords are ``query.terms_kana``'s: a question in a Latin script or
    in Chinese does not unmarshal that code."""
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    kana = "notedex.query.terms_kana"
    assert kana not in imported_modules("lookup", "cobra", *common)
    assert kana not in imported_modules("lookup", "vault 裡有哪些跟 Cobra 相關的筆記？", *common)
    assert kana not in imported_modules("search", "cobra", *common)
    assert kana in imported_modules("lookup", "タグの使い方を教えて", *common)
    assert kana in imported_modules("lookup", "볼트를", *common)


def test_the_hot_path_unmarshals_no_listing_only_reader(demo: tuple[Path, Path]) -> None:
    """What only whole-vault listings read (``scan``'s names, ``tags``' counts, the MCP pages)
    is ``store.listing_rows``: ``store.read``, which every query loads, does not hold it, and
    lookup, search and health do not load it."""
    from notedex.store import read

    assert not hasattr(read, "names_in_path_order") and not hasattr(read, "tag_spellings")
    vault, db = demo
    common = ("--vault", vault, "--db", db, "--no-refresh")
    for command in (("lookup", "cobra"), ("search", "cobra"), ("health", "--json")):
        assert "notedex.store.listing_rows" not in imported_modules(*command, *common), command
    assert "notedex.store.listing_rows" in imported_modules("scan", "--json", *common)

"""What a lookup process imports of notedex (issue 30's speed budget: each module is instructions
of every lookup, counted against interpreter start-up)."""

from __future__ import annotations

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

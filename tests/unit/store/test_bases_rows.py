"""store.bases.file_rows narrowed by folder and tag: the files under a folder (not its
neighbours that share a prefix) with a tag or one nested in it (not a longer tag), read through
the indexes on path and tag key, not every tag of the vault (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.store.bases import file_rows
from notedex.store.connect import connect_readonly
from tests.helpers import cli_json, write

TAGGED = {
    "A/in.md": "#project #common\n",
    "A/deep/nested.md": "#project/x\n",
    "A/other.md": "#projects #project0 #projectx\n",
    "A/none.md": "no tag\n",
    "A b/near.md": "#project\n",
    "A0/near.md": "#project\n",
    "A.md": "#project\n",
    "B/out.md": "#Project\n",
}


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("baserows")
    vault, db = root / "vault", root / "index.db"
    write(vault / ".obsidian" / "app.json", "{}")
    for rel, text in TAGGED.items():
        write(vault / rel, text)
    for k in range(300):  # many tags elsewhere
        tags = " ".join(f"#t{k}-{j}" for j in range(5))
        write(vault / "Z" / f"z{k:03}.md", f"{tags} #common\n")
    write(vault / "A" / "pic.png", "not a note")
    cli_json(vault, db, "status")  # builds the index
    return db


def _paths(db: Path, **narrowed: object) -> list[str]:
    conn = connect_readonly(db)
    try:
        return [r["path"] for r in file_rows(conn, **narrowed)]  # type: ignore[arg-type]
    finally:
        conn.close()


def test_a_folder_and_below_not_its_neighbours(db: Path) -> None:
    assert _paths(db, folders=("A",)) == [
        "A/deep/nested.md",
        "A/in.md",
        "A/none.md",
        "A/other.md",
        "A/pic.png",
    ]
    assert _paths(db, folders=("A/deep", "A b")) == ["A b/near.md", "A/deep/nested.md"]


def test_a_tag_and_its_nested_tags_not_longer_ones(db: Path) -> None:
    assert _paths(db, folders=("A",), tags=(("project",),)) == ["A/deep/nested.md", "A/in.md"]
    everywhere = _paths(db, tags=(("project",),))
    near = ["A b/near.md", "A.md", "A0/near.md", "B/out.md"]
    assert everywhere == sorted(["A/deep/nested.md", "A/in.md", *near])


def test_the_narrowed_rows_do_not_read_every_tag(db: Path) -> None:
    conn = connect_readonly(db)
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    try:
        conn.set_progress_handler(tick, 100)
        file_rows(conn, folders=("A",), tags=(("project",),))
        narrowed = steps
        steps = 0
        conn.execute("SELECT sum(position) FROM tags").fetchone()  # one pass over 1,800 tags
        conn.set_progress_handler(None, 100)
    finally:
        conn.close()
    assert narrowed < steps, (narrowed, steps)  # before: a pass over every tag and more


def test_a_folder_and_a_common_tag_read_the_folder_not_the_tag(db: Path) -> None:
    conn = connect_readonly(db)
    steps = 0

    def tick() -> int:
        nonlocal steps
        steps += 1
        return 0

    try:
        conn.set_progress_handler(tick, 100)
        assert [r["path"] for r in file_rows(conn, folders=("A",), tags=(("common",),))] == [
            "A/in.md"
        ]
        both = steps
        steps = 0
        assert len(file_rows(conn, tags=(("common",),))) == 301
        conn.set_progress_handler(None, 100)
    finally:
        conn.close()
    assert both * 3 < steps, (both, steps)  # before: 39 against 99 (the tag's 301 files)

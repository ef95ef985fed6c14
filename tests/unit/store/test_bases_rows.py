"""store.bases.file_rows narrowed by folder and tag: the files under a folder (not its
neighbours that share a prefix) with a tag or one nested in it (not a longer tag), read through
the indexes on path and tag key, not every tag of the vault (issue 32)."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.store.bases import file_rows
from notedex.store.connect import connect_readonly
from tests.indexcheck import indexed_vault, vm_steps

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
    files = dict(TAGGED)
    for k in range(300):  # many tags elsewhere
        tags = " ".join(f"#t{k}-{j}" for j in range(5))
        files[f"Z/z{k:03}.md"] = f"{tags} #common\n"
    files["A/pic.png"] = "not a note"
    return indexed_vault(tmp_path_factory, "baserows", files)


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
    try:
        narrowed = vm_steps(conn, lambda: file_rows(conn, folders=("A",), tags=(("project",),)))
        every = "SELECT sum(position) FROM tags"  # one pass over 1,800 tags
        steps = vm_steps(conn, lambda: conn.execute(every).fetchone())
    finally:
        conn.close()
    assert narrowed < steps, (narrowed, steps)  # before: a pass over every tag and more


def test_a_folder_and_a_common_tag_read_the_folder_not_the_tag(db: Path) -> None:
    conn = connect_readonly(db)
    try:
        both = vm_steps(conn, lambda: file_rows(conn, folders=("A",), tags=(("common",),)))
        steps = vm_steps(conn, lambda: file_rows(conn, tags=(("common",),)))
    finally:
        conn.close()
    assert _paths(db, folders=("A",), tags=(("common",),)) == ["A/in.md"]
    assert len(_paths(db, tags=(("common",),))) == 301
    assert both * 3 < steps, (both, steps)  # before: 39 against 99 (the tag's 301 files)

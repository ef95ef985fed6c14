"""No step of an ordinary apply touches the whole vault (issue 35): the work of one daemon-style
apply of a few notes (an edit of a note holding a broken link, a new note, a delete, a rename,
a move, new aliases, tags and headings, an attachment added and removed) is the same in a
vault of 1,000 notes as in one of 8,000.

The same handful of subject notes lie in two vaults that differ only in their filler: notes
that link each other, hold broken links, aliases, tags, headings and embeds, every tenth with
invalid frontmatter (a problem row) and every sixteenth in a folder Obsidian excludes, so each
table an apply might scan grows eightfold.
One writer per vault applies the same changes the daemon's way (``apply_paths``, with the
link-candidate index built first, as the daemon does at start). Two counts are compared:

- the SQLite virtual-machine steps of the applies' statements (``set_progress_handler``, each
  step put down to the statement last started, ``set_trace_callback``): a statement that
  reads every row of a table, or a Python loop over such a cursor, takes eight times more in
  the larger vault. A seek is one step at any depth of a B-tree. Left out: FTS5's own
  statements on its shadow tables (traced as ``-- ...``), whose incremental merges depend on
  how the index's segments happen to lie, not on the rows an apply reads;
- the peak of the memory Python allocates meanwhile (``tracemalloc``): a structure built
  from every key or row (such as a set of every filed key's hash) grows with the vault.

The bounds leave a little room for a statement plan that differs, and none for work that
grows with the vault's rows.
"""

from __future__ import annotations

import os
import tracemalloc
from collections.abc import Callable
from pathlib import Path

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store.writer import IndexWriter

SMALL, LARGE = 1_000, 8_000
STEP = 5  # the progress handler runs every STEP virtual-machine steps


def filler(vault: Path, notes: int) -> None:
    for i in range(notes):
        folder = vault / f"F{i % 16}"
        folder.mkdir(exist_ok=True)
        head = (
            "---\ntitle: [broken\n---\n"
            if i % 10 == 9
            else f"---\naliases: [Other name {i}]\ntags: [fill/t{i % 40}]\n---\n"
        )
        body = (
            f"# Filler {i}\n\nSee [[Filler {(i * 7 + 1) % notes}]] and "
            f"[[Filler {(i * 3 + 2) % notes}#Part {i % 5}]], [[Absent page {i}]], "
            f"[[Gone {i % 97} thing]] and ![[pic {i % 9}.png]].\n\n## Part {i % 5}\n\ntext {i}\n"
        )
        (folder / f"Filler {i}.md").write_text(head + body, encoding="utf-8")
    for i in range(9):
        (vault / f"pic {i}.png").write_bytes(b"png")
    (vault / ".obsidian").mkdir()
    (vault / ".obsidian" / "app.json").write_text('{"userIgnoreFilters": ["F15/"]}', "utf-8")


SUBJECT = {
    "Subject/Quokka harbour.md": "# Quokka harbour\n\n[[Quokka harbor]] [[Wombat ferry#Deck]]\n",
    "Subject/Wombat ferry.md": "# Wombat ferry\n\n## Deck\n\n[[Quokka harbour]] [[Numbat lost]]\n",
    "Subject/Numbat pier.md": "---\naliases: [Pier of numbats]\n---\n[[Wombat ferry]]\n",
}


def make_vault(base: Path, notes: int) -> tuple[Path, Path]:
    vault = base / "vault"
    vault.mkdir(parents=True)
    (vault / "Elsewhere").mkdir()
    for path, text in SUBJECT.items():
        (vault / path).parent.mkdir(exist_ok=True)
        (vault / path).write_text(text, encoding="utf-8")
    filler(vault, notes)
    db = base / "index.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
    return vault, db


def _bump(path: Path) -> None:
    """A new mtime for sure, whatever the clock's resolution."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


Change = Callable[[Path], list[str]]


def edit(vault: Path) -> list[str]:
    path = vault / "Subject/Quokka harbour.md"
    path.write_text(path.read_text(encoding="utf-8") + "more [[Quokka harbr]]\n", "utf-8")
    _bump(path)
    return ["Subject/Quokka harbour.md"]


def create(vault: Path) -> list[str]:
    (vault / "Subject/Platypus dock.md").write_text("[[Platypus dok]] [[Wombat ferry]]\n", "utf-8")
    return ["Subject/Platypus dock.md"]


def delete(vault: Path) -> list[str]:
    (vault / "Subject/Platypus dock.md").unlink()
    return ["Subject/Platypus dock.md"]


def rename(vault: Path) -> list[str]:
    os.rename(vault / "Subject/Wombat ferry.md", vault / "Subject/Wombat ferries.md")
    return ["Subject/Wombat ferry.md", "Subject/Wombat ferries.md"]


def move(vault: Path) -> list[str]:
    os.rename(vault / "Subject/Numbat pier.md", vault / "Elsewhere/Numbat pier.md")
    return ["Subject/Numbat pier.md", "Elsewhere/Numbat pier.md"]


def rename_fields(vault: Path) -> list[str]:
    """New aliases, tags, title and headings: the names others' links and fixes look up."""
    path = vault / "Elsewhere/Numbat pier.md"
    path.write_text(
        "---\naliases: [Numbat jetty, Numbat lost]\ntags: [fill/t1, subject]\n---\n"
        "# Pier\n\n## Deck\n\n[[Wombat ferries#Deck]] [[Quokka harbour#Nowhere]]\n",
        "utf-8",
    )
    _bump(path)
    return ["Elsewhere/Numbat pier.md"]


def attach(vault: Path) -> list[str]:
    (vault / "Subject/chart.png").write_bytes(b"png")
    return ["Subject/chart.png"]


def detach(vault: Path) -> list[str]:
    (vault / "Subject/chart.png").unlink()
    return ["Subject/chart.png"]


CHANGES: list[tuple[str, Change]] = [
    ("edit", edit),
    ("create", create),
    ("delete", delete),
    ("rename", rename),
    ("move", move),
    ("fields", rename_fields),
    ("attach", attach),
    ("detach", detach),
]


def costs(base: Path, notes: int) -> dict[str, tuple[int, int]]:
    """(VM steps, peak bytes allocated) of each change's apply, in a vault with ``notes``
    filler notes."""
    vault, db = make_vault(base, notes)
    out: dict[str, tuple[int, int]] = {}
    ticks = [0]
    fts_own = [False]  # the statement running is one of FTS5's own

    def started(sql: str) -> None:
        fts_own[0] = sql.startswith("-- ")

    def tick() -> int:
        ticks[0] += not fts_own[0]
        return 0

    with IndexWriter(db, vault, workers=1) as writer:
        warm = vault / "Subject/Numbat pier.md"  # statements prepared, temp tables made
        warm.write_text(warm.read_text(encoding="utf-8") + "\n", "utf-8")
        _bump(warm)
        apply_paths(writer, ["Subject/Numbat pier.md"])
        for name, change in CHANGES:
            hints = change(vault)
            ticks[0] = 0
            writer.conn.set_trace_callback(started)
            writer.conn.set_progress_handler(tick, STEP)
            tracemalloc.start()
            try:
                report = apply_paths(writer, hints)
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
                writer.conn.set_progress_handler(None, 0)
                writer.conn.set_trace_callback(None)
            assert report.added + report.changed + report.removed + report.moved, name
            out[name] = (ticks[0] * STEP, peak)
    return out


@pytest.mark.slow
def test_an_ordinary_apply_costs_the_same_at_any_vault_size(tmp_path: Path) -> None:
    small = costs(tmp_path / "small", SMALL)
    large = costs(tmp_path / "large", LARGE)
    grown = {
        name: (small[name], large[name])
        for name in small
        # A full read of any table of the filler adds thousands of steps (8,000 rows and
        # more, a few steps each).
        if large[name][0] > small[name][0] * 1.1 + 500
        # A set or list of every key, path or row: tens of bytes each, 8,000 of them and more.
        or large[name][1] > small[name][1] * 1.15 + 64 * 1024
    }
    assert not grown, f"(steps, peak bytes) at {SMALL:,} against {LARGE:,} notes: {grown}"

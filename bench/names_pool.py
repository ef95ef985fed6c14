"""Lookup's one-term title pool ranked over a names-only FTS5 table: cost and pages (issue 11).

    python bench/names_pool.py bench/out/ranking-v100k.db --words 50

A measurement from before schema 19, which made the names table lookup's tier-2 ranking (an
index of schema 19 has its own ``name_fts``, external content; the copy's replaces it, so both
schemas measure the same). The index is copied (the
SQLite backup API) beside itself as ``<db>.names-pool``, and the copy gains ``name_fts``
(title and aliases, note_fts's tokenizer), filled from ``note_fts_text``. For the keyword
``--keyword`` and for each of the ``--words`` most frequent title words, the statement that
ranks lookup's title pool (every note with the word in its title, by note_fts's BM25: title,
tags and aliases, weighted 10, 6, 4) is timed against the same ranking over ``name_fts``
(title and aliases, weighted 10, 4), and their top-10 pages are compared. The names table reads
a much shorter doclist (only title and alias hits, no probe of every tag hit), but its BM25 no
longer counts the tags in a row's length: the pages show what that changes, and the tags per
top-10 note (against the whole pool's) and the top-10 notes with the word also a tag show how.
"""

from __future__ import annotations

import argparse
import collections
import re
import sqlite3
import statistics
import sys
import time
from pathlib import Path

from notedex.store.database import add_sql_functions
from notedex.store.schema import TOKENIZER
from notedex.vault.text import fts_phrase

_WORD = re.compile(r"[a-z]{3,}")

CURRENT = """
SELECT rowid FROM note_fts WHERE note_fts MATCH ?1
  AND +rowid IN (SELECT rowid FROM note_fts WHERE note_fts MATCH ?2)
ORDER BY bm25(note_fts, 10.0, 6.0, 4.0), rowid LIMIT 10
"""
"""Today's pool ranking (store/lookup.py ``_ranked_titled``, less its tier and field columns)."""

NAMES = """
SELECT rowid FROM name_fts WHERE name_fts MATCH ?1
  AND +rowid IN (SELECT rowid FROM name_fts WHERE name_fts MATCH ?2)
ORDER BY bm25(name_fts, 10.0, 4.0), rowid LIMIT 10
"""


def names_copy(db: Path) -> Path:
    """A copy of ``db`` with ``name_fts``, made once."""
    copy = db.with_name(db.name + ".names-pool")
    if copy.exists():
        return copy
    source = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    target = sqlite3.connect(copy)
    source.backup(target)
    source.close()
    add_sql_functions(target)  # the writer's nx_segment, which note_fts_text calls
    target.execute("DROP TABLE IF EXISTS name_fts")  # schema 19's own
    target.execute(
        f"CREATE VIRTUAL TABLE name_fts USING fts5(title, aliases, tokenize = '{TOKENIZER}')"
    )
    target.execute(
        "INSERT INTO name_fts(rowid, title, aliases) "
        "SELECT file_id, title, aliases FROM note_fts_text"
    )
    target.execute("INSERT INTO name_fts(name_fts) VALUES ('optimize')")
    target.commit()
    target.close()
    return copy


def title_words(conn: sqlite3.Connection, count: int) -> list[str]:
    """The ``count`` most frequent title words (3+ ASCII letters), by notes."""
    words: collections.Counter[str] = collections.Counter()
    for (title,) in conn.execute("SELECT coalesce(frontmatter_title, stem) FROM notes"):
        words.update(set(_WORD.findall(str(title or "").lower())))
    return [word for word, _ in words.most_common(count)]


def cpu_ms(conn: sqlite3.Connection, sql: str, args: list[str], runs: int) -> float:
    """The median CPU time of ``sql`` in ms (warm: one run first)."""
    conn.execute(sql, args).fetchall()
    times = []
    for _ in range(runs):
        started = time.process_time()
        conn.execute(sql, args).fetchall()
        times.append(time.process_time() - started)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("db", type=Path, help="an index built by this checkout")
    parser.add_argument("--keyword", default="python")
    parser.add_argument("--words", type=int, default=50)
    parser.add_argument("--runs", type=int, default=11)
    args = parser.parse_args(argv)
    conn = sqlite3.connect(f"file:{names_copy(args.db)}?mode=ro", uri=True)
    words = [args.keyword, *(w for w in title_words(conn, args.words) if w != args.keyword)]
    tag_counts = dict(conn.execute("SELECT file_id, count(*) FROM tags GROUP BY file_id"))
    differ = 0
    tags: dict[str, list[float]] = {"note_fts": [], "name_fts": [], "pool": []}
    tagged: dict[str, list[int]] = {"note_fts": [], "name_fts": []}
    for word in words:
        phrase = fts_phrase(word)
        if phrase is None:
            continue
        title = f"title : {phrase}"
        current_args = [f"{{title tags aliases}} : {phrase}", title]
        names_args = [f"{{title aliases}} : {phrase}", title]
        current = [r[0] for r in conn.execute(CURRENT, current_args)]
        names = [r[0] for r in conn.execute(NAMES, names_args)]
        differ += current != names
        pool = [
            r[0] for r in conn.execute("SELECT rowid FROM note_fts WHERE note_fts MATCH ?", [title])
        ]
        as_tag = {
            r[0]
            for r in conn.execute(
                "SELECT rowid FROM note_fts WHERE note_fts MATCH ?",
                [f"({title}) AND (tags : {phrase})"],
            )
        }
        for side, ids in (("note_fts", current), ("name_fts", names), ("pool", pool)):
            tags[side].append(statistics.mean(tag_counts.get(i, 0) for i in ids) if ids else 0)
        for side, ids in (("note_fts", current), ("name_fts", names)):
            tagged[side].append(sum(i in as_tag for i in ids))
        if word == args.keyword:
            print(
                f"{word}: note_fts {cpu_ms(conn, CURRENT, current_args, args.runs):.2f} ms, "
                f"name_fts {cpu_ms(conn, NAMES, names_args, args.runs):.2f} ms (CPU, warm, "
                f"medians of {args.runs}); top 10 shared: {len(set(current) & set(names))}"
            )
    print(f"{differ} of {len(words)} top-10 pages differ")
    mean = {side: statistics.mean(values) for side, values in tags.items()}
    print(
        f"tags per top-10 note: note_fts {mean['note_fts']:.2f}, name_fts "
        f"{mean['name_fts']:.2f}, the whole pool {mean['pool']:.2f}"
    )
    with_tag = {side: statistics.mean(values) for side, values in tagged.items()}
    print(
        f"top-10 notes with the word also a tag: note_fts {with_tag['note_fts']:.2f}, "
        f"name_fts {with_tag['name_fts']:.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

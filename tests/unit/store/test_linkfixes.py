"""store/linkfixes.py: the suggestions (SEMANTICS 8.3) that a change elsewhere can change are
computed again by their keys (``refix``), and a dirty note's broken links that stay as they
were keep theirs; after every step the index equals a fresh full index."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from notedex.indexing.reconcile import apply_paths, reconcile
from notedex.store import linkfixes
from notedex.store.writer import IndexWriter
from tests.helpers import dump_index, fresh_full_index, write
from tests.indexcheck import age, fts_sound_after, make_vault

__all__ = ["fts_sound_after"]  # autouse: FTS integrity-check after every test


@pytest.fixture
def writer(tmp_path: Path) -> Iterator[IndexWriter]:
    vault = make_vault(tmp_path / "v", {})
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as w:
        yield w


def _fixes(writer: IndexWriter) -> dict[str, tuple[str | None, str | None]]:
    conn = sqlite3.connect(f"file:{writer.db_path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT text, suggestion, reason FROM broken_links").fetchall()
    finally:
        conn.close()
    return {text: (suggestion, reason) for text, suggestion, reason in rows}


def _same_as_fresh(writer: IndexWriter) -> None:
    assert dump_index(writer.db_path) == fresh_full_index(writer.vault, writer.db_path.parent)


@pytest.mark.slow
def test_links_broken_and_resolved_by_a_folder_rename(writer: IndexWriter) -> None:
    """[[f/a]] breaks and [[g/b]] resolves when f becomes g; the note's other broken link, a
    typo that stays as it was, keeps its suggestion; the daemon's per-file hints too."""
    vault = writer.vault
    write(vault / "f" / "a.md", "# a\n")
    write(vault / "f" / "Long Name Here.md", "# long\n")
    write(vault / "f" / "b.md", "# b\n")
    write(vault / "src.md", "[[f/a]] [[g/b]] [[Long Name Hare]] [[g/nothing]]\n")
    age(vault)
    reconcile(writer)
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Long Name Hare]]"] == ("[[Long Name Here]]", "typo")
    assert "[[f/a]]" not in _fixes(writer)
    os.rename(vault / "f", vault / "g")
    hints = ["f", "g", "f/a.md", "g/a.md", "f/b.md", "g/b.md"]
    report = apply_paths(writer, hints)
    assert (report.added, report.removed, report.moved) == (0, 0, 3)
    fixes = _fixes(writer)
    assert fixes["[[f/a]]"] == ("[[a]]", "folder")
    assert "[[g/b]]" not in fixes
    assert fixes["[[Long Name Hare]]"] == ("[[Long Name Here]]", "typo")
    _same_as_fresh(writer)
    os.rename(vault / "g", vault / "f")
    apply_paths(writer, ["g", "f"])
    _same_as_fresh(writer)


@pytest.mark.slow
def test_an_alias_suggestion_follows_its_owner(writer: IndexWriter) -> None:
    """The note with [[Zed]] is never written again: its suggestion changes when the alias
    owner is moved next to a note of its name, loses the alias, gains it back, is deleted."""
    vault = writer.vault
    write(vault / "o" / "Owner.md", "---\naliases: [Zed]\n---\n# owner\n")
    write(vault / "asks.md", "[[Zed]] [[Zed|shown]]\n")
    age(vault)
    reconcile(writer)
    assert _fixes(writer)["[[Zed]]"] == ("[[Owner|Zed]]", "alias")
    steps = [
        lambda: write(vault / "p" / "Owner.md", "# the other owner\n"),
        lambda: os.rename(vault / "o", vault / "q"),
        lambda: write(vault / "q" / "Owner.md", "# owner, no alias now\n"),
        lambda: write(vault / "q" / "Owner.md", "---\naliases: [zed]\n---\n# back\n"),
        lambda: (vault / "q" / "Owner.md").unlink(),
    ]
    for step in steps:
        step()
        age(vault)
        reconcile(writer)
        _same_as_fresh(writer)
    assert _fixes(writer)["[[Zed]]"] == (None, None)


@pytest.mark.slow
def test_a_typo_and_a_folder_suggestion_follow_names_elsewhere(writer: IndexWriter) -> None:
    """A note created, moved and deleted far from the source changes its suggestions."""
    vault = writer.vault
    write(vault / "src.md", "[[Garden Plns]] [[x/Garden Plans]]\n")
    age(vault)
    reconcile(writer)
    assert _fixes(writer)["[[Garden Plns]]"] == (None, None)
    steps = [
        lambda: write(vault / "a" / "Garden Plans.md", "# plans\n"),
        lambda: write(vault / "b" / "Garden Plans.md", "# more plans\n"),
        lambda: os.rename(vault / "a", vault / "c"),
        lambda: (vault / "b" / "Garden Plans.md").unlink(),
        lambda: (vault / "c" / "Garden Plans.md").unlink(),
    ]
    seen = set()
    for step in steps:
        step()
        age(vault)
        reconcile(writer)
        _same_as_fresh(writer)
        seen.add(_fixes(writer)["[[Garden Plns]]"])
    assert ("[[Garden Plans]]", "typo") in seen
    assert _fixes(writer)["[[Garden Plns]]"] == (None, None)


def test_no_pending_suggestion_is_ever_committed(writer: IndexWriter) -> None:
    """``reason = '?'`` and the refix keys live inside a transaction: none is ever committed."""
    vault = writer.vault
    write(vault / "src.md", "[[gone]] [[f/n]]\n")
    write(vault / "f" / "n.md", "# n\n")
    age(vault)
    reconcile(writer)
    os.rename(vault / "f", vault / "g")
    reconcile(writer)
    conn = sqlite3.connect(f"file:{writer.db_path}?mode=ro", uri=True)
    try:
        assert conn.execute("SELECT count(*) FROM broken_links WHERE reason = '?'").fetchone() == (
            0,
        )
    finally:
        conn.close()
    _same_as_fresh(writer)


@pytest.mark.parametrize("bulk", [0, 10**9])
def test_typo_fixes_are_the_same_by_stems_or_by_the_key_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bulk: int
) -> None:
    """Past ``TYPO_BULK_KEYS`` look-ups a refresh intersects with every stem: the same fixes."""
    monkeypatch.setattr(linkfixes, "TYPO_BULK_KEYS", bulk)
    files = {f"d{i % 3}/Topic Number {i}.md": f"# t{i}\n" for i in range(30)}
    files["d9/Topic Number 1.md"] = "# a second one\n"
    files["src.md"] = "".join(f"[[Topic Numbr {i}]] [[Topik Number {i}]]\n" for i in range(35))
    vault = make_vault(tmp_path / "v", files)
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        fixes = _fixes(writer)
    assert fixes["[[Topic Numbr 1]]"] == ("[[d1/Topic Number 1]]", "typo")
    assert fixes["[[Topik Number 34]]"] == (None, None)
    assert sum(1 for _, reason in fixes.values() if reason == "typo") == 60
    assert dump_index(tmp_path / "i.db") == fresh_full_index(vault, tmp_path)


def test_a_renamed_fix_follows_a_file_that_comes_to_share_its_name(writer: IndexWriter) -> None:
    """[[Old]] suggests where Old went; a second file of that name makes it a path."""
    vault = writer.vault
    write(vault / "a" / "Old.md", "# the note\n")
    write(vault / "src.md", "[[Old]]\n")
    age(vault)
    reconcile(writer)
    os.rename(vault / "a" / "Old.md", vault / "a" / "New.md")
    reconcile(writer)
    assert _fixes(writer)["[[Old]]"] == ("[[New]]", "renamed")
    write(vault / "b" / "New.md", "# another of that name\n")
    age(vault)
    reconcile(writer)
    assert _fixes(writer)["[[Old]]"] == ("[[a/New]]", "renamed")
    (vault / "b" / "New.md").unlink()
    reconcile(writer)
    assert _fixes(writer)["[[Old]]"] == ("[[New]]", "renamed")


@pytest.mark.slow
@pytest.mark.parametrize("bulk", [False, True])
def test_typo_fixes_follow_folder_renames_that_keep_the_stems(
    writer: IndexWriter, bulk: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A move that keeps a note's stem looks only at the keys with a `typo` fix
    (``typo_neighbours_moved``): a typo whose first neighbour by path changes, or whose shared
    name's folder changes, gets its new fix; one whose neighbour is unique keeps it; a key
    with no neighbour stays without; a note renamed in the same batch gives and takes its own
    neighbours. Each step equals a fresh full index, nothing parsed again. ``bulk``: the keys
    compared by their deletes (as with many `typo` fixes), not by their variants."""
    if bulk:
        monkeypatch.setattr(linkfixes, "TYPO_BULK_KEYS", 1)
    vault = writer.vault
    write(vault / "alpha" / "Note.md", "alphaNote.md\n")
    write(vault / "beta" / "Note.md", "betaNote.md\n")
    write(vault / "d" / "Solos.md", "dSolos.md\n")
    write(vault / "d" / "Mark.md", "dMark.md\n")
    write(vault / "src.md", "[[Notez]] [[x/Notex]] [[Soloss]] [[Nothing]] [[Marks]] [[Spark]]\n")
    age(vault)
    reconcile(writer)
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Notez]]"] == ("[[alpha/Note]]", "typo")
    assert _fixes(writer)["[[x/Notex]]"] == ("[[alpha/Note]]", "typo")

    def rename(*pairs: tuple[str, str]) -> None:
        for old, new in pairs:
            os.rename(vault / old, vault / new)
        parsed = writer.parsed
        report = apply_paths(writer, [path for pair in pairs for path in pair])
        assert report.moved > 0 and writer.parsed == parsed
        _same_as_fresh(writer)

    rename(("alpha", "zz"))  # the first neighbour by path is now beta/Note
    assert _fixes(writer)["[[Notez]]"] == ("[[beta/Note]]", "typo")
    rename(("beta", "a0"))  # and now a0/Note, the folder of a shared name
    assert _fixes(writer)["[[x/Notex]]"] == ("[[a0/Note]]", "typo")
    rename(("d", "e"))  # unique names: the same fixes
    assert _fixes(writer)["[[Soloss]]"] == ("[[Solos]]", "typo")
    assert _fixes(writer)["[[Nothing]]"] == (None, None)
    # a stem that changes, in the same batch as a folder rename: Marks loses Mark, Spark gains
    # Park and Spar (Park comes first by path)
    os.rename(vault / "zz", vault / "alpha")
    os.rename(vault / "e" / "Mark.md", vault / "e" / "Park.md")
    write(vault / "e" / "Spar.md", "eSpar.md\n")
    report = apply_paths(writer, ["zz", "alpha", "e/Mark.md", "e/Park.md", "e/Spar.md"])
    assert (report.added, report.moved) == (1, 2)
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Marks]]"] == (None, None)
    assert _fixes(writer)["[[Spark]]"] == ("[[Park]]", "typo")
    assert _fixes(writer)["[[Notez]]"] == ("[[a0/Note]]", "typo")


def _one_edits(word: str, extra: str) -> set[str]:
    """Every string one edit from ``word``: dropped, swapped, and added or replaced with a
    character of ``word`` or ``extra``."""
    chars = set(word) | set(extra)
    out = {word[:i] + word[i + 1 :] for i in range(len(word))}
    out |= {word[:i] + word[i + 1] + word[i] + word[i + 2 :] for i in range(len(word) - 1)}
    for i in range(len(word) + 1):
        out |= {word[:i] + c + word[i:] for c in chars}
        out |= {word[:i] + c + word[i + 1 :] for c in chars if i < len(word)}
    return out - {word}


def test_the_broken_keys_near_a_name_by_probes_are_those_of_a_full_read(
    writer: IndexWriter,
) -> None:
    """``_broken_keys_near`` (two index ranges a name: its first half, its end) finds exactly
    the broken keys the read of every broken key finds (``_one_edit_from_any``): one edit at
    every position of every kind, with and without ``.md``, CJK, accents, the highest code
    point, names of four characters and keys of five (TYPO_MIN_LENGTH), and keys two edits
    away."""
    stems = ["quokka", "abcd", "abc", "été x", "数据笔记", "zz\U0010ffff\U0010ffff", "a\ud7ffb"]
    keys = {"quokka harbour", "other", "abc.md", "abcde"}
    for stem in stems:
        for edited in _one_edits(stem, "x\U0010ffff中"):
            keys |= {edited, edited + ".md", edited + "x"}
    conn = writer.conn
    conn.execute("BEGIN")
    try:
        conn.executemany(
            "INSERT INTO links(source_id, seq, kind, linkpath, line, col, name_key) "
            "VALUES (1, ?, 0, ?, 1, 1, ?)",
            [(seq, key, key) for seq, key in enumerate(sorted(keys))],
        )
        near = linkfixes._broken_keys_near(conn, set(stems))
    finally:
        conn.execute("ROLLBACK")
    names: dict[str, set[str]] = {}  # as typo_neighbours files them for the full read
    for stem in stems:
        if len(stem) + 1 >= linkfixes.TYPO_MIN_LENGTH:
            for variant in linkfixes._deletes(stem):
                names.setdefault(variant, set()).add(stem)
    expected = {
        key for key in keys if linkfixes._one_edit_from_any(linkfixes._typo_key(key), names)
    }
    assert near == expected
    assert "abcde" in expected and "quokka harbour" not in expected and len(expected) > 400


def test_after_is_the_least_string_past_a_prefix() -> None:
    after = linkfixes._after
    assert after("ab") == "ac"
    assert after("a\ud7ff") == "a\ue000"
    assert after("a\U0010ffff") == "b"
    assert after("\U0010ffff") is None


@pytest.mark.parametrize("probe_names", [0, linkfixes.PROBE_NAMES])
def test_typo_neighbours_by_probes_or_by_a_full_read(
    writer: IndexWriter, monkeypatch: pytest.MonkeyPatch, probe_names: int
) -> None:
    """A note created, renamed or deleted refixes the broken links one edit from its name,
    whether they are found by index probes or by reading every broken key (``PROBE_NAMES``):
    each step equals a fresh full index."""
    monkeypatch.setattr(linkfixes, "PROBE_NAMES", probe_names)
    vault = writer.vault
    write(vault / "src.md", "[[Harbr]] [[harbours.md]] [[Xarbour]] [[Harbor]] [[arbour]]\n")
    write(vault / "other.md", "[[Harbor]]\n")
    age(vault)
    reconcile(writer)
    assert _fixes(writer)["[[Harbor]]"] == (None, None)
    write(vault / "d" / "Harbour.md", "# h\n")
    age(vault / "d")
    apply_paths(writer, ["d/Harbour.md"])
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Harbor]]"] == ("[[Harbour]]", "typo")
    assert _fixes(writer)["[[harbours.md]]"] == ("[[Harbour]]", "typo")
    os.rename(vault / "d" / "Harbour.md", vault / "d" / "Harbr.md")
    apply_paths(writer, ["d/Harbour.md", "d/Harbr.md"])
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Harbor]]"] == ("[[Harbr]]", "typo")
    assert "[[Harbr]]" not in _fixes(writer)  # it resolves now
    (vault / "d" / "Harbr.md").unlink()
    apply_paths(writer, ["d/Harbr.md"])
    _same_as_fresh(writer)
    assert _fixes(writer)["[[Harbor]]"] == (None, None)


def test_near_stems_takes_the_paths_as_one_string_and_keys_sharing_deletes() -> None:
    """Issue 35: the helper's `typo` search gets every note's path as one NUL-separated
    UTF-8 string, and files the keys' deletes by hash; the answer is each key's one-edit
    stems."""
    from notedex.vault.fixes import is_one_edit_variant
    from notedex.vault.resolve import file_stem_key

    keys = {"kafka notes", "kafke notes", "kafka note", "alpha beta", "zzzz zzzz"}
    paths = [
        "a/Kafka notes.md",
        "b/kafkanotes.md",
        "kafka notez.md",
        "Alpha bet.md",
        "line\nbreak kafka notes.md",  # a newline is a file name's character
        "c/Kafka Note.md",
        "d/Kafka nötes 🙂.md",
        "short.md",
    ]
    expected: dict[str, set[str]] = {}
    for key in keys:
        for path in paths:
            stem = file_stem_key(path)
            if stem is not None and is_one_edit_variant(key, stem):
                expected.setdefault(key, set()).add(stem)
    assert expected["kafka notes"] >= {"kafka notez", "kafkanotes"}
    assert linkfixes.near_stems(keys, "\0".join(paths).encode()) == expected
    assert linkfixes.near_stems(keys, paths) == expected

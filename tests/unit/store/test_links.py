"""store/links.py: the link candidates' look-ups."""

from __future__ import annotations

from pathlib import Path

import pytest

from notedex.indexing.reconcile import reconcile
from notedex.store.writer import IndexWriter
from tests.helpers import calls_to, write
from tests.indexcheck import make_vault


def test_files_named_at_once_are_the_files_named_one_by_one(tmp_path: Path) -> None:
    """``files_named_many`` (a refresh's suggestions, read in one statement) gives each key
    what ``files_named`` gives it: notes by name and stem, attachments, case, no file."""
    vault = make_vault(tmp_path / "v", {})
    for path in ("a/Dup.md", "b/dup.md", "c/Dup.md", "pic.png", "x/pic.png", "Solo.md", "raw"):
        write(vault / path, "# x\n" if path.endswith(".md") else "bytes")
    keys = ["dup", "dup.md", "pic.png", "solo", "solo.md", "raw", "nothing", "pic"]
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        at_once = writer.links.files_named_many(keys)
        assert at_once == {key: writer.links.files_named(key) for key in keys}
        assert at_once["dup"] == ["a/Dup.md", "b/dup.md", "c/Dup.md"]
        assert at_once["nothing"] == []


def _one_note_moves_steps(tmp_path: Path, others: int) -> int:
    """VM steps of a one-shot writer (a new IndexWriter, as `notedex mv` opens) applying one
    note moved and one edited to link elsewhere, in a vault of ``others`` more notes."""
    from notedex.indexing.reconcile import apply_paths
    from tests.indexcheck import vm_steps

    vault = make_vault(tmp_path / "v", {})
    write(vault / "a" / "S.md", "# S\n[[T]] [[b/T]]\n")
    write(vault / "b" / "T.md", "# T\n")
    write(vault / "L.md", "# L\n[[S]]\n")
    for i in range(others):
        write(vault / f"f{i % 10}" / f"Other {i}.md", f"# Other {i}\n[[Other {i + 1}]]\n")
    db = tmp_path / "i.db"
    with IndexWriter(db, vault, workers=1) as writer:
        reconcile(writer)
    (vault / "c").mkdir()
    (vault / "a" / "S.md").rename(vault / "c" / "S.md")
    write(vault / "L.md", "# L\n[[S]] [[Other 3]]\n")
    with IndexWriter(db, vault, workers=1) as writer:
        return vm_steps(writer.conn, lambda: apply_paths(writer, ["a/S.md", "c/S.md", "L.md"]))


def test_a_one_shot_apply_does_not_key_every_file_of_the_vault(tmp_path: Path) -> None:
    """Issue 33/35: a one-shot writer finds the files of the names a few changed notes touch
    by the index files_name_key, a probe per name: it once read and keyed every file of the
    vault (0.55 s of a folder `mv` at 100k notes). Ten times the notes, about the same work."""
    small = _one_note_moves_steps(tmp_path / "small", 40)
    large = _one_note_moves_steps(tmp_path / "large", 400)
    assert large < small * 1.5, (small, large)


def _held_after_typo_saves(tmp_path: Path, others: int) -> int:
    """Bytes a long-lived writer (the daemon's) still holds after three saves of a note whose
    broken link asks for a `typo` fix, in a vault of ``others`` more notes."""
    import tracemalloc

    from notedex.indexing.reconcile import apply_paths

    vault = make_vault(tmp_path / "v", {})
    write(vault / "Quarterly planning.md", "# Q\n")
    for i in range(others):
        write(vault / f"f{i % 10}" / f"Other note {i}.md", f"# Other {i}\n[[Other note {i + 1}]]\n")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:  # the daemon's, started
        tracemalloc.start()
        try:
            for text in (
                "[[Quarterly planing]]\n",
                "[[Quartely planning]]\n",
                "[[Quarterly plannin]]\n",
            ):
                write(vault / "src.md", "# src\n" + text)
                apply_paths(writer, ["src.md"])
            held = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        fix = writer.conn.execute(
            "SELECT suggestion, reason FROM broken_links WHERE source = 'src.md'"
        ).fetchall()
    assert fix == [("[[Quarterly planning]]", "typo")], fix
    return held


def test_a_writer_holds_nothing_per_file_of_the_vault(tmp_path: Path) -> None:
    """Issue 35: the daemon's writer built a key index over every file when it started (or at
    its first `typo` fix) and kept it: 16 bytes a key, 32 MB and seconds to build at 1M notes.
    The files of a name are probed by the index files_name_key instead: what the writer holds
    after a few saves does not grow with the vault (40 bytes a note would show: 60 KB)."""
    small = _held_after_typo_saves(tmp_path / "small", 20)
    large = _held_after_typo_saves(tmp_path / "large", 1500)
    assert large < small + 16 * 1024, (small, large)


def test_loading_candidates_reads_and_keys_each_file_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35 (build35b): a batch's candidates are found by one probe of files_name_key,
    each file's path keyed once, and resolve as before. They were read twice (by name, then
    again by id) and keyed twice (to filter, then by ``Resolver.add``): a third of the
    candidates' step, itself a third of a cold build's writer."""
    from notedex.store import links as links_module

    vault = make_vault(tmp_path / "v", {})
    for path in ("a/Dup.md", "b/dup.md", "pic.png", "Solo.md", "Other.md", "c/dup"):
        write(vault / path, "# x\n" if path.endswith(".md") else "bytes")
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        keyed = calls_to(monkeypatch, links_module, "file_keys")
        probed = calls_to(monkeypatch, links_module, "key_crc")
        statements: list[str] = []
        writer.conn.set_trace_callback(statements.append)
        writer.links.load_candidates(["dup", "pic.png", "solo", "nothing"])
        writer.conn.set_trace_callback(None)
        assert len(statements) == 1, statements
        # A key without an extension is looked up by stem alone: the file named `dup` is no
        # candidate of [[dup]], its name not probed, its path not keyed.
        assert sorted(probed) == ["dup.md", "nothing.md", "pic.png", "pic.png.md", "solo.md"]
        assert sorted(keyed) == ["Solo.md", "a/Dup.md", "b/dup.md", "pic.png"]
        ids = writer.links.ids_of(["solo", "dup", "pic.png"])
        ids["dup"] = [file_id for file_id in ids["dup"] if file_id != min(ids["dup"])]
        assert writer.links.resolve("Solo", "x.md") == (ids["solo"][0], False)
        assert writer.links.resolve("pic.png", "x.md") == (ids["pic.png"][0], False)
        assert writer.links.resolve("dup", "a/x.md") == (min(ids["dup"]), True)
        assert writer.links.resolve("Other", "x.md") == (None, False)


def test_the_names_a_batch_probes_are_hashed_in_the_parse_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 35 (build35d): each note's links' lookup keys and the hashes of the names they
    probe come from the parse worker (``noterows.probes``), so loading a batch's candidates
    hashes no name on the writer's thread, and resolves as a load that hashes them."""
    from notedex.indexing.pool import parse_chunk
    from notedex.store import links as links_module
    from notedex.vault.resolve import candidate_names, key_crc, lookup_key

    vault = make_vault(tmp_path / "v", {})
    for path in ("a/Dup.md", "b/dup.md", "pic.png", "Solo.md", "v1.2.md"):
        write(vault / path, "# x\n" if path.endswith(".md") else "bytes")
    linked = ["Solo", "x/dup", "pic.png", "v1.2", "Nothing", "SOLO"]
    note = vault / "n.md"
    write(note, " ".join(f"[[{target}]]" for target in linked) + " [[#self]]\n")
    [(_, _, derived)] = parse_chunk([(str(note), "n.md")], 10_000, False)
    keys, crcs = derived[4][7]
    assert keys == tuple(dict.fromkeys(lookup_key(target) for target in linked))
    assert set(crcs) == {key_crc(name) for key in keys for name in candidate_names(key)}
    with IndexWriter(tmp_path / "i.db", vault, workers=1) as writer:
        reconcile(writer)
        writer.links.load_candidates(keys)
        hashed_here = [writer.links.resolve(target, "n.md") for target in linked]

        def no_hashing(name: str) -> int:
            raise AssertionError(f"{name} hashed on the writer's thread")

        monkeypatch.setattr(links_module, "key_crc", no_hashing)
        writer.links.load_candidates(keys, crcs)
        assert [writer.links.resolve(target, "n.md") for target in linked] == hashed_here
        assert sum(target is not None for target, _ in hashed_here) == 4  # not x/dup (7.7)
